"""Leaderboards are edited through the services the admin API uses (status
changes included); their live rankings show the API's ranks with values in the board's units,
by run, breakdown group and page, and say why a ranking is empty; entries and snapshots are
shown, never written."""

import datetime as dt
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.leaderboards import configuration
from apps.leaderboards.admin.display import DASH, value_text
from apps.leaderboards.choices import Status
from apps.leaderboards.domain import LeaderboardSettings
from apps.leaderboards.jobs import leaderboards_lifecycle
from apps.leaderboards.models import Leaderboard, LeaderboardEntry, LeaderboardSnapshot
from apps.metrics.models import Metric
from apps.points.models import PointsSystem
from apps.users.choices import AttributeType
from apps.users.models import Attribute, EndUser
from tests.dashboard.conftest import admin_url, message_texts, org_staff
from tests.factories import (
    AttributeFactory,
    EndUserFactory,
    MetricFactory,
    OrganizationWithKey,
    bump,
)

RECORD_MODELS = [LeaderboardEntry, LeaderboardSnapshot]
TODAY = timezone.now().date()


def version_of(tenant: Tenant) -> int:
    return Tenant.objects.get(pk=tenant.pk).config_version


@pytest.fixture
def plan(tenant: Tenant) -> Attribute:
    return AttributeFactory(tenant=tenant, key="plan", type=AttributeType.USER)


@pytest.fixture
def board(tenant: Tenant, metric: Metric) -> Leaderboard:
    data = {"name": "Words", "key": "words-board", "rank_by": "metric"}
    return configuration.leaderboard_create(
        tenant, LeaderboardSettings(**data, metric_id=str(metric.public_id), status="active")
    )


def record(board: Leaderboard, user: EndUser, value: int, run: dt.date | None = None) -> None:
    """An entry and a snapshot written directly: the dashboard only reads them."""
    now = timezone.now()
    run = run or board.start
    LeaderboardEntry.objects.create(
        leaderboard=board, run_start=run, user=user, value=value, reached_at=now
    )
    LeaderboardSnapshot.objects.create(
        leaderboard=board, run_start=run, user=user, date=TODAY, rank=1, value=value
    )


@pytest.fixture
def alice(tenant: Tenant, board: Leaderboard) -> EndUser:
    user = EndUserFactory(tenant=tenant, external_id="alice")
    record(board, user, 42)
    return user


def board_form(metric: Metric | None, /, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "Weekly words",
        "key": "weekly",
        "rank_by": "metric",
        "metric": metric.pk if metric else "",
        "points_system": "",
        "status": "inactive",
        "description": "",
        "max_participants": "100",
        "start": "2026-01-05",
        "end": "",
        "start_time": "",
        "end_time": "",
        "run_unit": "day",
        "run_interval": "7",
        "breakdown_attributes": [],
        "user_attributes-key": [],
        "user_attributes-value": [],
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def filters(*pairs: tuple[str, str]) -> dict[str, list[str]]:
    """Participation filters as the page's rows post them."""
    return {
        "user_attributes-key": [key for key, _ in pairs],
        "user_attributes-value": [value for _, value in pairs],
    }


def edit_form(board: Leaderboard, **changes: Any) -> dict[str, Any]:
    stored = {
        "name": board.name,
        "key": board.key,
        "status": board.status,
        "start": board.start.isoformat(),
        "max_participants": str(board.max_participants),
        "run_unit": "",
        "run_interval": "",
    }
    return board_form(board.metric, **{**stored, **changes})


def assert_refused(response: Any, field: str | None, message: str) -> None:
    assert response.status_code == 200
    form = response.context["form"]
    errors = form.non_field_errors() if field is None else form.errors.get(field, [])
    assert message in " ".join(errors), form.errors


# Pages


def test_leaderboard_pages_render(staff_client: Any, board: Leaderboard, alice: EndUser) -> None:
    objects = {
        Leaderboard: board,
        LeaderboardEntry: LeaderboardEntry.objects.get(),
        LeaderboardSnapshot: LeaderboardSnapshot.objects.get(),
    }
    for model, obj in objects.items():
        assert staff_client.get(admin_url(model)).status_code == 200, model
        assert staff_client.get(admin_url(model, "change", obj.pk)).status_code == 200, model
    assert staff_client.get(admin_url(Leaderboard, "add")).status_code == 200
    # Entries and snapshots are reached from the rankings, not from the navigation.
    index = staff_client.get("/dashboard/").content.decode()
    assert admin_url(Leaderboard) in index
    assert admin_url(LeaderboardEntry) not in index
    entries = staff_client.get(admin_url(LeaderboardEntry)).content.decode()
    assert f'<a href="{admin_url(EndUser, "change", alice.pk)}">alice</a>' in entries
    assert f'<a href="{rankings_url(board)}">Words</a>' in entries
    assert "42.000000" not in entries
    assert "Leaderboard entries" in entries
    assert "entrys" not in entries


def test_list_and_change_page_link_to_the_live_rankings(
    staff_client: Any, board: Leaderboard
) -> None:
    listing = staff_client.get(admin_url(Leaderboard)).content.decode()
    assert f'<a href="{rankings_url(board)}">Live rankings</a>' in listing
    assert "Total of Words" in listing

    page = staff_client.get(admin_url(Leaderboard, "change", board.pk)).content.decode()
    assert f'href="{rankings_url(board)}"' in page


def test_change_page_reads_like_the_board(
    staff_client: Any, tenant: Tenant, metric: Metric, plan: Attribute
) -> None:
    board = configuration.leaderboard_create(
        tenant,
        LeaderboardSettings(
            name="Weekly words",
            key="weekly",
            rank_by="metric",
            metric_id=str(metric.public_id),
            start=dt.date(2026, 1, 5),
            run_unit="day",
            run_interval=7,
            start_time=dt.time(8, 0),
            breakdown_attributes=[str(plan.public_id)],
            user_attributes=[{"attributeId": str(plan.public_id), "attributeValue": "pro"}],
        ),
    )

    page = staff_client.get(admin_url(Leaderboard, "change", board.pk)).content.decode()

    # Date pickers, the ranking method as choices, filters as rows, breakdown as checkboxes.
    assert re.search(r'<input type="text" name="start" value="2026-01-05"[^>]*vDateField', page)
    assert 'class="vTimeField"' in page
    # Dates, times and the run's length and unit share a line each, as they read.
    for pair in ("start field-end", "start_time field-end_time", "run_interval field-run_unit"):
        assert f'<div class="form-row field-{pair}">' in page, pair
    assert 'type="radio" name="rank_by" value="metric"' in page
    assert re.search(
        r'<select name="user_attributes-key"[^>]*>.*<option value="plan" selected', page
    )
    assert 'name="user_attributes-value" value="pro"' in page
    assert re.search(r'type="checkbox" name="breakdown_attributes" value="plan"[^>]*checked', page)
    # The summary above the settings.
    for text in ("Total of Words", "Restarts every 7 days", "From Jan. 5, 2026", "from 08:00"):
        assert text in page, text
    assert "End-users with plan = pro" in page


# Editing through the service


def test_creating_a_board_goes_through_the_service(
    staff_client: Any, api_client: Any, tenant: Tenant, metric: Metric, plan: Attribute
) -> None:
    version = version_of(tenant)

    response = staff_client.post(
        admin_url(Leaderboard, "add"),
        board_form(
            metric,
            tenant=tenant.pk,
            start_time="08:00",
            breakdown_attributes=["plan"],
            **filters(("plan", "pro")),
        ),
    )

    assert response.status_code == 302, response.context["form"].errors
    assert version_of(tenant) > version
    [body] = api_client.get("/admin/v1/leaderboards").json()
    assert {
        k: body[k] for k in ("key", "name", "status", "metricId", "runUnit", "runInterval")
    } == {
        "key": "weekly",
        "name": "Weekly words",
        "status": "inactive",
        "metricId": str(metric.public_id),
        "runUnit": "day",
        "runInterval": 7,
    }
    assert body["breakdownAttributes"] == [str(plan.public_id)]
    assert body["userAttributes"] == [{"attributeId": str(plan.public_id), "attributeValue": "pro"}]
    assert (body["description"], body["startTime"], body["endTime"]) == (None, "08:00", None)


def test_edit_page_shows_the_board_as_stored(
    staff_client: Any, tenant: Tenant, metric: Metric, plan: Attribute
) -> None:
    board = configuration.leaderboard_create(
        tenant,
        LeaderboardSettings(
            name="W",
            key="w",
            rank_by="metric",
            metric_id=str(metric.public_id),
            breakdown_attributes=[str(plan.public_id)],
            user_attributes=[{"attributeId": str(plan.public_id), "attributeValue": "pro"}],
        ),
    )
    page = staff_client.get(admin_url(Leaderboard, "change", board.pk))
    initial = page.context["form"].initial
    assert (initial["breakdown_attributes"], initial["user_attributes"]) == (
        ["plan"],
        [("plan", "pro")],
    )
    assert (initial["metric"], initial["status"]) == (metric.pk, "inactive")


def test_breakdown_attributes_keep_their_stored_order(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    # Groups are named by the attributes in order: adding one must not rename the others.
    region = AttributeFactory(tenant=tenant, key="region", type=AttributeType.USER)
    plan = AttributeFactory(tenant=tenant, key="plan", type=AttributeType.USER)
    tier = AttributeFactory(tenant=tenant, key="tier", type=AttributeType.USER)
    bump(tenant)
    data = {"name": "W", "key": "w", "rank_by": "metric", "metric_id": str(metric.public_id)}
    board = configuration.leaderboard_create(
        tenant, LeaderboardSettings(**data, breakdown_attributes=[str(region.public_id)])
    )

    response = staff_client.post(
        admin_url(Leaderboard, "change", board.pk),
        edit_form(board, breakdown_attributes=["plan", "region", "tier"]),
    )

    assert response.status_code == 302, response.context["form"].errors
    board.refresh_from_db()
    assert board.breakdown_attributes == [
        str(region.public_id),
        str(plan.public_id),
        str(tier.public_id),
    ]


def test_editing_a_live_board_keeps_its_frozen_fields(
    staff_client: Any, tenant: Tenant, board: Leaderboard
) -> None:
    version = version_of(tenant)

    response = staff_client.post(
        admin_url(Leaderboard, "change", board.pk), edit_form(board, name="All words")
    )

    assert response.status_code == 302, response.context["form"].errors
    assert version_of(tenant) > version
    board.refresh_from_db()
    assert (board.name, board.key, board.status) == ("All words", "words-board", Status.ACTIVE)


@pytest.mark.parametrize(
    ("start", "expected"),
    [(TODAY, Status.ACTIVE), (TODAY + dt.timedelta(days=3), Status.SCHEDULED)],
)
def test_status_changes_go_through_the_service(
    staff_client: Any, board: Leaderboard, start: dt.date, expected: str
) -> None:
    url = admin_url(Leaderboard, "change", board.pk)
    deactivate = staff_client.post(url, edit_form(board, status="inactive"))
    assert deactivate.status_code == 302, deactivate.context["form"].errors
    board.refresh_from_db()
    assert board.status == Status.INACTIVE

    # Going live from the dashboard is the same `status` key: a future start schedules it.
    activate = staff_client.post(
        url, edit_form(board, status="active", start=start.isoformat(), key="renamed")
    )

    assert activate.status_code == 302, activate.context["form"].errors
    board.refresh_from_db()
    assert (board.status, board.key, board.start) == (expected, "renamed", start)


def test_deleting_a_board_goes_through_the_service(
    staff_client: Any, tenant: Tenant, board: Leaderboard, alice: EndUser
) -> None:
    url = admin_url(Leaderboard, "delete", board.pk)
    confirm = staff_client.get(url)
    assert confirm.status_code == 200
    version = version_of(tenant)
    # alice is ranked: the key is typed, or nothing goes.
    assert staff_client.post(url, {"post": "yes"}).status_code == 200
    assert version_of(tenant) == version

    response = staff_client.post(url, {"post": "yes", f"confirm-{board.pk}": board.key})

    assert response.status_code == 302
    assert version_of(tenant) > version
    assert not Leaderboard.objects.exists()
    assert not LeaderboardEntry.objects.exists()
    assert any("deleted successfully" in m for m in message_texts(response))


def test_delete_confirmation_counts_entries_snapshots_and_runs(
    staff_client: Any, tenant: Tenant, board: Leaderboard, alice: EndUser
) -> None:
    earlier = board.start - dt.timedelta(days=7)
    record(board, EndUserFactory(tenant=tenant, external_id="bob"), 7)
    LeaderboardEntry.objects.create(
        leaderboard=board, run_start=earlier, user=alice, value=3, reached_at=timezone.now()
    )

    confirm = staff_client.get(admin_url(Leaderboard, "delete", board.pk))

    assert dict(confirm.context["model_count"]) == {
        "leaderboards": 1,
        "ranking entries": 3,
        "daily rank snapshots": 2,
        "runs": 2,
    }
    page = confirm.content.decode()
    assert "3 ranking entries in 2 runs and 2 daily rank snapshots" in page
    assert "End-users, their metric totals, streaks and points are kept" in page


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"key": "no spaces"}, "key", "Must match"),
        ({"max_participants": "0"}, "max_participants", "greater than or equal to 1"),
        ({"max_participants": "1001"}, "max_participants", "less than or equal to 1000"),
        ({"run_interval": ""}, "run_interval", "Give the length of a run"),
        ({"run_unit": ""}, "run_unit", "Choose days, months or years"),
        ({"end": "2026-01-01"}, "end", "The end date must not be before the start date"),
        ({"breakdown_attributes": ["tier"]}, "breakdown_attributes", "Unknown user attribute"),
        (filters(("tier", "gold")), "user_attributes", "unknown user attribute keys: tier"),
        (filters(("", "gold")), "user_attributes", "Choose the attribute of the value"),
        ({"metric": ""}, "metric", "Choose the metric to rank by"),
        ({"rank_by": "points"}, "points_system", "Choose the points system to rank by"),
        ({"rank_by": "streak"}, "run_unit", "Streak leaderboards can only be perpetual"),
        ({"status": "finished"}, None, "Only a leaderboard whose end date has passed"),
        ({"key": "words-board"}, "key", "Key already in use by another leaderboard"),
    ],
)
def test_invalid_board_is_a_form_error(
    staff_client: Any,
    tenant: Tenant,
    metric: Metric,
    board: Leaderboard,
    changes: dict,
    field: str | None,
    message: str,
) -> None:
    version = version_of(tenant)

    response = staff_client.post(
        admin_url(Leaderboard, "add"), board_form(metric, tenant=tenant.pk, **changes)
    )

    assert_refused(response, field, message)
    assert version_of(tenant) == version
    assert list(Leaderboard.objects.values_list("key", flat=True)) == ["words-board"]


def test_changing_the_key_of_a_live_board_is_a_form_error(
    staff_client: Any, board: Leaderboard
) -> None:
    response = staff_client.post(
        admin_url(Leaderboard, "change", board.pk), edit_form(board, key="other", name="New")
    )

    # Next to the input the service names, in the page's words.
    assert_refused(response, "key", "“Key” can only change while the leaderboard is inactive")
    board.refresh_from_db()
    assert (board.key, board.name) == ("words-board", "Words")


def test_service_refusals_name_the_fields_as_the_page_labels_them(
    staff_client: Any, board: Leaderboard, plan: Attribute
) -> None:
    response = staff_client.post(
        admin_url(Leaderboard, "change", board.pk), edit_form(board, **filters(("plan", "pro")))
    )

    assert_refused(
        response,
        "user_attributes",
        "“Participation filters” can only change while the leaderboard is inactive",
    )
    board.refresh_from_db()
    assert board.user_attributes == []


def test_metric_of_another_tenant_is_a_form_error(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant
) -> None:
    foreign = MetricFactory(tenant=other_tenant, key="steps")

    response = staff_client.post(
        admin_url(Leaderboard, "add"), board_form(foreign, tenant=tenant.pk)
    )

    assert_refused(response, "metric", "Choose a metric of this tenant")
    assert not Leaderboard.objects.exists()


# Live rankings

UTC = dt.UTC


def at(day: str, hour: int = 12, minute: int = 0) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(hour=hour, minute=minute, tzinfo=UTC)


@pytest.fixture
def clock() -> Iterator[Any]:
    """A frozen clock at noon UTC on 10 March 2026; `clock.move_to(...)` moves it."""
    with time_machine.travel(at("2026-03-10"), tick=False) as traveller:
        yield traveller


def rankings_url(board: Leaderboard) -> str:
    return f"{admin_url(Leaderboard, 'change', board.pk).removesuffix('change/')}rankings/"


def live(tenant: Tenant, metric: Metric, **data: Any) -> Leaderboard:
    fields = {
        "name": "Words",
        "key": "words-board",
        "rank_by": "metric",
        "metric_id": str(metric.public_id),
        "status": "active",
        **data,
    }
    return configuration.leaderboard_create(tenant, LeaderboardSettings(**fields))


def send(client: Any, user: str, value: Any = 1, **user_fields: Any) -> None:
    body = {"user": {"id": user, **user_fields}, "value": value}
    response = client.post("/v1/metrics/words/event", body)
    assert response.status_code == 201, response.content


def shown(client: Any, board: Leaderboard, **params: Any) -> Any:
    response = client.get(rankings_url(board), params)
    assert response.status_code == 200
    return response


def table(response: Any) -> list[tuple[int, str, str]]:
    return [(row.rank, row.user_id, row.value) for row in response.context["rows"]]


def api_ranks(api_client: Any, board: Leaderboard, **params: Any) -> list[tuple[int, str]]:
    response = api_client.get(f"/v1/leaderboards/{board.key}", {"limit": 1000, **params})
    assert response.status_code == 200, response.content
    return [(row["rank"], row["userId"]) for row in response.json()["rankings"]]


def reasons(client: Any, board: Leaderboard, **params: Any) -> str:
    response = shown(client, board, **params)
    assert response.context["rows"] == []
    return " ".join(response.context["reasons"])


def test_rankings_show_the_api_ranks_and_ties_with_values_in_units(
    staff_client: Any, api_client: Any, tenant: Tenant, metric: Metric, clock: Any
) -> None:
    metric.units = "words"
    metric.save()
    bump(tenant)
    board = live(tenant, metric)
    send(api_client, "alice", 1250)
    clock.shift(60)
    send(api_client, "bob", 1250)  # the same value, reached later: ranked after alice
    send(api_client, "carol", 2.5)
    send(api_client, "dave", 2.5)  # the same value at the same moment: the older user first
    clock.shift(60)
    send(api_client, "erin", 3000)

    response = shown(staff_client, board)

    assert table(response) == [
        (1, "erin", "3,000 words"),
        (2, "alice", "1,250 words"),
        (3, "bob", "1,250 words"),
        (4, "carol", "2.5 words"),
        (5, "dave", "2.5 words"),
    ]
    assert [(rank, user) for rank, user, _ in table(response)] == api_ranks(api_client, board)
    page = response.content.decode()
    erin = EndUser.objects.get(external_id="erin")
    assert f'<a href="{admin_url(EndUser, "change", erin.pk)}">erin</a>' in page
    # A perpetual board has a single run, with no end.
    assert [c.label for c in response.context["run_choices"]] == ["From March 10, 2026 (current)"]
    assert "data-lb-refresh" in page  # a live board's current run refreshes itself


@pytest.mark.parametrize(
    ("rank_by", "value", "expected"),
    [
        ("metric", Decimal("1250.000000"), "1,250 words"),
        ("metric", Decimal("0.125000"), "0.125 words"),
        ("currency", Decimal("12.500000"), "12.50 USD"),
        ("currency", Decimal("12.000000"), "12 USD"),
        ("points", Decimal("300.000000"), "300 XP"),
        ("streak", Decimal("1.000000"), "1 day"),
        ("streak", Decimal("5.000000"), "5 days"),
    ],
)
def test_values_read_in_the_units_of_what_the_board_ranks(
    rank_by: str, value: Decimal, expected: str
) -> None:
    metric = Metric(key="m", name="M", unit_type="number", units="words")
    if rank_by == "currency":
        metric = Metric(key="m", name="M", unit_type="currency", units="USD")
    board = Leaderboard(
        rank_by="points" if rank_by == "points" else "streak" if rank_by == "streak" else "metric",
        metric=metric if rank_by in ("metric", "currency") else None,
        points_system=PointsSystem(key="xp", name="XP") if rank_by == "points" else None,
    )
    assert value_text(board, value, "daily") == expected


def test_points_boards_show_the_system_name(staff_client: Any, tenant: Tenant, clock: Any) -> None:
    system = PointsSystem.objects.create(tenant=tenant, key="xp", name="XP")
    bump(tenant)
    board = configuration.leaderboard_create(
        tenant,
        LeaderboardSettings(
            name="XP", key="xp-board", rank_by="points", points_system_id=str(system.public_id)
        ),
    )
    record(board, EndUserFactory(tenant=tenant, external_id="alice"), 300)

    assert table(shown(staff_client, board)) == [(1, "alice", "300 XP")]


def test_a_past_run_is_chosen_from_the_runs_of_the_board(
    staff_client: Any, api_client: Any, tenant: Tenant, metric: Metric, clock: Any
) -> None:
    clock.move_to(at("2026-03-09"))
    board = live(tenant, metric, run_unit="day", run_interval=1)
    send(api_client, "alice", 2)
    clock.move_to(at("2026-03-10"))
    send(api_client, "bob", 4)

    current = shown(staff_client, board)
    past = shown(staff_client, board, run="2026-03-09")

    assert table(current) == [(1, "bob", "4")]
    assert table(past) == [(1, "alice", "2")]
    assert api_ranks(api_client, board, run="2026-03-09") == [(1, "alice")]
    choices = [(c.value, c.label, c.selected) for c in past.context["run_choices"]]
    assert choices == [
        ("2026-03-10", f"March 10, 2026 {DASH} March 10, 2026 (current)", False),
        ("2026-03-09", f"March 9, 2026 {DASH} March 9, 2026", True),
    ]
    # A past run does not refresh itself.
    assert "data-lb-refresh" not in past.content.decode()


def test_breakdown_groups_are_chosen_and_ranked_apart(
    staff_client: Any, api_client: Any, tenant: Tenant, metric: Metric, plan: Attribute, clock: Any
) -> None:
    bump(tenant)
    board = live(tenant, metric, breakdown_attributes=[str(plan.public_id)])
    send(api_client, "alice", 5, attributes={"plan": "pro"})
    send(api_client, "bob", 9, attributes={"plan": "pro"})
    send(api_client, "carol", 1, attributes={"plan": "free"})

    first = shown(staff_client, board)
    pro = shown(staff_client, board, group="plan=pro")

    assert table(first) == [(1, "carol", "1")]  # the first group by name
    assert table(pro) == [(1, "bob", "9"), (2, "alice", "5")]
    assert [(r, u) for r, u, _ in table(pro)] == api_ranks(
        api_client, board, userAttributes="plan:pro"
    )
    choices = [(c.value, c.label, c.selected) for c in pro.context["group_choices"]]
    assert choices == [("plan=free", "plan: free (1)", False), ("plan=pro", "plan: pro (2)", True)]
    assert "plan: pro" in pro.content.decode()


def test_rankings_are_paged_with_the_api_ranks(
    staff_client: Any, api_client: Any, tenant: Tenant, metric: Metric, clock: Any
) -> None:
    board = live(tenant, metric)
    for i in range(60):
        record(board, EndUserFactory(tenant=tenant, external_id=f"u{i:02d}"), i + 1)

    first = shown(staff_client, board)
    second = shown(staff_client, board, p=2)

    assert len(first.context["rows"]) == 50
    assert table(first)[0] == (1, "u59", "60")
    assert table(second) == [(51 + i, f"u{9 - i:02d}", str(10 - i)) for i in range(10)]
    assert [(r, u) for r, u, _ in table(second)] == api_ranks(
        api_client, board, offset=50, limit=50
    )
    assert (second.context["first"], second.context["last"], second.context["total"]) == (
        51,
        60,
        60,
    )
    assert second.context["next_url"] is None
    assert second.context["previous_url"] == "?run=2026-03-10"
    assert first.context["next_url"] == "?run=2026-03-10&p=2"
    # A page past the end shows the last one.
    assert table(shown(staff_client, board, p=9)) == table(second)


def test_an_inactive_board_explains_it_counts_nothing(
    staff_client: Any, tenant: Tenant, metric: Metric, clock: Any
) -> None:
    board = live(tenant, metric, status="inactive")
    assert "The leaderboard is inactive: it counts no activity" in reasons(staff_client, board)


def test_a_scheduled_board_says_when_it_starts(
    staff_client: Any, tenant: Tenant, metric: Metric, clock: Any
) -> None:
    board = live(tenant, metric, start=dt.date(2026, 3, 15))
    assert board.status == Status.SCHEDULED
    assert "it goes live on March 15, 2026" in reasons(staff_client, board)


def test_an_active_board_without_events_says_so(
    staff_client: Any, tenant: Tenant, metric: Metric, clock: Any
) -> None:
    board = live(tenant, metric)
    EndUserFactory(tenant=tenant)
    assert "No “Words” events since this run started on March 10, 2026" in reasons(
        staff_client, board
    )


def test_events_before_activation_do_not_count(
    staff_client: Any, api_client: Any, tenant: Tenant, metric: Metric, clock: Any
) -> None:
    board = live(tenant, metric, status="inactive")
    send(api_client, "alice", 3)
    clock.shift(3600)
    configuration.leaderboard_update(tenant, board, LeaderboardSettings(status="active"))

    text = reasons(staff_client, board)

    assert "No “Words” events since the leaderboard became active on March 10, 2026" in text
    assert "boards count activity from activation" in text

    send(api_client, "alice", 1)  # her next event brings her total for the run
    assert table(shown(staff_client, board)) == [(1, "alice", "4")]


def test_a_participation_filter_that_matches_no_one_is_named(
    staff_client: Any, api_client: Any, tenant: Tenant, metric: Metric, plan: Attribute, clock: Any
) -> None:
    bump(tenant)
    board = live(
        tenant,
        metric,
        user_attributes=[{"attributeId": str(plan.public_id), "attributeValue": "enterprise"}],
    )
    send(api_client, "alice", 3, attributes={"plan": "pro"})
    send(api_client, "bob", 3, attributes={"plan": "free"})

    assert (
        "The participation rules exclude everyone: none of the 2 end-users match the "
        "participation filters (plan = enterprise)"
    ) in reasons(staff_client, board)


def test_activity_outside_the_daily_window_is_named(
    staff_client: Any, api_client: Any, tenant: Tenant, metric: Metric, clock: Any
) -> None:
    board = live(tenant, metric, start_time=dt.time(8), end_time=dt.time(9))
    send(api_client, "alice", 3)  # noon UTC, alice's own time

    assert (
        "Only activity between 08:00 and 09:00 in each end-user's own time counts, and the "
        "“Words” events of end-users who take part came outside that window."
    ) in reasons(staff_client, board)


def test_activity_of_end_users_who_do_not_take_part_is_named(
    staff_client: Any, api_client: Any, tenant: Tenant, metric: Metric, plan: Attribute, clock: Any
) -> None:
    bump(tenant)
    board = live(
        tenant,
        metric,
        user_attributes=[{"attributeId": str(plan.public_id), "attributeValue": "pro"}],
    )
    send(api_client, "alice", 3, attributes={"plan": "free"})
    # Someone could take part, but has not been active: the activity came from others.
    EndUserFactory(tenant=tenant, attributes={"plan": "pro"})

    assert (
        "The “Words” events since the leaderboard became active came from end-users who do "
        "not take part"
    ) in reasons(staff_client, board)


def test_a_finished_board_says_when_it_ended(
    staff_client: Any, tenant: Tenant, metric: Metric, clock: Any
) -> None:
    clock.move_to(at("2026-03-01"))
    board = live(tenant, metric, end=dt.date(2026, 3, 5))
    clock.move_to(at("2026-03-07"))
    leaderboards_lifecycle(timezone.now())

    assert "The leaderboard finished on March 5, 2026" in reasons(staff_client, board)


def test_a_streak_board_without_streaks_says_so(
    staff_client: Any, tenant: Tenant, clock: Any
) -> None:
    board = configuration.leaderboard_create(
        tenant, LeaderboardSettings(name="S", key="s", rank_by="streak", status="active")
    )
    assert "Streaks are not set up for this tenant" in reasons(staff_client, board)


def test_another_tenants_board_is_not_found(
    staff_client: Any, other_tenant: Tenant, clock: Any
) -> None:
    metric = MetricFactory(tenant=other_tenant, key="words")
    board = live(other_tenant, metric)

    assert staff_client.get(rankings_url(board)).status_code == 404


def test_staff_see_the_rankings_of_their_organization_only(
    org: OrganizationWithKey, tenant: Tenant, metric: Metric, clock: Any
) -> None:
    board = live(tenant, metric)
    record(board, EndUserFactory(tenant=tenant, external_id="alice"), 3)
    view = Permission.objects.get(codename="view_leaderboard")
    member = org_staff(org, username="member")
    loner = get_user_model().objects.create_user(username="loner", is_staff=True)
    clients = {}
    for user in (member, loner):
        clients[user.username] = Client()
        clients[user.username].force_login(user)

    assert clients["member"].get(rankings_url(board)).status_code == 403  # no permission yet
    member.user_permissions.add(view)
    loner.user_permissions.add(view)
    assert table(shown(clients["member"], board)) == [(1, "alice", "3")]
    assert clients["loner"].get(rankings_url(board)).status_code == 404


def test_rankings_queries_do_not_grow_with_rows(
    staff_client: Any, tenant: Tenant, metric: Metric, clock: Any
) -> None:
    board = live(tenant, metric)
    record(board, EndUserFactory(tenant=tenant), 1)
    shown(staff_client, board)  # warm per-process caches
    with CaptureQueriesContext(connection) as few:
        shown(staff_client, board)
    for i in range(30):
        record(board, EndUserFactory(tenant=tenant), i + 2)
    with CaptureQueriesContext(connection) as many:
        response = shown(staff_client, board)
    assert len(response.context["rows"]) == 31
    assert len(many) == len(few), [q["sql"][:200] for q in many.captured_queries]


# Recorded rankings


@pytest.mark.parametrize("model", RECORD_MODELS)
def test_records_are_read_only(staff_client: Any, alice: EndUser, model: type) -> None:
    obj = model.objects.get()
    assert staff_client.get(admin_url(model, "add")).status_code == 403
    assert staff_client.post(admin_url(model, "change", obj.pk), {}).status_code == 403
    assert staff_client.get(admin_url(model, "delete", obj.pk)).status_code == 403
    run = staff_client.post(
        admin_url(model), {"action": "delete_selected", "_selected_action": [obj.pk]}
    )
    assert run.status_code in (200, 302)
    assert model.objects.filter(pk=obj.pk).exists()


@pytest.mark.parametrize("model", RECORD_MODELS)
def test_records_are_searched_by_exact_user_id(
    staff_client: Any, tenant: Tenant, board: Leaderboard, alice: EndUser, model: type
) -> None:
    record(board, EndUserFactory(tenant=tenant, external_id="bob"), 7)

    def found(query: str) -> set[str]:
        response = staff_client.get(admin_url(model) + query)
        assert response.status_code == 200
        return {row.user.external_id for row in response.context["cl"].result_list}

    assert found("") == {"alice", "bob"}
    assert found("?q=alice") == {"alice"}
    assert found("?q=ali") == set()


def test_entries_are_listed_in_rank_order(
    staff_client: Any, tenant: Tenant, board: Leaderboard, alice: EndUser
) -> None:
    record(board, EndUserFactory(tenant=tenant, external_id="bob"), 99)
    rows = staff_client.get(admin_url(LeaderboardEntry)).context["cl"].result_list
    assert [(r.user.external_id, r.value) for r in rows] == [("bob", 99), ("alice", 42)]


def test_record_lists_offer_the_selected_tenants_boards_only(
    staff_client: Any, board: Leaderboard, other_tenant: Tenant, alice: EndUser
) -> None:
    foreign = live(other_tenant, MetricFactory(tenant=other_tenant, key="steps"), key="steps")
    second = live(board.tenant, board.metric, key="second", name="Second")
    page = staff_client.get(admin_url(LeaderboardEntry)).content.decode()
    assert f"leaderboard__id__exact={board.pk}" in page
    assert f"leaderboard__id__exact={second.pk}" in page
    assert f"leaderboard__id__exact={foreign.pk}" not in page


# Query counts


def populate(tenant: Tenant, first: int, count: int) -> None:
    """Boards of one metric with an entry and a snapshot each, in the tenant the page shows."""
    metric = Metric.objects.filter(tenant=tenant, key="words").first() or MetricFactory(
        tenant=tenant, key="words"
    )
    for i in range(first, first + count):
        board = configuration.leaderboard_create(
            tenant,
            LeaderboardSettings(
                name=f"W{i}", key=f"w{i}", rank_by="metric", metric_id=str(metric.public_id)
            ),
        )
        record(board, EndUserFactory(tenant=tenant), i + 1)


@pytest.mark.parametrize("model", [Leaderboard, *RECORD_MODELS])
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
    assert len(many) == len(few), [q["sql"][:200] for q in many.captured_queries]
    with django_assert_max_num_queries(12):
        staff_client.get(url + "?q=user-1")


# Live rankings follow their board's stream


def stream_of(page: str) -> str | None:
    found = re.search(r'data-lb-stream="([^"]+)"', page)
    return found.group(1).replace("&amp;", "&") if found else None


def test_live_rankings_follow_the_boards_stream_with_a_token_for_that_board(
    staff_client: Any, board: Leaderboard, alice: EndUser, settings: Any
) -> None:
    from urllib.parse import parse_qs, urlsplit

    from apps.core.stream_tokens import stream_token_read

    settings.STREAMS_REDIS_URL = "redis://127.0.0.1:6379/0"
    page = staff_client.get(rankings_url(board)).content.decode()
    assert "Update live" in page
    url = stream_of(page)
    assert url is not None
    parts = urlsplit(url)
    assert parts.path == "/ext/v1/leaderboards/words-board/stream"
    query = parse_qs(parts.query)
    assert query["top"] == ["100"]
    claims = stream_token_read(query["token"][0], timezone.now())
    assert claims is not None
    assert claims.allows(board.tenant_id, "board", "words-board")
    assert not claims.allows(board.tenant_id, "board", "other")


def test_without_streams_live_rankings_refresh_every_15_seconds(
    staff_client: Any, board: Leaderboard, alice: EndUser, settings: Any
) -> None:
    settings.STREAMS_REDIS_URL = ""
    page = staff_client.get(rankings_url(board)).content.decode()
    assert stream_of(page) is None
    assert "Refresh every 15 seconds" in page


def test_a_breakdown_groups_stream_names_the_group_as_the_api_does() -> None:
    from apps.leaderboards.admin.rankings import group_values

    keys = ("plan", "region")
    assert group_values(keys, "plan=pro|region=eu") == {"plan": "pro", "region": "eu"}
    # Values may hold the separators; each is read up to the next key's prefix.
    assert group_values(keys, "plan=a|b=c|region=x=y") == {"plan": "a|b=c", "region": "x=y"}
    assert group_values(keys, "region=eu|plan=pro") is None
    assert group_values(("plan",), "plan=") == {"plan": ""}
