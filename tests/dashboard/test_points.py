"""A points system's page edits the system and, as inline rows, its triggers, levels and boosts,
each row through the configuration function the admin API uses; archiving is confirmed with
counts; the award ledger and totals are shown, never written."""

import datetime as dt
import re
from decimal import Decimal
from typing import Any

import pytest
from django import forms
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.accounts.models import ConfigChange, Tenant
from apps.metrics.models import Metric
from apps.pipeline.dashboard_user.rewards import RECENT_AWARDS
from apps.points import configuration
from apps.points.admin import AttributePairsField
from apps.points.choices import SystemStatus, TriggerStatus
from apps.points.domain import (
    PointsBoostSettings,
    PointsLevelSettings,
    PointsSystemSettings,
    PointsTriggerSettings,
)
from apps.points.models import (
    PointsAward,
    PointsBoost,
    PointsLevel,
    PointsSystem,
    PointsTotal,
    PointsTrigger,
    PointsTriggerMark,
)
from apps.users.choices import AttributeType
from apps.users.models import Attribute, EndUser
from tests.dashboard.conftest import admin_url, message_texts, org_staff, page_main, switch_tenant
from tests.factories import AttributeFactory, EndUserFactory, MetricFactory, bump

CONFIG_MODELS = [PointsSystem, PointsLevel, PointsBoost, PointsTrigger]
LEDGER_MODELS = [PointsAward, PointsTotal]


def version_of(tenant: Tenant) -> int:
    return Tenant.objects.get(pk=tenant.pk).config_version


@pytest.fixture
def plan(tenant: Tenant) -> Attribute:
    return AttributeFactory(tenant=tenant, key="plan", type=AttributeType.USER)


@pytest.fixture
def source(tenant: Tenant) -> Attribute:
    attribute = AttributeFactory(tenant=tenant, key="source", type=AttributeType.EVENT)
    bump(tenant)
    return attribute


@pytest.fixture
def system(tenant: Tenant, metric: Metric, plan: Attribute) -> PointsSystem:
    """XP, made by the configuration functions: two levels, a boost and a metric trigger."""
    created, _ = configuration.points_system_create(
        tenant,
        PointsSystemSettings(key="xp", name="XP"),
        levels=[
            PointsLevelSettings(key="bronze", name="Bronze", points=10),
            PointsLevelSettings(key="silver", name="Silver", points=100),
        ],
        boosts=[
            PointsBoostSettings(
                name="Pro week",
                start=dt.date(2026, 3, 1),
                multiplier=Decimal(2),
                user_attributes=[{"attributeId": str(plan.public_id), "attributeValue": "pro"}],
            )
        ],
        triggers=[
            PointsTriggerSettings(
                type="metric",
                points=5,
                status="active",
                metric_id=str(metric.public_id),
                metric_threshold=1,
            )
        ],
    )
    return created


def record_awards(
    tenant: Tenant, user: EndUser, system: PointsSystem, count: int, first: int = 1
) -> None:
    """Awards and the total written directly, one a minute: the dashboard only reads them."""
    start = timezone.now() - dt.timedelta(days=1)
    trigger = system.triggers.first()
    PointsAward.objects.bulk_create(
        PointsAward(
            tenant=tenant,
            user=user,
            system=system,
            trigger=trigger,
            trigger_snapshot={"id": "t", "type": "metric", "points": 5},
            awarded=first + i,
            total_after=1000 + i,
            boosts=[{"name": "Pro week", "multiplier": 2.0}] if i % 2 else [],
            dedupe_key=f"award-{first + i}",
            created=start + dt.timedelta(minutes=first + i),
            local_date=start.date(),
        )
        for i in range(count)
    )
    PointsTotal.objects.update_or_create(
        user=user,
        system=system,
        defaults={"tenant": tenant, "total": 1000 + count, "level": system.levels.last()},
    )


@pytest.fixture
def alice(tenant: Tenant, system: PointsSystem) -> EndUser:
    user = EndUserFactory(tenant=tenant, external_id="alice")
    record_awards(tenant, user, system, 3)
    return user


# What a browser sends


def form_data(form: forms.BaseForm) -> dict[str, Any]:
    """The form's current values as a browser would post them (disabled fields are not sent)."""
    data: dict[str, Any] = {}
    for field in form:
        if field.field.disabled:
            continue
        name, value = field.html_name, field.value()
        if isinstance(field.field, AttributePairsField):
            pairs = field.field.to_python(value or [])
            data[f"{name}-key"] = [key for key, _ in pairs]
            data[f"{name}-value"] = [v for _, v in pairs]
        elif isinstance(field.field, forms.BooleanField):
            if value:
                data[name] = "on"
        elif isinstance(value, list):
            data[name] = [str(v) for v in value]
        elif isinstance(value, dt.date):
            data[name] = value.isoformat()
        else:
            data[name] = "" if value is None else str(value)
    return data


class SystemPage:
    """The system's change page as loaded, and what the browser posts back from it."""

    def __init__(self, client: Any, system: PointsSystem) -> None:
        self.client = client
        self.url = admin_url(PointsSystem, "change", system.pk)
        response = client.get(self.url)
        assert response.status_code == 200
        self.response = response
        self.formsets = response.context["form"].row_sets
        self.data = form_data(response.context["form"])
        for formset in self.formsets.values():
            self.data.update(form_data(formset.management_form))
            for form in formset.forms:
                self.data.update(form_data(form))

    def row(self, prefix: str, index: int, **changes: Any) -> None:
        for name, value in changes.items():
            self.data[f"{prefix}-{index}-{name}"] = value

    def add(self, prefix: str, **fields: Any) -> int:
        """A new row, starting from the empty form's values as the page shows them."""
        index = int(self.data[f"{prefix}-TOTAL_FORMS"])
        self.data[f"{prefix}-TOTAL_FORMS"] = str(index + 1)
        empty = form_data(self.formsets[prefix].empty_form)
        for name, value in empty.items():
            self.data[name.replace("__prefix__", str(index))] = value
        self.row(prefix, index, **fields)
        return index

    def filters(self, prefix: str, index: int, name: str, *pairs: tuple[str, str]) -> None:
        self.data[f"{prefix}-{index}-{name}-key"] = [key for key, _ in pairs]
        self.data[f"{prefix}-{index}-{name}-value"] = [value for _, value in pairs]

    def post(self, **main: Any) -> Any:
        return self.client.post(self.url, {**self.data, **main})


def saved(response: Any) -> None:
    if response.status_code != 302:
        context = response.context
        errors = [context["form"].errors] + [
            (prefix, rows.errors, rows.non_form_errors())
            for prefix, rows in context["form"].row_sets.items()
        ]
        pytest.fail(f"not saved: {errors}")


def row_errors(response: Any, prefix: str, index: int) -> dict[str, list[str]]:
    assert response.status_code == 200
    form = response.context["form"].row_sets[prefix].forms[index]
    return {key or "__all__": list(errors) for key, errors in form.errors.items()}


def api_items(api_client: Any, system: PointsSystem, kind: str) -> list[dict[str, Any]]:
    """The system's parts as the admin API shows them, without their ids."""
    response = api_client.get(f"/admin/v1/points/{system.public_id}/{kind}")
    assert response.status_code == 200
    return [{k: v for k, v in item.items() if k != "id"} for item in response.json()]


# Pages


def test_points_pages_render(
    staff_client: Any, tenant: Tenant, system: PointsSystem, alice: EndUser
) -> None:
    objects = {
        PointsSystem: system,
        PointsLevel: system.levels.first(),
        PointsBoost: system.boosts.get(),
        PointsTrigger: system.triggers.get(),
        PointsAward: PointsAward.objects.first(),
        PointsTotal: PointsTotal.objects.get(),
    }
    for model, obj in objects.items():
        assert staff_client.get(admin_url(model)).status_code == 200, model
        assert staff_client.get(admin_url(model, "change", obj.pk)).status_code == 200, model
    for model in CONFIG_MODELS:
        assert staff_client.get(admin_url(model, "add")).status_code == 200, model
    index = staff_client.get("/dashboard/")
    for model in (PointsSystem, PointsAward, PointsTotal):
        assert admin_url(model).encode() in index.content


def test_system_page_holds_its_triggers_levels_and_boosts_as_rows(
    staff_client: Any, system: PointsSystem, metric: Metric
) -> None:
    page = SystemPage(staff_client, system)

    assert set(page.formsets) == {"triggers", "levels", "boosts"}
    assert [form.initial["key"] for form in page.formsets["levels"].forms] == ["bronze", "silver"]
    boost = page.formsets["boosts"].forms[0].initial
    assert (boost["multiplier"], boost["user_attributes"]) == (Decimal(2), [("plan", "pro")])
    trigger = page.formsets["triggers"].forms[0].initial
    assert (trigger["metric_id"], trigger["metric_threshold"]) == (str(metric.public_id), 1)
    content = page.response.content.decode()
    # Filters are rows of attribute and value, not text.
    assert 'name="boosts-0-user_attributes-key"' in content
    assert '<option value="plan" selected>plan</option>' in content
    assert 'name="boosts-0-user_attributes-value" value="pro"' in content
    # The script that shows a trigger's own fields, told which fields each type has.
    assert "points/trigger-form.js" in content
    assert "data-type-fields=" in content
    assert "&quot;streak&quot;: [&quot;streak_length&quot;]" in content
    assert "Archive</a>" in content


def test_a_new_trigger_row_is_inactive_like_the_api(
    staff_client: Any, api_client: Any, system: PointsSystem
) -> None:
    page = SystemPage(staff_client, system)
    assert page.formsets["triggers"].empty_form["status"].value() == TriggerStatus.INACTIVE

    page.add("triggers", type="user_creation", points="3")
    saved(page.post())

    assert api_items(api_client, system, "triggers")[-1]["status"] == "inactive"


# Adding, changing and deleting rows


def test_rows_added_on_the_system_page_are_stored_as_the_admin_api_stores_them(
    staff_client: Any,
    api_client: Any,
    tenant: Tenant,
    system: PointsSystem,
    metric: Metric,
    plan: Attribute,
    source: Attribute,
) -> None:
    EndUserFactory(tenant=tenant, external_id="alice")
    trigger = {
        "type": "metric",
        "points": -4,
        "status": "active",
        "metricId": str(metric.public_id),
        "metricThreshold": 3,
        "eventAttributes": [{"attributeId": str(source.public_id), "attributeValue": "app"}],
        "userAttributes": [{"attributeId": str(plan.public_id), "attributeValue": "pro"}],
        "blockIfOutOfPoints": True,
    }
    level = {
        "key": "gold",
        "name": "Gold",
        "points": 1000,
        "description": "The best",
        "badge": {"url": "https://example.com/gold.png"},
    }
    boost = {
        "name": "Alice's weekend",
        "start": "2026-03-14",
        "end": "2026-03-15",
        "multiplier": "1.5",
        "rounding": "up",
        "userId": "alice",
    }
    # The same parts, once through the admin API on another system ...
    created = api_client.post(
        "/admin/v1/points",
        [{"key": "twin", "name": "Twin", "triggers": [trigger], "levels": [level]}],
    )
    assert created.status_code == 201, created.content
    twin = PointsSystem.objects.get(key="twin")
    response = api_client.post(f"/admin/v1/points/{twin.public_id}/boosts", [boost])
    assert response.json()["created"], response.content
    version = version_of(tenant)

    # ... and once as rows of the system's page.
    page = SystemPage(staff_client, system)
    row = page.add(
        "triggers",
        type="metric",
        points="-4",
        status="active",
        metric_id=str(metric.public_id),
        metric_threshold="3",
        block_if_out_of_points="on",
    )
    page.filters("triggers", row, "event_attributes", ("source", "app"))
    page.filters("triggers", row, "user_attributes", ("plan", "pro"))
    page.add(
        "levels",
        key="gold",
        name="Gold",
        points="1000",
        description="The best",
        badge_url="https://example.com/gold.png",
    )
    page.add(
        "boosts",
        name="Alice's weekend",
        start="2026-03-14",
        end="2026-03-15",
        multiplier="1.5",
        rounding="up",
        user_id="alice",
    )
    saved(page.post())

    assert version_of(tenant) > version
    for kind in ("triggers", "levels", "boosts"):
        assert api_items(api_client, system, kind)[-1] == api_items(api_client, twin, kind)[-1]


def test_rows_changed_on_the_system_page_go_through_the_configuration_functions(
    staff_client: Any,
    api_client: Any,
    tenant: Tenant,
    system: PointsSystem,
    metric: Metric,
    alice: EndUser,
) -> None:
    trigger = system.triggers.get()
    PointsTriggerMark.objects.create(user=alice, trigger=trigger, mark=3)
    version = version_of(tenant)

    page = SystemPage(staff_client, system)
    page.row("triggers", 0, points="7", metric_threshold="10")
    page.row("levels", 1, name="Silver+", points="50")
    page.row("boosts", 0, multiplier="3", end="2026-03-31")
    page.filters("boosts", 0, "user_attributes")
    saved(page.post(name="Experience"))

    assert version_of(tenant) > version
    system.refresh_from_db()
    assert system.name == "Experience"
    [stored] = api_items(api_client, system, "triggers")
    assert (stored["points"], stored["metricThreshold"]) == (7, 10)
    # What the trigger counts changed: progress towards it starts again, as in the API.
    assert not PointsTriggerMark.objects.exists()
    levels = api_items(api_client, system, "levels")
    assert [(lv["key"], lv["name"], lv["points"]) for lv in levels] == [
        ("bronze", "Bronze", 10),
        ("silver", "Silver+", 50),
    ]
    # Levels were recomputed: alice's 1003 points are above every level.
    assert PointsTotal.objects.get(user=alice).level == system.levels.get(key="silver")
    [boost] = api_items(api_client, system, "boosts")
    assert (boost["multiplier"], boost["end"], boost["userAttributes"]) == (3, "2026-03-31", [])
    # The system's history page is the configuration's, filtered to it; the trigger's change is
    # in the tenant's history, field by field, made by the staff member on the dashboard.
    history = staff_client.get(admin_url(PointsSystem, "history", system.pk), follow=True)
    assert history.status_code == 200
    trigger = ConfigChange.objects.filter(kind="points_trigger", action="changed").latest("id")
    assert (trigger.source, trigger.actor_kind) == ("dashboard", "staff")
    assert trigger.key == f"{system.key}/metric:{metric.key}:10"  # named by what fires it
    assert trigger.after["points"] == 7
    assert trigger.after["metricThreshold"] == 10
    assert trigger.before["points"] != 7


def test_saving_an_unchanged_page_writes_nothing(
    staff_client: Any, tenant: Tenant, system: PointsSystem
) -> None:
    version = version_of(tenant)
    saved(SystemPage(staff_client, system).post())
    assert version_of(tenant) == version


def test_rows_deleted_on_the_system_page_go_through_the_configuration_functions(
    staff_client: Any, api_client: Any, tenant: Tenant, system: PointsSystem, alice: EndUser
) -> None:
    page = SystemPage(staff_client, system)
    page.row("triggers", 0, DELETE="on")
    page.row("levels", 1, DELETE="on")
    # The deleted level's key is free again in the same save.
    page.add("levels", key="silver", name="New silver", points="500")
    page.row("boosts", 0, DELETE="on")
    saved(page.post())

    assert api_items(api_client, system, "triggers") == []
    assert api_items(api_client, system, "boosts") == []
    assert [lv["name"] for lv in api_items(api_client, system, "levels")] == [
        "Bronze",
        "New silver",
    ]
    # Awards keep their trigger's snapshot; totals point at the recomputed level.
    assert PointsAward.objects.filter(trigger=None).count() == 3
    assert PointsTotal.objects.get(user=alice).level.name == "New silver"


# Refusals


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"type": "time", "time_unit": "hours"}, "time_interval", "Required for time triggers."),
        ({"type": "metric", "metric_threshold": "2"}, "metric_id", "Required for metric triggers."),
        ({"type": "achievement"}, "achievement_id", "Required for achievement triggers."),
        ({"type": "streak", "streak_length": "0"}, "streak_length", "greater than or equal to 1"),
        ({"type": "user_creation", "points": "0"}, "points", "Must not be 0"),
        ({"type": "metric", "metric_id": "nope"}, "metric_id", "Select a valid choice"),
    ],
)
def test_a_trigger_row_needs_the_fields_of_its_type(
    staff_client: Any,
    tenant: Tenant,
    system: PointsSystem,
    metric: Metric,
    fields: dict[str, str],
    field: str,
    message: str,
) -> None:
    version = version_of(tenant)
    page = SystemPage(staff_client, system)
    row = page.add("triggers", **{"points": "1", **fields})

    errors = row_errors(page.post(), "triggers", row)

    assert message in " ".join(errors[field]), errors
    assert version_of(tenant) == version
    assert system.triggers.count() == 1


def test_fields_of_other_types_are_not_part_of_a_trigger(
    staff_client: Any, api_client: Any, system: PointsSystem, metric: Metric, source: Attribute
) -> None:
    # Left in hidden fields after switching type (or sent without JavaScript).
    page = SystemPage(staff_client, system)
    row = page.add(
        "triggers",
        type="streak",
        points="9",
        streak_length="7",
        metric_id=str(metric.public_id),
        metric_threshold="5",
        time_interval="2",
    )
    page.filters("triggers", row, "event_attributes", ("unknown", "x"))
    saved(page.post())

    stored = api_items(api_client, system, "triggers")[-1]
    assert stored == {
        "type": "streak",
        "points": 9,
        "status": "inactive",
        "userAttributes": [],
        "blockIfOutOfPoints": False,
        "streakLength": 7,
    }


def test_a_refused_row_shows_the_message_on_the_row_and_nothing_is_saved(
    staff_client: Any, tenant: Tenant, system: PointsSystem
) -> None:
    version = version_of(tenant)
    page = SystemPage(staff_client, system)
    page.add("levels", key="gold", name="Gold", points="1000")
    # The trigger is active: its type cannot change (the configuration function says so).
    page.row("triggers", 0, type="streak", streak_length="3")

    response = page.post(name="Renamed")

    errors = row_errors(response, "triggers", 0)
    # Next to the input the configuration function names, with its label.
    assert errors["type"] == ["“Type” can only change while the trigger is inactive"]
    assert not response.context["form"].errors
    assert "Please correct the errors below." in response.content.decode()
    # The whole save was one transaction: the system and the new level are not written either.
    assert version_of(tenant) == version
    system.refresh_from_db()
    assert system.name == "XP"
    assert not system.levels.filter(key="gold").exists()
    assert system.triggers.get().type == "metric"


def test_a_duplicate_level_key_is_refused_on_its_row(
    staff_client: Any, system: PointsSystem
) -> None:
    page = SystemPage(staff_client, system)
    row = page.add("levels", key="bronze", name="Again", points="5")

    errors = row_errors(page.post(), "levels", row)

    assert errors["__all__"] == ["Key already in use by another level"]
    assert system.levels.count() == 2


@pytest.mark.parametrize(
    ("fields", "filters", "field", "message"),
    [
        # API keys in messages are named as the page labels the fields.
        (
            {"user_id": "alice"},
            [("plan", "pro")],
            "user_id",
            "“User id” and “User attributes” are mutually exclusive",
        ),
        ({"end": "2026-02-01"}, [], "end", "“End” must not be before “Start”"),
        ({"multiplier": "1"}, [], "multiplier", "Must be greater than 0, less than 100 and not 1"),
        ({}, [("plan", "")], "user_attributes", "Give a value for plan."),
        ({}, [("", "pro")], "user_attributes", "Choose the attribute of the value “pro”."),
        ({}, [("tier", "gold")], "user_attributes", "unknown user attribute keys: tier"),
    ],
)
def test_boost_rows_are_refused_in_the_words_of_the_page(
    staff_client: Any,
    tenant: Tenant,
    system: PointsSystem,
    fields: dict[str, str],
    filters: list[tuple[str, str]],
    field: str,
    message: str,
) -> None:
    EndUserFactory(tenant=tenant, external_id="alice")
    page = SystemPage(staff_client, system)
    row = page.add("boosts", **{"name": "B", "start": "2026-03-01", "multiplier": "2", **fields})
    page.filters("boosts", row, "user_attributes", *filters)

    errors = row_errors(page.post(), "boosts", row)

    assert message in errors.get(field, []), errors
    assert system.boosts.count() == 1


def test_an_archived_system_shows_its_configuration_read_only(
    staff_client: Any, tenant: Tenant, system: PointsSystem
) -> None:
    configuration.points_system_archive(tenant, system)

    page = staff_client.get(admin_url(PointsSystem, "change", system.pk))

    assert page.status_code == 200
    assert page.context["form"].row_sets == {}
    content = page.content.decode()
    assert "<td>bronze</td><td>Bronze</td><td>10</td>" in content
    assert "When the user is created" not in content
    assert "Every 1 words" in content
    assert b'type="submit"' not in page_main(page.content)
    level = system.levels.first()
    assert staff_client.post(admin_url(PointsLevel, "change", level.pk), {}).status_code == 403


def test_each_changed_row_calls_its_configuration_function_once(
    staff_client: Any, system: PointsSystem, monkeypatch: Any
) -> None:
    calls: list[str] = []
    for name in (
        "points_system_update",
        "points_level_create",
        "points_level_update",
        "points_level_delete",
        "points_boost_update",
        "points_trigger_update",
    ):
        real = getattr(configuration, name)

        def spy(*args: Any, _name: str = name, _real: Any = real, **kwargs: Any) -> Any:
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(configuration, name, spy)

    page = SystemPage(staff_client, system)
    page.row("levels", 0, DELETE="on")
    page.row("levels", 1, name="Silver+")
    page.add("levels", key="gold", name="Gold", points="1000")
    saved(page.post(name="Experience"))

    # The settings, then deletions, changes and additions; untouched rows call nothing.
    assert calls == [
        "points_system_update",
        "points_level_delete",
        "points_level_update",
        "points_level_create",
    ]


def test_viewers_see_the_system_and_its_rows_disabled(org: Any, system: PointsSystem) -> None:
    viewer = org_staff(org, username="viewer")
    viewer.user_permissions.add(Permission.objects.get(codename="view_pointssystem"))
    client = Client()
    client.force_login(viewer)
    url = admin_url(PointsSystem, "change", system.pk)

    response = client.get(url)

    assert response.status_code == 200
    form = response.context["form"]
    assert all(field.disabled for field in form.fields.values())
    for rows in form.row_sets.values():
        assert all(f.disabled for row in rows.forms for f in row.fields.values())
    content = response.content.decode()
    assert 'name="_save"' not in content
    assert "js-inline-admin-formset" not in content
    assert 'class="inlineviewlink"' in content
    assert client.post(url, {"name": "Mine"}).status_code == 403


# Archiving


def test_archiving_a_system_is_confirmed_with_counts(
    staff_client: Any, api_client: Any, tenant: Tenant, system: PointsSystem, alice: EndUser
) -> None:
    url = admin_url(PointsSystem, "delete", system.pk)
    version = version_of(tenant)

    page = staff_client.get(url)

    assert page.status_code == 200
    assert page.context["counts"] == {
        "awards": 3,
        "totals": 1,
        "triggers": 1,
        "active_triggers": 1,
        "levels": 2,
        "boosts": 1,
    }
    content = page.content.decode()
    for text in (
        "<strong>3</strong> awards in the ledger",
        "<strong>1</strong> user total<",
        "<strong>1</strong> trigger, 1 of them active: they stop paying",
        "<strong>2</strong> levels",
        "<strong>1</strong> boost<",
        'value="Yes, archive it"',
    ):
        assert text in content
    # Nothing happens until it is confirmed.
    assert version_of(tenant) == version
    assert PointsSystem.objects.get().status == SystemStatus.ACTIVE

    # alice has points: the key is typed, or nothing is archived.
    assert staff_client.post(url, {"post": "yes"}).status_code == 200
    assert PointsSystem.objects.get().status == SystemStatus.ACTIVE

    response = staff_client.post(url, {"post": "yes", f"confirm-{system.pk}": "xp"}, follow=True)

    assert message_texts(response) == [
        "The points system “XP (xp)” was archived: its ledger is kept."
    ]
    assert version_of(tenant) > version
    system.refresh_from_db()
    assert system.status == SystemStatus.ARCHIVED
    assert PointsAward.objects.filter(system=system).count() == 3
    assert api_client.get("/admin/v1/points").json() == []
    assert staff_client.get(url).status_code == 403


def test_archiving_selected_systems_is_confirmed_with_counts(
    staff_client: Any, tenant: Tenant, system: PointsSystem, alice: EndUser
) -> None:
    coins, _ = configuration.points_system_create(
        tenant, PointsSystemSettings(key="coins", name="Coins")
    )
    selection = {"action": "archive_selected", "_selected_action": [system.pk, coins.pk]}

    page = staff_client.post(admin_url(PointsSystem), selection)

    assert page.status_code == 200
    assert page.context["counts"]["awards"] == 3
    assert [s.key for s in page.context["systems"]] == ["coins", "xp"]
    assert b"<code>coins</code>, <code>xp</code>" in page.content
    assert set(PointsSystem.objects.values_list("status", flat=True)) == {SystemStatus.ACTIVE}
    actions = staff_client.get(admin_url(PointsSystem)).context["action_form"].fields["action"]
    assert [name for name, _ in actions.choices if name] == ["archive_selected"]

    # alice has xp points: its key is typed, or nothing is archived (coins has no user data).
    response = staff_client.post(admin_url(PointsSystem), {**selection, "post": "yes"})
    assert response.status_code == 200
    assert set(PointsSystem.objects.values_list("status", flat=True)) == {SystemStatus.ACTIVE}
    confirmed = {**selection, "post": "yes", f"confirm-{system.pk}": "xp"}

    response = staff_client.post(admin_url(PointsSystem), confirmed, follow=True)

    assert message_texts(response) == ["Archived 2 points systems."]
    assert set(PointsSystem.objects.values_list("status", flat=True)) == {SystemStatus.ARCHIVED}


# The system's own settings


def system_form(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "key": "coins",
        "name": "Coins",
        "description": "Spent in the shop",
        "badge_url": "https://example.com/coin.png",
        "max_points": "1000",
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def test_creating_a_system_goes_through_the_service_and_opens_its_page(
    staff_client: Any, api_client: Any, tenant: Tenant
) -> None:
    version = version_of(tenant)

    response = staff_client.post(admin_url(PointsSystem, "add"), system_form(tenant=tenant.pk))

    assert response.status_code == 302, response.context["form"].errors
    system = PointsSystem.objects.get()
    assert response["Location"] == admin_url(PointsSystem, "change", system.pk)
    assert version_of(tenant) > version
    body = api_client.get("/admin/v1/points").json()
    assert [(s["key"], s["name"], s["maxPoints"], s["badge"]) for s in body] == [
        ("coins", "Coins", 1000, {"url": "https://example.com/coin.png"})
    ]
    assert body[0]["description"] == "Spent in the shop"


def test_editing_a_system_goes_through_the_service(
    staff_client: Any, tenant: Tenant, system: PointsSystem
) -> None:
    version = version_of(tenant)
    page = SystemPage(staff_client, system)

    saved(page.post(name="Experience", badge_url="", max_points=""))

    assert version_of(tenant) > version
    system.refresh_from_db()
    assert (system.key, system.name, system.badge_url, system.max_points) == (
        "xp",
        "Experience",
        None,
        None,
    )


def assert_refused(response: Any, field: str | None, message: str) -> None:
    assert response.status_code == 200
    form = response.context["form"]
    errors = form.non_field_errors() if field is None else form.errors.get(field, [])
    assert message in " ".join(errors), form.errors
    assert message.encode() in response.content


def test_duplicate_system_key_is_a_form_error(
    staff_client: Any, tenant: Tenant, system: PointsSystem
) -> None:
    version = version_of(tenant)

    response = staff_client.post(
        admin_url(PointsSystem, "add"), system_form(tenant=tenant.pk, key="xp")
    )

    assert_refused(response, None, "Key already in use by another points system")
    assert version_of(tenant) == version
    assert PointsSystem.objects.count() == 1


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"key": "no spaces"}, "key", "Must match"),
        ({"max_points": "0"}, "max_points", "greater than or equal to 1"),
        ({"badge_url": "not a url"}, "badge_url", "Enter a valid URL."),
        ({"name": ""}, "name", "This field is required."),
    ],
)
def test_invalid_system_is_a_form_error(
    staff_client: Any, tenant: Tenant, changes: dict, field: str, message: str
) -> None:
    response = staff_client.post(
        admin_url(PointsSystem, "add"), system_form(tenant=tenant.pk, **changes)
    )
    assert_refused(response, field, message)
    assert not PointsSystem.objects.exists()


# The parts' own pages


def trigger_form(system: PointsSystem, metric: Metric, /, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "system": system.pk,
        "type": "metric",
        "points": "10",
        "status": "active",
        "metric_id": str(metric.public_id),
        "metric_threshold": "5",
        "user_attributes-key": ["plan"],
        "user_attributes-value": ["pro"],
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def test_a_trigger_created_on_its_own_page_returns_to_the_system(
    staff_client: Any,
    api_client: Any,
    tenant: Tenant,
    system: PointsSystem,
    metric: Metric,
    plan: Attribute,
) -> None:
    page = staff_client.get(admin_url(PointsTrigger, "add"))
    assert page.context["form"]["status"].value() == TriggerStatus.INACTIVE

    response = staff_client.post(admin_url(PointsTrigger, "add"), trigger_form(system, metric))

    assert response.status_code == 302, response.context["form"].errors
    assert response["Location"] == admin_url(PointsSystem, "change", system.pk)
    assert api_items(api_client, system, "triggers")[-1] == {
        "type": "metric",
        "points": 10,
        "status": "active",
        "userAttributes": [{"attributeId": str(plan.public_id), "attributeValue": "pro"}],
        "blockIfOutOfPoints": False,
        "metricId": str(metric.public_id),
        "metricThreshold": 5,
        "eventAttributes": [],
    }


def test_part_pages_return_to_their_system(
    staff_client: Any, tenant: Tenant, system: PointsSystem
) -> None:
    system_page = admin_url(PointsSystem, "change", system.pk)
    level = system.levels.get(key="bronze")
    data = {"name": "Bronze 2", "points": "20", "description": "", "badge_url": ""}

    response = staff_client.post(admin_url(PointsLevel, "change", level.pk), data)
    assert response.status_code == 302, response.context["form"].errors
    assert response["Location"] == system_page
    assert system.levels.get(key="bronze").name == "Bronze 2"

    trigger = system.triggers.get()
    response = staff_client.post(admin_url(PointsTrigger, "delete", trigger.pk), {"post": "yes"})
    assert response["Location"] == system_page
    assert not system.triggers.exists()


def test_changing_the_type_of_an_inactive_trigger_drops_the_old_types_fields(
    staff_client: Any, tenant: Tenant, system: PointsSystem, metric: Metric
) -> None:
    trigger = system.triggers.get()
    configuration.points_trigger_update(tenant, trigger, PointsTriggerSettings(status="inactive"))

    # The metric fields still hold the old values, as the form showed them.
    changes = trigger_form(system, metric, type="streak", status="inactive", streak_length="3")
    response = staff_client.post(admin_url(PointsTrigger, "change", trigger.pk), changes)

    assert response.status_code == 302, response.context["form"].errors
    trigger.refresh_from_db()
    assert (trigger.type, trigger.streak_length, trigger.metric_id) == ("streak", 3, None)


def test_unknown_boost_user_is_a_form_error(staff_client: Any, system: PointsSystem) -> None:
    data = {
        "system": system.pk,
        "name": "Nobody's",
        "start": "2026-03-01",
        "multiplier": "2",
        "rounding": "down",
        "user_id": "nobody",
    }
    response = staff_client.post(admin_url(PointsBoost, "add"), data)
    assert_refused(response, "user_id", "User does not exist")


# Tenants


def test_another_tenants_systems_are_out_of_reach(
    staff_client: Any,
    tenant: Tenant,
    other_tenant: Tenant,
    system: PointsSystem,
    metric: Metric,
) -> None:
    theirs, _ = configuration.points_system_create(
        other_tenant,
        PointsSystemSettings(key="theirs", name="Theirs"),
        levels=[PointsLevelSettings(key="l", name="L", points=1)],
    )
    MetricFactory(tenant=other_tenant, key="steps")
    bump(other_tenant)
    version = version_of(other_tenant)

    # Their system's page, its archive page and its parts are "not found" from here.
    for url in (
        admin_url(PointsSystem, "change", theirs.pk),
        admin_url(PointsSystem, "delete", theirs.pk),
        admin_url(PointsLevel, "change", theirs.levels.get().pk),
    ):
        assert staff_client.get(url).status_code == 404, url
    response = staff_client.post(admin_url(PointsSystem, "change", theirs.pk), {"name": "Mine now"})
    assert response.status_code == 404
    response = staff_client.post(
        admin_url(PointsSystem), {"action": "archive_selected", "_selected_action": [theirs.pk]}
    )
    assert response.status_code == 302
    assert list(staff_client.get(admin_url(PointsSystem)).context["cl"].result_list) == [system]
    # A trigger on this tenant's system offers this tenant's metrics only.
    page = SystemPage(staff_client, system)
    metrics = page.formsets["triggers"].empty_form.fields["metric_id"].choices
    assert [label for _, label in metrics] == ["---------", "Words (words)"]
    add = staff_client.get(admin_url(PointsTrigger, "add"))
    assert list(add.context["form"].fields["system"].queryset) == [system]

    assert version_of(other_tenant) == version
    theirs.refresh_from_db()
    assert (theirs.name, theirs.status) == ("Theirs", SystemStatus.ACTIVE)

    switch_tenant(staff_client, other_tenant)
    assert staff_client.get(admin_url(PointsSystem, "change", theirs.pk)).status_code == 200
    assert staff_client.get(admin_url(PointsSystem, "change", system.pk)).status_code == 404


# The ledger


@pytest.mark.parametrize("model", LEDGER_MODELS)
def test_ledger_is_read_only(staff_client: Any, alice: EndUser, model: type) -> None:
    obj = model.objects.first()
    assert staff_client.get(admin_url(model, "add")).status_code == 403
    assert staff_client.post(admin_url(model, "change", obj.pk), {}).status_code == 403
    assert staff_client.get(admin_url(model, "delete", obj.pk)).status_code == 403
    page = staff_client.get(admin_url(model, "change", obj.pk))
    assert b'type="submit"' not in page_main(page.content)
    run = staff_client.post(
        admin_url(model), {"action": "delete_selected", "_selected_action": [obj.pk]}
    )
    assert run.status_code in (200, 302)
    assert model.objects.filter(pk=obj.pk).exists()


def test_award_list_shows_the_ledger_columns(staff_client: Any, alice: EndUser) -> None:
    content = staff_client.get(admin_url(PointsAward)).content.decode()
    assert "Pro week x2<" in content
    assert re.search(r'<td class="field-trigger_type[^"]*"[^>]*>metric</td>', content)
    assert re.search(r'<td class="field-total_after[^"]*"[^>]*>1002</td>', content)
    totals = staff_client.get(admin_url(PointsTotal)).content.decode()
    assert "</a></a>" not in totals  # the user link is not nested in the row's link
    assert f'<a href="{admin_url(EndUser, "change", alice.pk)}">alice</a></td>' in totals


@pytest.mark.parametrize("model", LEDGER_MODELS)
def test_ledger_is_searched_by_exact_user_id(
    staff_client: Any, tenant: Tenant, system: PointsSystem, alice: EndUser, model: type
) -> None:
    record_awards(tenant, EndUserFactory(tenant=tenant, external_id="bob"), system, 2, first=10)

    def shown(query: str) -> set[str]:
        response = staff_client.get(admin_url(model) + query)
        assert response.status_code == 200
        return {row.user.external_id for row in response.context["cl"].result_list}

    assert shown("") == {"alice", "bob"}
    assert shown("?q=alice") == {"alice"}
    assert shown("?q=ali") == set()


# End-user page


def test_end_user_page_shows_totals_and_the_latest_awards(
    staff_client: Any, tenant: Tenant, system: PointsSystem, alice: EndUser
) -> None:
    record_awards(tenant, alice, system, 20, first=100)

    response = staff_client.get(admin_url(EndUser, "change", alice.pk))

    assert response.status_code == 200
    card = response.content.decode().split('id="user-points"')[1].split("</section>")[0]
    assert '<td class="user-num user-strong">1020</td>' in card
    assert "<td>Silver</td>" in card
    # The latest RECENT_AWARDS awards, newest first (totals 1019 down to 1010).
    assert card.count('<td class="user-num">+') == RECENT_AWARDS
    assert '<td class="user-num">1019</td>' in card
    assert '<td class="user-num">1010</td>' in card
    assert '<td class="user-num">1009</td>' not in card
    assert f"{admin_url(PointsAward)}?user={alice.pk}" in card


def test_end_user_page_queries_do_not_grow_with_awards(
    staff_client: Any, tenant: Tenant, system: PointsSystem, alice: EndUser
) -> None:
    url = admin_url(EndUser, "change", alice.pk)
    staff_client.get(url)  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    coins, _ = configuration.points_system_create(
        tenant, PointsSystemSettings(key="coins", name="Coins")
    )
    record_awards(tenant, alice, coins, 30, first=100)
    record_awards(tenant, alice, system, 30, first=200)
    staff_client.get(url)  # the new system bumped the configuration: snapshots reload once
    with CaptureQueriesContext(connection) as many:
        staff_client.get(url)
    assert len(many) == len(few)


# Query counts


def populate(tenant: Tenant, first: int, count: int) -> None:
    """Systems with a level, a trigger and a boost, and users with awards, in one tenant."""
    for n in range(first, first + count):
        system, _ = configuration.points_system_create(
            tenant,
            PointsSystemSettings(key=f"xp-{n}", name="XP"),
            levels=[PointsLevelSettings(key="one", name="One", points=1)],
            triggers=[PointsTriggerSettings(type="user_creation", points=5)],
            boosts=[
                PointsBoostSettings(name="Double", start=dt.date(2026, 1, 1), multiplier=Decimal(2))
            ],
        )
        user = EndUserFactory(tenant=tenant)
        record_awards(tenant, user, system, 2)


@pytest.mark.parametrize("model", [*CONFIG_MODELS, *LEDGER_MODELS])
def test_changelist_queries_do_not_grow_with_rows(
    staff_client: Any, tenant: Tenant, django_assert_max_num_queries: Any, model: type
) -> None:
    populate(tenant, 0, 1)
    url = admin_url(model)
    staff_client.get(url)  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    populate(tenant, 1, 6)
    with CaptureQueriesContext(connection) as many:
        response = staff_client.get(url)
    assert len(response.context["cl"].result_list) > 4
    assert len(many) == len(few)
    with django_assert_max_num_queries(12):
        staff_client.get(url + "?q=user-1")


def test_system_page_queries_do_not_grow_with_its_configuration(
    staff_client: Any, tenant: Tenant, system: PointsSystem, metric: Metric, plan: Attribute
) -> None:
    url = admin_url(PointsSystem, "change", system.pk)
    staff_client.get(url)  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    EndUserFactory(tenant=tenant, external_id="alice")
    for n in range(5):
        configuration.points_level_create(
            tenant, system, PointsLevelSettings(key=f"l{n}", name="L", points=n)
        )
        configuration.points_trigger_create(
            tenant,
            system,
            PointsTriggerSettings(
                type="metric", points=1, metric_id=str(metric.public_id), metric_threshold=n + 1
            ),
        )
        boost = PointsBoostSettings(
            name=f"B{n}", start=dt.date(2026, 1, 1), multiplier=Decimal(3), user_id="alice"
        )
        configuration.points_boost_create(tenant, system, boost)
    staff_client.get(url)  # the configuration changed: cached definitions reload once
    with CaptureQueriesContext(connection) as many:
        staff_client.get(url)
    assert len(many) == len(few)


@pytest.mark.parametrize("posted", ["\u00b2", "9" * 5000, "-1", "1e3"])
def test_a_malformed_row_id_is_a_form_error_not_a_500(
    staff_client: Any, system: PointsSystem, posted: str
) -> None:
    page = SystemPage(staff_client, system)
    page.row("levels", 0, id=posted, name="Changed")

    response = page.post()

    assert response.status_code == 200
    rows = response.context["form"].row_sets["levels"]
    assert not rows.is_valid()
    assert not PointsLevel.objects.filter(name="Changed").exists()


@pytest.mark.parametrize("prefix", ["triggers", "levels", "boosts"])
def test_a_part_posted_twice_is_refused_rather_than_deleted_and_written_back(
    staff_client: Any, system: PointsSystem, prefix: str
) -> None:
    model = {"triggers": PointsTrigger, "levels": PointsLevel, "boosts": PointsBoost}[prefix]
    before = sorted(model.objects.filter(system=system).values_list("pk", flat=True))
    page = SystemPage(staff_client, system)
    count = int(page.data[f"{prefix}-TOTAL_FORMS"])
    for name, value in list(page.data.items()):  # row 0 again, as a stored row
        if name.startswith(f"{prefix}-0-"):
            page.data[name.replace(f"{prefix}-0-", f"{prefix}-{count}-")] = value
    page.data[f"{prefix}-TOTAL_FORMS"] = page.data[f"{prefix}-INITIAL_FORMS"] = str(count + 1)
    page.row(prefix, 0, DELETE="on")

    response = page.post()

    assert response.status_code == 200
    assert "A row appears twice" in str(response.context["form"].row_sets[prefix].non_form_errors())
    assert sorted(model.objects.filter(system=system).values_list("pk", flat=True)) == before
