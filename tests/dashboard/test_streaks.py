"""The selected tenant's streak settings are edited through the settings service with the admin
API's body (conditions as rows, days off as checkboxes; a change of frequency is confirmed with
the number of streaks that restart); streak state, periods and pauses are shown, and changed
only by actions and forms that call the services (a reset is confirmed with counts)."""

import dataclasses
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
from apps.streaks.choices import PauseStatus
from apps.streaks.configuration import streak_settings_update
from apps.streaks.domain import FreezeSettings, TenantStreakSettings
from apps.streaks.models import (
    StreakCondition,
    StreakPause,
    StreakPeriod,
    StreakSettings,
    StreakState,
)
from apps.streaks.selectors import streak_config
from apps.streaks.services import streak_pause_create
from apps.users.models import EndUser
from tests.dashboard.conftest import admin_url, message_texts, page_main, switch_tenant
from tests.factories import EndUserFactory, MetricFactory

# Dashboard requests run at this instant too: the staff session, made on the real clock,
# is still valid at an earlier one.
TODAY = dt.datetime(2026, 3, 12, 12, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)

DAILY_WITH_FREEZES = TenantStreakSettings(
    frequency="daily",
    conditions=[("words", 1)],
    freezes=FreezeSettings(start_count=0, max_count=2),
)


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


def run_action(client: Any, model: type, action: str, objs: list[Any], **confirm: str) -> list[str]:
    """Runs an action; `post="yes"` is the answer of its confirmation page, if it has one."""
    response = client.post(
        admin_url(model),
        {"action": action, "_selected_action": [o.pk for o in objs], **confirm},
        follow=True,
    )
    assert response.status_code == 200
    return message_texts(response)


def listed(client: Any, model: type) -> list[Any]:
    response = client.get(admin_url(model))
    assert response.status_code == 200
    return list(response.context["cl"].result_list)


# Pages


def test_streak_pages_render(staff_client: Any, tenant: Tenant, streaks: dict) -> None:
    streak_pause_create(
        tenant, streaks["alice"], start=TODAY.date() + DAY, end=TODAY.date() + 3 * DAY
    )
    objects = {
        StreakSettings: StreakSettings.objects.get(),
        StreakState: StreakState.objects.first(),
        StreakPeriod: StreakPeriod.objects.first(),
        StreakPause: StreakPause.objects.get(),
    }
    for model, obj in objects.items():
        assert staff_client.get(admin_url(model)).status_code in (200, 302), model
        assert staff_client.get(admin_url(model, "change", obj.pk)).status_code == 200, model
    assert staff_client.get(admin_url(StreakPause, "add")).status_code == 200
    index = staff_client.get("/dashboard/")
    for model in (StreakSettings, StreakState, StreakPause):
        assert admin_url(model).encode() in index.content


@pytest.mark.parametrize("model", [StreakState, StreakPeriod, StreakPause])
def test_recorded_streaks_are_read_only(
    staff_client: Any, tenant: Tenant, streaks: dict, model: type
) -> None:
    streak_pause_create(tenant, streaks["alice"], start=TODAY.date(), end=TODAY.date())
    obj = model.objects.first()
    if model is not StreakPause:  # pauses are added from the dashboard (see below)
        assert staff_client.get(admin_url(model, "add")).status_code == 403
    assert staff_client.post(admin_url(model, "change", obj.pk), {}).status_code == 403
    assert staff_client.get(admin_url(model, "delete", obj.pk)).status_code == 403
    page = staff_client.get(admin_url(model, "change", obj.pk))
    assert b'type="submit"' not in page_main(page.content)
    assert b'name="start"' not in page.content  # shown, not an input


def test_streak_states_are_searched_by_exact_user_id(staff_client: Any, streaks: dict) -> None:
    def shown(query: str) -> list[str]:
        response = staff_client.get(admin_url(StreakState) + query)
        assert response.status_code == 200
        return sorted(s.user.external_id for s in response.context["cl"].result_list)

    assert shown("") == ["alice", "bob"]
    assert shown("?q=alice") == ["alice"]
    assert shown("?q=ali") == []


# Settings


def settings_form(conditions: list[tuple[str, str]] | None = None, **changes: Any) -> dict:
    """The page as posted: conditions are rows of metric and threshold."""
    rows = [("words", "500")] if conditions is None else conditions
    data: dict[str, Any] = {
        "frequency": "daily",
        "evaluation_mode": "AND",
        "days_off": ["0", "6"],
        "conditions-metric": [key for key, _ in rows],
        "conditions-threshold": [threshold for _, threshold in rows],
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


def settings_url(tenant: Tenant) -> str:
    return admin_url(StreakSettings, "change", StreakSettings.objects.get(tenant=tenant).pk)


def test_adding_settings_goes_through_the_service(
    staff_client: Any, api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    # A tenant without settings is sent to the add page.
    response = staff_client.get(admin_url(StreakSettings))
    assert response["Location"] == admin_url(StreakSettings, "add")
    version = version_of(tenant)

    response = staff_client.post(admin_url(StreakSettings, "add"), settings_form(tenant=tenant.pk))

    assert response.status_code == 302, response.context["form"].errors
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


def test_the_settings_page_shows_conditions_as_rows_and_days_off_as_checkboxes(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    MetricFactory(tenant=tenant, key="pages")
    streak_settings_update(tenant, dataclasses.replace(DAILY_WITH_FREEZES, days_off=[0, 3]))
    # The list opens the selected tenant's settings.
    assert staff_client.get(admin_url(StreakSettings))["Location"] == settings_url(tenant)

    page = staff_client.get(settings_url(tenant))

    initial = page.context["form"].initial
    assert (initial["conditions"], initial["days_off"]) == ([("words", "1")], [0, 3])
    content = page.content.decode()
    assert '<select name="conditions-metric" aria-label="Metric">' in content
    # Metrics named by name, then key.
    assert '<option value="words" selected>Words (words)</option>' in content
    assert '<option value="pages">Pages (pages)</option>' in content
    assert 'name="conditions-threshold" value="1"' in content
    assert "Add a condition" in content
    assert "streaks/settings.js" in content
    # The week from Monday, as checkboxes carrying the API's numbers (0 is Sunday).
    boxes = [
        line.split('value="')[1].split('"')[0]
        for line in content.split("<input")
        if 'name="days_off"' in line
    ]
    assert boxes == ["1", "2", "3", "4", "5", "6", "0"]
    assert 'type="checkbox" name="days_off" value="3"' in content
    assert 'value="3" class="streak-days-off" id="id_days_off_2" checked' in content


def test_editing_settings_goes_through_the_service(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    pages = MetricFactory(tenant=tenant, key="pages")
    streak_settings_update(tenant, DAILY_WITH_FREEZES)
    version = version_of(tenant)

    changes = settings_form(
        conditions=[("words", "10"), ("", ""), ("pages", " 3 ")],
        evaluation_mode="OR",
        customization_enabled="on",
        days_off=["1"],
        freezes_enabled=None,
    )
    response = staff_client.post(settings_url(tenant), changes, follow=True)

    assert response.status_code == 200
    assert "(daily)</a>” was changed successfully." in message_texts(response)[0]
    assert version_of(tenant) > version
    config = streak_config(Tenant.objects.get(pk=tenant.pk))
    assert (config.frequency, config.mode, config.customization_enabled) == ("daily", "OR", True)
    assert config.days_off == {1}
    assert config.thresholds == {metric.pk: Decimal(10), pages.pk: Decimal(3)}
    assert not config.freezes_enabled
    assert StreakSettings.objects.count() == 1


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        (
            {"freeze_start_count": "4", "freeze_max_count": "3"},
            "freezes_enabled",
            "“Maximum freezes” must be at least “Freezes at start”",
        ),
        ({"freeze_start_count": ""}, "freeze_start_count", "This field is required."),
        ({"freeze_max_count": "101"}, "freeze_max_count", "less than or equal to 100"),
        (
            {"freeze_auto_earn_amount": ""},
            "freezes_enabled",
            "Set both “Earn freezes every” and “Freezes earned each time”, or neither",
        ),
        ({"conditions": [("", "5")]}, "conditions", "Choose the metric of the threshold 5."),
        ({"conditions": [("words", "")]}, "conditions", "Give the threshold of words."),
        ({"conditions": [("words", "0")]}, "conditions", "Words: Ensure this value is greater"),
        ({"conditions": [("words", "1.5")]}, "conditions", "Words: A valid integer is required."),
        (
            {"conditions": [("words", "1"), ("words", "2")]},
            "conditions",
            "Metric keys must be unique",
        ),
        ({"days_off": [str(d) for d in range(7)]}, "days_off", "no more than 6"),
        ({"frequency": "yearly"}, "frequency", "Select a valid choice"),
        # The service's rules, next to the input they name, in the page's words.
        ({"conditions": [("nope", "5")]}, "conditions", "Unknown metric keys: nope"),
        (
            {"frequency": "weekly", "_confirm_frequency": "1"},
            "days_off",
            "“Days off” is only allowed with daily frequency",
        ),
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

    response = staff_client.post(settings_url(tenant), settings_form(**changes))

    assert response.status_code == 200
    form = response.context["form"]
    errors = form.non_field_errors() if field is None else form.errors.get(field, [])
    assert message in " ".join(errors), form.errors
    assert message.encode() in response.content
    assert version_of(tenant) == version
    settings.refresh_from_db()
    assert (settings.frequency, settings.freeze_max_count, settings.days_off) == ("daily", 2, [])
    assert list(StreakCondition.objects.values_list("metric_id", "threshold")) == [
        (metric.pk, Decimal(1))
    ]


def test_settings_of_a_configured_tenant_are_edited_not_added_again(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant, metric: Metric
) -> None:
    streak_settings_update(tenant, TenantStreakSettings(frequency="weekly"))

    assert staff_client.get(admin_url(StreakSettings, "add")).status_code == 403
    response = staff_client.post(admin_url(StreakSettings, "add"), settings_form(tenant=tenant.pk))
    assert response.status_code == 403
    assert StreakSettings.objects.get().frequency == "weekly"

    # Another tenant without settings adds its own (the one selected in the header).
    switch_tenant(staff_client, other_tenant)
    page = staff_client.get(admin_url(StreakSettings, "add"))
    assert page.context["form"].tenant == other_tenant


def test_settings_are_not_deleted_from_the_dashboard(staff_client: Any, tenant: Tenant) -> None:
    streak_settings_update(tenant, TenantStreakSettings(frequency="weekly"))
    settings = StreakSettings.objects.get()
    assert staff_client.get(admin_url(StreakSettings, "delete", settings.pk)).status_code == 403
    run_action(staff_client, StreakSettings, "delete_selected", [settings])
    assert StreakSettings.objects.exists()


def test_another_tenants_streaks_are_out_of_reach(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant, streaks: dict
) -> None:
    MetricFactory(tenant=other_tenant, key="logins")
    streak_settings_update(other_tenant, TenantStreakSettings(conditions=[("logins", 2)]))
    carol = EndUserFactory(tenant=other_tenant, external_id="carol")
    theirs = StreakState.objects.create(
        tenant=other_tenant, user=carol, frequency="daily", length=9
    )
    their_settings = StreakSettings.objects.get(tenant=other_tenant)

    response = staff_client.get(admin_url(StreakSettings, "change", their_settings.pk))
    assert response.status_code == 404
    response = staff_client.post(
        admin_url(StreakSettings, "change", their_settings.pk), settings_form(frequency="weekly")
    )
    assert response.status_code == 404
    assert staff_client.get(admin_url(StreakState, "change", theirs.pk)).status_code == 302
    assert lengths(other_tenant) == {"carol": 9}
    # An action on a selection naming their streak leaves it alone.
    run_action(staff_client, StreakState, "reset_streaks", [theirs], post="yes")
    assert lengths(other_tenant) == {"carol": 9}
    assert StreakSettings.objects.get(tenant=other_tenant).frequency == "daily"
    page = staff_client.get(settings_url(tenant))
    assert "logins" not in page.content.decode()

    switch_tenant(staff_client, other_tenant)
    assert staff_client.get(admin_url(StreakSettings))["Location"] == settings_url(other_tenant)
    assert [s.user.external_id for s in listed(staff_client, StreakState)] == ["carol"]


# Changing the frequency


def test_changing_the_frequency_is_confirmed_with_the_streaks_that_restart(
    staff_client: Any, api_client: Any, tenant: Tenant, metric: Metric, streaks: dict
) -> None:
    # A streak of 0 and one kept for another frequency do not restart: they are 0 already.
    carol = EndUserFactory(tenant=tenant, external_id="carol")
    StreakState.objects.create(tenant=tenant, user=carol, frequency="daily", length=0)
    dave = EndUserFactory(tenant=tenant, external_id="dave")
    StreakState.objects.create(tenant=tenant, user=dave, frequency="weekly", length=4)
    version = version_of(tenant)
    form = settings_form(conditions=[("words", "1")], frequency="weekly", days_off=None)

    page = staff_client.post(settings_url(tenant), form)

    assert page.status_code == 200
    assert page.context["restarting"] == 2
    content = page.content.decode()
    assert "<strong>2</strong> active streaks will restart (the longest is 2 periods)" in content
    assert "from <strong>daily</strong> to <strong>weekly</strong>" in content
    assert 'value="Yes, change to weekly and restart 2 streaks"' in content
    assert 'name="_confirm_frequency"' in content
    # Nothing changed yet.
    assert version_of(tenant) == version
    assert StreakSettings.objects.get().frequency == "daily"
    assert api_client.get("/v1/users/alice/streak").json()["length"] == 2

    # The confirmation posts the same input back, with the confirmation.
    posted = {}
    for name, value in page.context["posted"]:
        posted.setdefault(name, []).append(value)
    response = staff_client.post(
        settings_url(tenant), {**posted, "_confirm_frequency": "1"}, follow=True
    )

    assert response.status_code == 200
    restarted, changed = message_texts(response)
    assert restarted == "Streaks are now weekly: 2 active streaks restarted from 0."
    assert "(weekly)</a>” was changed successfully." in changed
    config = streak_config(Tenant.objects.get(pk=tenant.pk))
    assert (config.frequency, config.thresholds, config.freeze_max_count) == (
        "weekly",
        {metric.pk: Decimal(1)},
        3,
    )
    alice = api_client.get("/v1/users/alice/streak").json()
    assert (alice["length"], alice["frequency"]) == (0, "weekly")


def test_saving_the_same_frequency_needs_no_confirmation(
    staff_client: Any, tenant: Tenant, streaks: dict
) -> None:
    response = staff_client.post(settings_url(tenant), settings_form(conditions=[("words", "2")]))
    assert response.status_code == 302
    assert lengths(tenant) == {"alice": 2, "bob": 2}


def test_a_frequency_change_with_invalid_input_shows_the_errors_first(
    staff_client: Any, tenant: Tenant, streaks: dict
) -> None:
    response = staff_client.post(
        settings_url(tenant), settings_form(frequency="monthly", freeze_max_count="0")
    )
    assert response.status_code == 200
    assert response.context["form"].errors
    assert StreakSettings.objects.get().frequency == "daily"


# Actions


def test_resetting_streaks_is_confirmed_with_counts(
    staff_client: Any, api_client: Any, tenant: Tenant, streaks: dict
) -> None:
    carol = EndUserFactory(tenant=tenant, external_id="carol")
    StreakState.objects.create(tenant=tenant, user=carol, frequency="daily", length=0)
    states = list(StreakState.objects.all())

    page = staff_client.post(
        admin_url(StreakState),
        {"action": "reset_streaks", "_selected_action": [s.pk for s in states]},
    )

    assert page.status_code == 200
    assert (page.context["count"], page.context["live"], page.context["periods"]) == (3, 2, 4)
    content = page.content.decode()
    assert "<strong>3</strong> streaks selected: <strong>2</strong> are longer than 0" in content
    assert "4 periods in all" in content
    assert "<td>alice</td><td>2</td>" in content
    assert 'value="Yes, reset 3 streaks"' in content
    assert lengths(tenant) == {"alice": 2, "bob": 2, "carol": 0}

    messages = run_action(staff_client, StreakState, "reset_streaks", states, post="yes")

    assert messages == ["Reset 3 streaks."]
    assert lengths(tenant) == {"alice": 0, "bob": 0, "carol": 0}
    reset = api_client.get("/v1/users/alice/streak").json()
    assert reset["length"] == 0
    assert reset["streakHistory"][-1]["resetAt"]


def test_resetting_and_restoring_streaks(
    staff_client: Any, api_client: Any, tenant: Tenant, streaks: dict
) -> None:
    states = list(StreakState.objects.all())
    assert run_action(staff_client, StreakState, "reset_streaks", states, post="yes") == [
        "Reset 2 streaks."
    ]

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
    states = list(StreakState.objects.all())

    def grant() -> list[str]:
        return run_action(staff_client, StreakState, "grant_freeze", states)

    assert grant() == ["Granted a freeze to 2 users."]
    assert grant() == ["Granted a freeze to 2 users."]
    assert grant() == [
        "Granted a freeze to 0 users.",
        "2 users already had the maximum number of freezes.",
    ]
    freezes = dict(StreakState.objects.values_list("user__external_id", "freezes"))
    assert freezes == {"alice": 2, "bob": 2}

    # carol's tenant has no freezes: the admin API's rule refuses her grant.
    carol = EndUserFactory(tenant=other_tenant, external_id="carol")
    theirs = StreakState.objects.create(tenant=other_tenant, user=carol, frequency="daily")
    switch_tenant(staff_client, other_tenant)
    assert run_action(staff_client, StreakState, "grant_freeze", [theirs]) == [
        "Granted a freeze to 0 users.",
        "Streak freezes are not enabled for this tenant (1 user)",
    ]


def test_actions_need_the_change_permission(
    client: Any, staff_client: Any, tenant: Tenant, streaks: dict
) -> None:
    viewer = get_user_model().objects.create_user(username="viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_streakstate"))
    tenant.environment.organization.staff.add(viewer)
    client.force_login(viewer)
    states = list(StreakState.objects.all())

    page = client.get(admin_url(StreakState))
    assert page.status_code == 200
    assert b"reset_streaks" not in page.content
    run_action(client, StreakState, "reset_streaks", states, post="yes")
    assert lengths(tenant) == {"alice": 2, "bob": 2}


# Pauses


def test_adding_a_pause_goes_through_the_service(
    staff_client: Any, api_client: Any, tenant: Tenant, streaks: dict
) -> None:
    page = staff_client.get(admin_url(StreakPause, "add"))
    content = page.content.decode()
    assert 'class="vDateField"' in content
    assert "admin/js/calendar.js" in content
    assert 'value="Save and view" name="_continue"' in content  # once saved, only viewed
    data = {"tenant": tenant.pk, "user_id": "alice", "start": "2026-03-13", "end": "2026-03-15"}

    response = staff_client.post(admin_url(StreakPause, "add"), data)

    assert response.status_code == 302, response.context["form"].errors
    pauses = api_client.get("/v1/users/alice/streak").json()["pauses"]
    assert [(p["start"], p["end"]) for p in pauses] == [("2026-03-13", "2026-03-15")]


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"end": "2026-03-12"}, "end", "“End” must not be before “Start”"),
        (
            {"start": "2026-03-11"},
            "start",
            "“Start” must not be before today in the user's time zone",
        ),
        ({"user_id": "nobody"}, None, 'User not found: "nobody"'),
        ({"end": "2027-06-01"}, "start", "A pause lasts at most 366 days"),
        ({"start": "soon"}, "start", "Enter a valid date."),
        # One message, not one per letter of it.
        ({"user_id": "al\x07ice"}, "user_id", "This field must not contain control characters."),
    ],
)
def test_invalid_pauses_are_a_form_error(
    staff_client: Any,
    tenant: Tenant,
    streaks: dict,
    changes: dict[str, str],
    field: str | None,
    message: str,
) -> None:
    data = {"tenant": tenant.pk, "user_id": "alice", "start": "2026-03-13", "end": "2026-03-15"}

    response = staff_client.post(admin_url(StreakPause, "add"), {**data, **changes})

    assert response.status_code == 200
    form = response.context["form"]
    errors = form.non_field_errors() if field is None else form.errors.get(field, [])
    assert message in " ".join(errors), form.errors
    assert not StreakPause.objects.exists()


def test_archiving_pauses(staff_client: Any, tenant: Tenant, streaks: dict) -> None:
    start = TODAY.date() + DAY
    pauses = [
        streak_pause_create(tenant, user, start=start, end=start) for user in streaks.values()
    ]

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
    card = response.content.decode().split('id="user-streak"')[1].split("</section>")[0]
    # The current streak (its calendar is tested in test_user_page.py), and all its periods
    # one click away.
    assert "day in a row" in card or "days in a row" in card
    assert "Wed 11 Mar 2026" in card  # started
    assert f"?user={alice.pk}" in card


def test_end_user_page_queries_do_not_grow_with_streak_history(
    staff_client: Any, tenant: Tenant, streaks: dict
) -> None:
    alice = streaks["alice"]
    url = admin_url(EndUser, "change", alice.pk)
    staff_client.get(url)  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    streak_pause_create(tenant, alice, start=TODAY.date() + DAY, end=TODAY.date() + 2 * DAY)
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
    staff_client: Any, tenant: Tenant, django_assert_max_num_queries: Any
) -> None:
    def populate(count: int) -> None:
        StreakState.objects.bulk_create(
            StreakState(
                tenant=tenant,
                user=user,
                frequency="daily",
                length=3,
                started=TODAY.date() - 2 * DAY,
                settled_through=TODAY.date(),
                freezes=1,
            )
            for user in EndUserFactory.create_batch(count, tenant=tenant)
        )

    populate(2)
    url = admin_url(StreakState)
    staff_client.get(url)  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    populate(40)
    with CaptureQueriesContext(connection) as many:
        response = staff_client.get(url)
    assert len(response.context["cl"].result_list) == 42
    assert len(many) == len(few)
    with django_assert_max_num_queries(10):
        staff_client.get(url + "?q=user-1")
