"""Streak settings are edited through the settings service with the admin API's validation;
streak state, periods and pauses are shown, and changed only by actions that call services."""

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Tenant
from apps.metrics.models import Metric
from apps.streaks.admin import RECENT_PERIODS
from apps.streaks.choices import PauseStatus
from apps.streaks.models import (
    StreakCondition,
    StreakPause,
    StreakPeriod,
    StreakSettings,
    StreakState,
)
from apps.streaks.selectors import streak_config
from apps.streaks.services import streak_pause_create, streak_settings_update
from apps.users.models import EndUser
from tests.dashboard.conftest import admin_url, message_texts
from tests.factories import EndUserFactory, MetricFactory, OrganizationWithKey

# Dashboard requests run at this instant too: the staff session, made on the real clock,
# is still valid at an earlier one.
TODAY = dt.datetime(2026, 3, 12, 12, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)

DAILY_WITH_FREEZES = {
    "frequency": "daily",
    "metrics": [{"key": "words", "threshold": 1}],
    "freezes": {"startCount": 0, "maxCount": 2},
}


@pytest.fixture
def clock() -> Iterator[Any]:
    with time_machine.travel(TODAY, tick=False) as traveller:
        yield traveller


def event(api_client: Any, clock: Any, user_id: str, when: dt.datetime) -> None:
    clock.move_to(when)
    response = api_client.post("/v1/metrics/words/event", {"user": {"id": user_id}, "value": 1})
    assert response.status_code == 201, response.content
    clock.move_to(TODAY)


@pytest.fixture
def streaks(api_client: Any, clock: Any, tenant: Tenant, metric: Metric) -> dict[str, EndUser]:
    """alice and bob have streaks of 2 days (yesterday and today), through the event API."""
    streak_settings_update(tenant, DAILY_WITH_FREEZES)
    for user_id in ("alice", "bob"):
        event(api_client, clock, user_id, TODAY - DAY)
        event(api_client, clock, user_id, TODAY)
    return {u.external_id: u for u in EndUser.objects.filter(tenant=tenant)}


def lengths(tenant: Tenant) -> dict[str, int]:
    states = StreakState.objects.filter(tenant=tenant).select_related("user")
    return {s.user.external_id: s.length for s in states}


def run_action(client: Any, model: type, action: str, objs: list[Any]) -> list[str]:
    response = client.post(
        admin_url(model),
        {"action": action, "_selected_action": [o.pk for o in objs]},
        follow=True,
    )
    assert response.status_code == 200
    return message_texts(response)


# Pages


def test_streak_pages_render(staff_client: Any, tenant: Tenant, streaks: dict) -> None:
    streak_pause_create(tenant, streaks["alice"], TODAY.date() + DAY, TODAY.date() + 3 * DAY)
    objects = {
        StreakSettings: StreakSettings.objects.get(),
        StreakState: StreakState.objects.first(),
        StreakPeriod: StreakPeriod.objects.first(),
        StreakPause: StreakPause.objects.get(),
    }
    for model, obj in objects.items():
        assert staff_client.get(admin_url(model)).status_code == 200, model
        assert staff_client.get(admin_url(model, "change", obj.pk)).status_code == 200, model
    assert staff_client.get(admin_url(StreakSettings, "add")).status_code == 200
    index = staff_client.get("/dashboard/")
    for model in objects:
        assert admin_url(model).encode() in index.content


@pytest.mark.parametrize("model", [StreakState, StreakPeriod, StreakPause])
def test_recorded_streaks_are_read_only(
    staff_client: Any, tenant: Tenant, streaks: dict, model: type
) -> None:
    streak_pause_create(tenant, streaks["alice"], TODAY.date(), TODAY.date())
    obj = model.objects.first()
    assert staff_client.get(admin_url(model, "add")).status_code == 403
    assert staff_client.post(admin_url(model, "change", obj.pk), {}).status_code == 403
    assert staff_client.get(admin_url(model, "delete", obj.pk)).status_code == 403
    page = staff_client.get(admin_url(model, "change", obj.pk))
    assert b'type="submit"' not in page.content.split(b'id="content-main"')[1]


def test_streak_states_are_searched_by_exact_user_id(staff_client: Any, streaks: dict) -> None:
    def shown(query: str) -> list[str]:
        response = staff_client.get(admin_url(StreakState) + query)
        assert response.status_code == 200
        return sorted(s.user.external_id for s in response.context["cl"].result_list)

    assert shown("") == ["alice", "bob"]
    assert shown("?q=alice") == ["alice"]
    assert shown("?q=ali") == []


# Settings


def settings_form(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "frequency": "daily",
        "evaluation_mode": "AND",
        "days_off": ["0", "6"],
        "conditions": "words:500",
        "freezes_enabled": "on",
        "freeze_start_count": "1",
        "freeze_max_count": "3",
        "freeze_auto_earn_interval": "7",
        "freeze_auto_earn_amount": "1",
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def version_of(tenant: Tenant) -> int:
    return Tenant.objects.get(pk=tenant.pk).config_version


def test_adding_settings_goes_through_the_service(
    staff_client: Any, api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    version = version_of(tenant)

    response = staff_client.post(admin_url(StreakSettings, "add"), settings_form(tenant=tenant.pk))

    assert response.status_code == 302, response.context["adminform"].form.errors
    assert version_of(tenant) > version
    # The admin API reads back what the dashboard set.
    assert api_client.get("/admin/v1/streaks/settings").json() == {
        "frequency": "daily",
        "evaluationMode": "AND",
        "customizationEnabled": False,
        "daysOff": [0, 6],
        "metrics": [{"key": "words", "threshold": 500}],
        "freezes": {"startCount": 1, "maxCount": 3, "autoEarnInterval": 7, "autoEarnAmount": 1},
    }


def test_editing_settings_goes_through_the_service(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    pages = MetricFactory(tenant=tenant, key="pages")
    streak_settings_update(tenant, DAILY_WITH_FREEZES)
    settings = StreakSettings.objects.get()
    url = admin_url(StreakSettings, "change", settings.pk)
    version = version_of(tenant)

    page = staff_client.get(url)
    assert page.status_code == 200
    initial = page.context["adminform"].form.initial
    assert (initial["conditions"], initial["freeze_max_count"]) == ("words:1", 2)

    changes = settings_form(
        frequency="weekly",
        evaluation_mode="OR",
        customization_enabled="on",
        days_off=None,
        conditions=" words:10 , pages:3, ",
        freezes_enabled=None,
    )
    response = staff_client.post(url, changes)

    assert response.status_code == 302, response.context["adminform"].form.errors
    assert version_of(tenant) > version
    config = streak_config(Tenant.objects.get(pk=tenant.pk))
    assert (config.frequency, config.mode, config.customization_enabled) == ("weekly", "OR", True)
    assert config.thresholds == {metric.pk: Decimal(10), pages.pk: Decimal(3)}
    assert not config.freezes_enabled
    assert StreakSettings.objects.count() == 1


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        (
            {"freeze_start_count": "4", "freeze_max_count": "3"},
            "freezes_enabled",
            "maxCount must be at least startCount",
        ),
        ({"freeze_start_count": ""}, "freeze_start_count", "This field is required."),
        ({"freeze_max_count": "101"}, "freeze_max_count", "less than or equal to 100"),
        ({"freeze_auto_earn_amount": ""}, "freezes_enabled", "set both autoEarnInterval"),
        ({"conditions": "words500"}, "conditions", "write each condition as key:threshold"),
        ({"conditions": "words:0"}, "conditions", "words: Ensure this value is greater"),
        ({"conditions": "words:1.5"}, "conditions", "words: A valid integer is required."),
        ({"conditions": "words:1, words:2"}, "conditions", "metric keys must be unique"),
        ({"days_off": [str(d) for d in range(7)]}, "days_off", "no more than 6"),
        ({"frequency": "yearly"}, "frequency", "Select a valid choice"),
        ({"conditions": "nope:5"}, None, "metrics: unknown metric keys: nope"),
        ({"frequency": "weekly"}, None, "daysOff is only allowed with daily frequency"),
    ],
)
def test_invalid_settings_are_a_form_error_and_change_nothing(
    staff_client: Any,
    tenant: Tenant,
    metric: Metric,
    changes: dict[str, Any],
    field: str | None,
    message: str,
) -> None:
    streak_settings_update(tenant, DAILY_WITH_FREEZES)
    settings = StreakSettings.objects.get()
    version = version_of(tenant)

    response = staff_client.post(
        admin_url(StreakSettings, "change", settings.pk), settings_form(**changes)
    )

    assert response.status_code == 200
    form = response.context["adminform"].form
    errors = form.non_field_errors() if field is None else form.errors.get(field, [])
    assert message in " ".join(errors), form.errors
    assert message.encode() in response.content
    assert version_of(tenant) == version
    settings.refresh_from_db()
    assert (settings.frequency, settings.freeze_max_count, settings.days_off) == ("daily", 2, [])
    assert list(StreakCondition.objects.values_list("metric_id", "threshold")) == [
        (metric.pk, Decimal(1))
    ]


def test_a_configured_tenant_is_not_added_twice(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant, metric: Metric
) -> None:
    streak_settings_update(tenant, {"frequency": "weekly"})
    page = staff_client.get(admin_url(StreakSettings, "add"))
    choices = [value for value, _ in page.context["adminform"].form.fields["tenant"].choices]
    assert other_tenant.pk in choices
    assert tenant.pk not in choices

    response = staff_client.post(admin_url(StreakSettings, "add"), settings_form(tenant=tenant.pk))
    assert response.status_code == 200
    assert "tenant" in response.context["adminform"].form.errors
    assert StreakSettings.objects.get().frequency == "weekly"


def test_settings_are_not_deleted_from_the_dashboard(staff_client: Any, tenant: Tenant) -> None:
    streak_settings_update(tenant, {"frequency": "weekly"})
    settings = StreakSettings.objects.get()
    assert staff_client.get(admin_url(StreakSettings, "delete", settings.pk)).status_code == 403
    run_action(staff_client, StreakSettings, "delete_selected", [settings])
    assert StreakSettings.objects.exists()


def test_settings_list_shows_each_tenants_conditions(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant, metric: Metric
) -> None:
    MetricFactory(tenant=other_tenant, key="logins")
    streak_settings_update(tenant, DAILY_WITH_FREEZES)
    streak_settings_update(other_tenant, {"metrics": [{"key": "logins", "threshold": 2}]})

    response = staff_client.get(admin_url(StreakSettings))

    assert response.status_code == 200
    content = response.content.decode()
    assert "words:1" in content
    assert "logins:2" in content
    assert "start 0, max 2" in content


# Actions


def test_resetting_and_restoring_streaks(
    staff_client: Any, api_client: Any, tenant: Tenant, streaks: dict
) -> None:
    states = list(StreakState.objects.all())

    assert run_action(staff_client, StreakState, "reset_streaks", states) == ["Reset 2 streaks."]
    assert lengths(tenant) == {"alice": 0, "bob": 0}
    reset = api_client.get("/v1/users/alice/streak").json()
    assert reset["length"] == 0
    assert reset["streakHistory"][-1]["resetAt"]

    messages = run_action(staff_client, StreakState, "restore_streaks", states[:1])
    assert messages == ["Restored 1 streak."]
    assert sorted(lengths(tenant).values()) == [0, 2]

    messages = run_action(staff_client, StreakState, "restore_streaks", states)
    assert messages == ["Restored 1 streak.", "1 streak had nothing longer to restore."]
    assert lengths(tenant) == {"alice": 2, "bob": 2}
    assert api_client.get("/v1/users/bob/streak").json()["length"] == 2


def test_granting_freezes_stops_at_the_maximum(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant, streaks: dict
) -> None:
    # carol's tenant has no freezes: the admin API's rule refuses her grant.
    carol = EndUserFactory(tenant=other_tenant, external_id="carol")
    StreakState.objects.create(tenant=other_tenant, user=carol, frequency="daily")
    states = list(StreakState.objects.all())

    def grant() -> list[str]:
        return run_action(staff_client, StreakState, "grant_freeze", states)

    refused = "Streak freezes are not enabled for this tenant (1 user)"
    assert grant() == ["Granted a freeze to 2 users.", refused]
    assert grant()[0] == "Granted a freeze to 2 users."
    assert grant() == [
        "Granted a freeze to 0 users.",
        "2 users already had the maximum number of freezes.",
        refused,
    ]
    freezes = dict(StreakState.objects.values_list("user__external_id", "freezes"))
    assert freezes == {"alice": 2, "bob": 2, "carol": 0}


def test_actions_need_the_change_permission(
    client: Any, staff_client: Any, tenant: Tenant, streaks: dict
) -> None:
    viewer = get_user_model().objects.create_user(username="viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_streakstate"))
    client.force_login(viewer)
    states = list(StreakState.objects.all())

    page = client.get(admin_url(StreakState))
    assert page.status_code == 200
    assert b"reset_streaks" not in page.content
    run_action(client, StreakState, "reset_streaks", states)
    assert lengths(tenant) == {"alice": 2, "bob": 2}


def test_archiving_pauses(staff_client: Any, tenant: Tenant, streaks: dict) -> None:
    start = TODAY.date() + DAY
    pauses = [streak_pause_create(tenant, user, start, start) for user in streaks.values()]

    assert run_action(staff_client, StreakPause, "archive_pauses", pauses[:1]) == [
        "Archived 1 pause."
    ]
    assert run_action(staff_client, StreakPause, "archive_pauses", pauses) == [
        "Archived 1 pause.",
        "1 pause already archived.",
    ]
    assert set(StreakPause.objects.values_list("status", flat=True)) == {PauseStatus.ARCHIVED}


# End-user page


def test_end_user_page_shows_the_streak_and_its_latest_periods(
    staff_client: Any, tenant: Tenant, streaks: dict
) -> None:
    alice = streaks["alice"]
    # Older periods written directly: the page reads them, it never writes them.
    StreakPeriod.objects.bulk_create(
        StreakPeriod(
            tenant=tenant,
            user=alice,
            frequency="daily",
            period_start=TODAY.date() - n * DAY,
            period_end=TODAY.date() - n * DAY,
            length=100 + n,
            extended=True,
        )
        for n in range(2, 40)
    )

    response = staff_client.get(admin_url(EndUser, "change", alice.pk))

    assert response.status_code == 200
    content = response.content.decode()
    section = content.split("Last 10 periods, newest first:")[1]
    # length, started, expires, freezes, frequency
    assert "<td>2</td><td>March 11, 2026</td><td>March 13, 2026</td><td>0 of 2</td>" in content
    assert section.count("<tr><td>") == RECENT_PERIODS
    assert "<td>March 12, 2026</td><td>March 12, 2026</td><td>2</td>" in section
    assert "<td>103</td>" in section  # 3 March, the oldest of the ten
    assert "<td>110</td>" not in section
    assert f"?user={alice.pk}" in section


def test_end_user_page_queries_do_not_grow_with_streak_history(
    staff_client: Any, tenant: Tenant, streaks: dict
) -> None:
    alice = streaks["alice"]
    url = admin_url(EndUser, "change", alice.pk)
    staff_client.get(url)  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    streak_pause_create(tenant, alice, TODAY.date() + DAY, TODAY.date() + 2 * DAY)
    StreakPeriod.objects.bulk_create(
        StreakPeriod(
            tenant=tenant,
            user=alice,
            frequency="daily",
            period_start=TODAY.date() - n * DAY,
            period_end=TODAY.date() - n * DAY,
            length=1,
        )
        for n in range(2, 60)
    )
    with CaptureQueriesContext(connection) as many:
        staff_client.get(url)
    assert len(many) == len(few)


# Query counts


def test_streak_state_list_queries_do_not_grow_with_rows(
    staff_client: Any, django_assert_max_num_queries: Any
) -> None:
    # Several organizations: a default tenant's label reads its environment and organization.
    def populate(names: list[str], states_each: int) -> None:
        for name in names:
            org = OrganizationWithKey(name)
            StreakState.objects.bulk_create(
                StreakState(
                    tenant=org.tenant,
                    user=user,
                    frequency="daily",
                    length=3,
                    started=TODAY.date() - 2 * DAY,
                    settled_through=TODAY.date(),
                    freezes=1,
                )
                for user in EndUserFactory.create_batch(states_each, tenant=org.tenant)
            )

    populate(["A"], 2)
    url = admin_url(StreakState)
    staff_client.get(url)  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    populate(["B", "C", "D", "E"], 10)
    with CaptureQueriesContext(connection) as many:
        response = staff_client.get(url)
    assert len(response.context["cl"].result_list) == 42
    assert len(many) == len(few)
    with django_assert_max_num_queries(8):
        staff_client.get(url + "?q=user-1")
