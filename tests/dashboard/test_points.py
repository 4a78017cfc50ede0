"""Points systems, levels, boosts and triggers are edited through the configuration functions
with the admin API's validation; the award ledger and totals are shown, never written."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.metrics.models import Metric
from apps.points import configuration
from apps.points.admin import RECENT_AWARDS
from apps.points.choices import SystemStatus, TriggerStatus
from apps.points.models import (
    PointsAward,
    PointsBoost,
    PointsLevel,
    PointsSystem,
    PointsTotal,
    PointsTrigger,
)
from apps.users.choices import AttributeType
from apps.users.models import Attribute, EndUser
from tests.dashboard.conftest import admin_url, message_texts
from tests.factories import AttributeFactory, EndUserFactory, OrganizationWithKey

CONFIG_MODELS = [PointsSystem, PointsLevel, PointsBoost, PointsTrigger]
LEDGER_MODELS = [PointsAward, PointsTotal]


def version_of(tenant: Tenant) -> int:
    return Tenant.objects.get(pk=tenant.pk).config_version


@pytest.fixture
def plan(tenant: Tenant) -> Attribute:
    return AttributeFactory(tenant=tenant, key="plan", type=AttributeType.USER)


@pytest.fixture
def system(tenant: Tenant, metric: Metric, plan: Attribute) -> PointsSystem:
    """XP, made by the configuration functions: two levels, a boost and a metric trigger."""
    created, _ = configuration.system_create(
        tenant,
        {
            "key": "xp",
            "name": "XP",
            "levels": [
                {"key": "bronze", "name": "Bronze", "points": 10},
                {"key": "silver", "name": "Silver", "points": 100},
            ],
            "boosts": [
                {
                    "name": "Pro week",
                    "start": dt.date(2026, 3, 1),
                    "multiplier": Decimal(2),
                    "userAttributes": [
                        {"attributeId": str(plan.public_id), "attributeValue": "pro"}
                    ],
                }
            ],
            "triggers": [
                {
                    "type": "metric",
                    "points": 5,
                    "status": "active",
                    "metricId": metric.public_id,
                    "metricThreshold": 1,
                }
            ],
        },
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
    for model in objects:
        assert admin_url(model).encode() in index.content


def test_system_page_lists_its_levels_boosts_and_triggers(
    staff_client: Any, system: PointsSystem
) -> None:
    content = staff_client.get(admin_url(PointsSystem, "change", system.pk)).content.decode()
    assert "Bronze" in content
    assert "Silver" in content
    assert "Pro week" in content
    assert "users matching filters" in content
    assert "every 1 words" in content
    trigger = system.triggers.get()
    assert admin_url(PointsTrigger, "change", trigger.pk) in content
    assert f"{admin_url(PointsTrigger, 'add')}?system={system.pk}" in content


def test_part_pages_show_attribute_filters_by_key(staff_client: Any, system: PointsSystem) -> None:
    page = staff_client.get(admin_url(PointsBoost, "change", system.boosts.get().pk))
    initial = page.context["adminform"].form.initial
    assert (initial["user_attributes"], initial["multiplier"]) == ("plan:pro", Decimal(2))


# Creating and editing configuration


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


def trigger_form(system: PointsSystem, metric: Metric, /, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "system": system.pk,
        "type": "metric",
        "points": "10",
        "status": "active",
        "metric": metric.pk,
        "metric_threshold": "5",
        "user_attributes": "plan: pro",
        "event_attributes": "",
        "streak_length": "",
        "time_unit": "",
        "time_interval": "",
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def test_creating_a_system_goes_through_the_service(
    staff_client: Any, api_client: Any, tenant: Tenant
) -> None:
    version = version_of(tenant)

    response = staff_client.post(admin_url(PointsSystem, "add"), system_form(tenant=tenant.pk))

    assert response.status_code == 302, response.context["adminform"].form.errors
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

    response = staff_client.post(
        admin_url(PointsSystem, "change", system.pk),
        system_form(key=None, name="Experience", badge_url="", max_points=""),
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
    assert version_of(tenant) > version
    system.refresh_from_db()
    assert (system.key, system.name, system.badge_url, system.max_points) == (
        "xp",
        "Experience",
        None,
        None,
    )


def test_creating_a_trigger_goes_through_the_service(
    staff_client: Any,
    api_client: Any,
    tenant: Tenant,
    system: PointsSystem,
    metric: Metric,
    plan: Attribute,
) -> None:
    version = version_of(tenant)

    response = staff_client.post(admin_url(PointsTrigger, "add"), trigger_form(system, metric))

    assert response.status_code == 302, response.context["adminform"].form.errors
    assert version_of(tenant) > version
    triggers = api_client.get(f"/admin/v1/points/{system.public_id}/triggers").json()
    assert triggers[-1] == {
        "id": triggers[-1]["id"],
        "type": "metric",
        "points": 10,
        "status": "active",
        "userAttributes": [{"attributeId": str(plan.public_id), "attributeValue": "pro"}],
        "blockIfOutOfPoints": False,
        "metricId": str(metric.public_id),
        "metricThreshold": 5,
        "eventAttributes": [],
    }


def test_changing_the_type_of_an_inactive_trigger_drops_the_old_types_fields(
    staff_client: Any, tenant: Tenant, system: PointsSystem, metric: Metric
) -> None:
    trigger = system.triggers.get()
    configuration.trigger_update(tenant, trigger, {"status": "inactive"})

    # The metric fields still hold the old values, as the form showed them.
    changes = trigger_form(system, metric, type="streak", status="inactive", streak_length="3")
    response = staff_client.post(admin_url(PointsTrigger, "change", trigger.pk), changes)

    assert response.status_code == 302, response.context["adminform"].form.errors
    trigger.refresh_from_db()
    assert (trigger.type, trigger.streak_length, trigger.metric_id) == ("streak", 3, None)


def test_creating_a_level_and_a_boost_go_through_the_services(
    staff_client: Any, tenant: Tenant, system: PointsSystem
) -> None:
    alice = EndUserFactory(tenant=tenant, external_id="alice")
    version = version_of(tenant)

    level = {"system": system.pk, "key": "gold", "name": "Gold", "points": "1000"}
    response = staff_client.post(admin_url(PointsLevel, "add"), level)
    assert response.status_code == 302, response.context["adminform"].form.errors
    boost = {
        "system": system.pk,
        "name": "Alice's weekend",
        "start": "2026-03-14",
        "end": "2026-03-15",
        "multiplier": "1.5",
        "rounding": "up",
        "user_id": "alice",
        "user_attributes": "",
    }
    response = staff_client.post(admin_url(PointsBoost, "add"), boost)
    assert response.status_code == 302, response.context["adminform"].form.errors

    assert version_of(tenant) >= version + 2
    assert system.levels.get(key="gold").points == 1000
    created = system.boosts.get(name="Alice's weekend")
    assert (created.user, created.multiplier, created.rounding) == (alice, Decimal("1.5"), "up")


def test_deleting_a_system_archives_it(
    staff_client: Any, api_client: Any, tenant: Tenant, system: PointsSystem, alice: EndUser
) -> None:
    version = version_of(tenant)

    response = staff_client.post(admin_url(PointsSystem, "delete", system.pk), {"post": "yes"})

    assert response.status_code == 302
    assert version_of(tenant) > version
    system.refresh_from_db()
    assert system.status == SystemStatus.ARCHIVED
    assert PointsAward.objects.filter(system=system).count() == 3
    assert api_client.get("/admin/v1/points").json() == []
    # Archived: shown, no longer edited, nor its levels.
    assert staff_client.get(admin_url(PointsSystem, "delete", system.pk)).status_code == 403
    level = system.levels.first()
    assert staff_client.post(admin_url(PointsLevel, "change", level.pk), {}).status_code == 403
    for model, obj in ((PointsSystem, system), (PointsLevel, level)):
        page = staff_client.get(admin_url(model, "change", obj.pk))
        assert page.status_code == 200
        assert b'type="submit"' not in page.content.split(b'id="content-main"')[1]


def test_deleting_a_trigger_goes_through_the_service(
    staff_client: Any, tenant: Tenant, system: PointsSystem
) -> None:
    trigger = system.triggers.get()
    version = version_of(tenant)

    response = staff_client.post(admin_url(PointsTrigger, "delete", trigger.pk), {"post": "yes"})

    assert response.status_code == 302
    assert version_of(tenant) > version
    assert not system.triggers.exists()


# Invalid input


def assert_refused(response: Any, field: str | None, message: str) -> None:
    assert response.status_code == 200
    form = response.context["adminform"].form
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
        ({"key": "no spaces"}, "key", "must match"),
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


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"multiplier": "1"}, "multiplier", "must be greater than 0, less than 100 and not 1"),
        ({"multiplier": "100"}, "multiplier", "must be greater than 0, less than 100 and not 1"),
        ({"end": "2026-02-01"}, None, "end must not be before start"),
        ({"user_attributes": "tier:gold"}, "user_attributes", "unknown user attribute keys"),
        ({"user_attributes": "plan"}, "user_attributes", "write each filter as key:value"),
    ],
)
def test_invalid_boost_is_a_form_error(
    staff_client: Any, tenant: Tenant, system: PointsSystem, changes: dict, field: Any, message: str
) -> None:
    boost = system.boosts.get()
    version = version_of(tenant)
    data = {
        "name": "Pro week",
        "start": "2026-03-01",
        "end": "",
        "multiplier": "2",
        "rounding": "down",
        "user_attributes": "plan:pro",
        **changes,
    }

    response = staff_client.post(admin_url(PointsBoost, "change", boost.pk), data)

    assert_refused(response, field, message)
    assert version_of(tenant) == version
    boost.refresh_from_db()
    assert (boost.multiplier, boost.end) == (Decimal(2), None)


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"points": "0"}, "points", "must not be 0"),
        ({"metric_threshold": ""}, None, "metric triggers need metricThreshold"),
        ({"metric_threshold": "0"}, "metric_threshold", "greater than or equal to 1"),
        ({"event_attributes": "plan:pro"}, "event_attributes", "unknown event attribute keys"),
        ({"type": "time", "time_unit": "hours"}, None, "time triggers need timeInterval"),
    ],
)
def test_invalid_new_trigger_is_a_form_error(
    staff_client: Any,
    tenant: Tenant,
    system: PointsSystem,
    metric: Metric,
    changes: dict,
    field: Any,
    message: str,
) -> None:
    version = version_of(tenant)

    response = staff_client.post(
        admin_url(PointsTrigger, "add"), trigger_form(system, metric, **changes)
    )

    assert_refused(response, field, message)
    assert version_of(tenant) == version
    assert system.triggers.count() == 1


def test_metric_of_another_tenant_is_a_form_error(
    staff_client: Any, other_tenant: Tenant, system: PointsSystem, metric: Metric
) -> None:
    foreign = Metric.objects.create(tenant=other_tenant, key="words", name="Words")
    response = staff_client.post(
        admin_url(PointsTrigger, "add"), trigger_form(system, metric, metric=foreign.pk)
    )
    assert_refused(response, "metric", "belongs to another tenant than the points system")


def test_type_of_an_active_trigger_cannot_change(
    staff_client: Any, tenant: Tenant, system: PointsSystem, metric: Metric
) -> None:
    trigger = system.triggers.get()
    assert trigger.status == TriggerStatus.ACTIVE
    version = version_of(tenant)

    response = staff_client.post(
        admin_url(PointsTrigger, "change", trigger.pk),
        trigger_form(system, metric, type="streak", streak_length="3"),
    )

    assert_refused(response, None, "type can only change while the trigger is inactive")
    assert version_of(tenant) == version
    trigger.refresh_from_db()
    assert (trigger.type, trigger.points, trigger.metric_id) == ("metric", 5, metric.pk)


def test_duplicate_level_key_is_a_form_error(staff_client: Any, system: PointsSystem) -> None:
    response = staff_client.post(
        admin_url(PointsLevel, "add"),
        {"system": system.pk, "key": "bronze", "name": "Again", "points": "5"},
    )
    assert_refused(response, None, "Key already in use by another level")
    assert system.levels.count() == 2


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
    assert_refused(response, None, "User does not exist")


# The ledger


@pytest.mark.parametrize("model", LEDGER_MODELS)
def test_ledger_is_read_only(staff_client: Any, alice: EndUser, model: type) -> None:
    obj = model.objects.first()
    assert staff_client.get(admin_url(model, "add")).status_code == 403
    assert staff_client.post(admin_url(model, "change", obj.pk), {}).status_code == 403
    assert staff_client.get(admin_url(model, "delete", obj.pk)).status_code == 403
    page = staff_client.get(admin_url(model, "change", obj.pk))
    assert b'type="submit"' not in page.content.split(b'id="content-main"')[1]
    run = staff_client.post(
        admin_url(model), {"action": "delete_selected", "_selected_action": [obj.pk]}
    )
    assert run.status_code in (200, 302)
    assert model.objects.filter(pk=obj.pk).exists()


def test_award_list_shows_the_ledger_columns(staff_client: Any, alice: EndUser) -> None:
    content = staff_client.get(admin_url(PointsAward)).content.decode()
    assert "Pro week x2<" in content
    assert '<td class="field-trigger_type">metric</td>' in content
    assert '<td class="field-total_after">1002</td>' in content
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
    content = response.content.decode()
    assert "<td>XP</td><td>1020</td><td>Silver</td>" in content
    section = content.split(f"Last {RECENT_AWARDS} awards, newest first:")[1]
    assert section.count("<tr><td>") == RECENT_AWARDS
    assert "<td>xp</td><td>119</td><td>1019</td><td>metric</td>" in section
    assert "<td>110</td>" in section  # the oldest of the ten
    assert "<td>109</td>" not in section
    assert f"{admin_url(PointsAward)}?user={alice.pk}" in section


def test_end_user_page_queries_do_not_grow_with_awards(
    staff_client: Any, tenant: Tenant, system: PointsSystem, alice: EndUser
) -> None:
    url = admin_url(EndUser, "change", alice.pk)
    staff_client.get(url)  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    coins, _ = configuration.system_create(tenant, {"key": "coins", "name": "Coins"})
    record_awards(tenant, alice, coins, 30, first=100)
    record_awards(tenant, alice, system, 30, first=200)
    staff_client.get(url)  # the new system bumped the configuration: snapshots reload once
    with CaptureQueriesContext(connection) as many:
        staff_client.get(url)
    assert len(many) == len(few)


# Query counts


def populate(names: list[str], rows_each: int) -> None:
    """Per organization: a system with a level, a trigger and a boost, and users with awards."""
    for name in names:
        org = OrganizationWithKey(name)
        system, _ = configuration.system_create(
            org.tenant,
            {
                "key": "xp",
                "name": "XP",
                "levels": [{"key": "one", "name": "One", "points": 1}],
                "triggers": [{"type": "user_creation", "points": 5}],
                "boosts": [
                    {"name": "Double", "start": dt.date(2026, 1, 1), "multiplier": Decimal(2)}
                ],
            },
        )
        for user in EndUserFactory.create_batch(rows_each, tenant=org.tenant):
            record_awards(org.tenant, user, system, 2)


@pytest.mark.parametrize("model", [*CONFIG_MODELS, *LEDGER_MODELS])
def test_changelist_queries_do_not_grow_with_rows(
    staff_client: Any, django_assert_max_num_queries: Any, model: type
) -> None:
    # Several organizations: a default tenant's label reads its environment and organization.
    populate(["A"], 1)
    url = admin_url(model)
    staff_client.get(url)  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    populate(["B", "C", "D", "E"], 5)
    with CaptureQueriesContext(connection) as many:
        response = staff_client.get(url)
    assert len(response.context["cl"].result_list) > 4
    assert len(many) == len(few)
    with django_assert_max_num_queries(10):
        staff_client.get(url + "?q=user-1")


def test_system_page_queries_do_not_grow_with_its_configuration(
    staff_client: Any, tenant: Tenant, system: PointsSystem, metric: Metric
) -> None:
    url = admin_url(PointsSystem, "change", system.pk)
    staff_client.get(url)  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    for n in range(5):
        configuration.level_create(tenant, system, {"key": f"l{n}", "name": "L", "points": n})
        configuration.trigger_create(
            tenant,
            system,
            {"type": "metric", "points": 1, "metricId": metric.public_id, "metricThreshold": n + 1},
        )
        boost = {"name": f"B{n}", "start": dt.date(2026, 1, 1), "multiplier": Decimal(3)}
        configuration.boost_create(tenant, system, boost)
    with CaptureQueriesContext(connection) as many:
        staff_client.get(url)
    assert len(many) == len(few)


def test_bulk_delete_of_triggers_goes_through_the_service(
    staff_client: Any, tenant: Tenant, system: PointsSystem
) -> None:
    trigger = system.triggers.get()
    version = version_of(tenant)
    response = staff_client.post(
        admin_url(PointsTrigger),
        {"action": "delete_selected", "_selected_action": [trigger.pk], "post": "yes"},
        follow=True,
    )
    assert response.status_code == 200
    assert message_texts(response)
    assert not system.triggers.exists()
    assert version_of(tenant) > version
