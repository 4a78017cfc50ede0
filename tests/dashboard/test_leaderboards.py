"""Leaderboards are edited through leaderboard_save with the admin API's validation (status
changes included); entries and snapshots are shown, never written."""

import datetime as dt
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.leaderboards import services
from apps.leaderboards.choices import Status
from apps.leaderboards.models import Leaderboard, LeaderboardEntry, LeaderboardSnapshot
from apps.metrics.models import Metric
from apps.users.choices import AttributeType
from apps.users.models import Attribute, EndUser
from tests.dashboard.conftest import admin_url, message_texts
from tests.factories import AttributeFactory, EndUserFactory, MetricFactory, OrganizationWithKey

RECORD_MODELS = [LeaderboardEntry, LeaderboardSnapshot]
TODAY = timezone.now().date()


def version_of(tenant: Tenant) -> int:
    return Tenant.objects.get(pk=tenant.pk).config_version


@pytest.fixture
def plan(tenant: Tenant) -> Attribute:
    return AttributeFactory(tenant=tenant, key="plan", type=AttributeType.USER)


@pytest.fixture
def board(tenant: Tenant, metric: Metric) -> Leaderboard:
    data = {"name": "Words", "key": "words-board", "rankBy": "metric"}
    return services.leaderboard_save(
        tenant, None, {**data, "metricId": str(metric.public_id), "status": "active"}
    )


def record(board: Leaderboard, user: EndUser, value: int) -> None:
    """An entry and a snapshot written directly: the dashboard only reads them."""
    now = timezone.now()
    LeaderboardEntry.objects.create(
        leaderboard=board, run_start=board.start, user=user, value=value, reached_at=now
    )
    LeaderboardSnapshot.objects.create(
        leaderboard=board, run_start=board.start, user=user, date=TODAY, rank=1, value=value
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
        "breakdown_attributes": "",
        "user_attributes": "",
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


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
    form = response.context["adminform"].form
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
    index = staff_client.get("/dashboard/")
    for model in objects:
        assert admin_url(model).encode() in index.content
    entries = staff_client.get(admin_url(LeaderboardEntry)).content.decode()
    assert f'<a href="{admin_url(EndUser, "change", alice.pk)}">alice</a>' in entries
    assert "words-board (" in entries


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
            breakdown_attributes="plan",
            user_attributes="plan: pro",
        ),
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
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
    board = services.leaderboard_save(
        tenant,
        None,
        {
            "name": "W",
            "key": "w",
            "rankBy": "metric",
            "metricId": str(metric.public_id),
            "breakdownAttributes": [str(plan.public_id)],
            "userAttributes": [{"attributeId": str(plan.public_id), "attributeValue": "pro"}],
        },
    )
    page = staff_client.get(admin_url(Leaderboard, "change", board.pk))
    initial = page.context["adminform"].form.initial
    assert (initial["breakdown_attributes"], initial["user_attributes"]) == ("plan", "plan:pro")
    assert (initial["metric"], initial["status"]) == (metric.pk, "inactive")


def test_editing_a_live_board_keeps_its_frozen_fields(
    staff_client: Any, tenant: Tenant, board: Leaderboard
) -> None:
    version = version_of(tenant)

    response = staff_client.post(
        admin_url(Leaderboard, "change", board.pk), edit_form(board, name="All words")
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
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
    assert deactivate.status_code == 302, deactivate.context["adminform"].form.errors
    board.refresh_from_db()
    assert board.status == Status.INACTIVE

    # Going live from the dashboard is the same `status` key: a future start schedules it.
    activate = staff_client.post(
        url, edit_form(board, status="active", start=start.isoformat(), key="renamed")
    )

    assert activate.status_code == 302, activate.context["adminform"].form.errors
    board.refresh_from_db()
    assert (board.status, board.key, board.start) == (expected, "renamed", start)


def test_deleting_a_board_goes_through_the_service(
    staff_client: Any, tenant: Tenant, board: Leaderboard, alice: EndUser
) -> None:
    url = admin_url(Leaderboard, "delete", board.pk)
    confirm = staff_client.get(url)
    assert confirm.status_code == 200
    assert dict(confirm.context["model_count"]) == {"leaderboards": 1, "entries": 1, "snapshots": 1}
    version = version_of(tenant)

    response = staff_client.post(url, {"post": "yes"})

    assert response.status_code == 302
    assert version_of(tenant) > version
    assert not Leaderboard.objects.exists()
    assert not LeaderboardEntry.objects.exists()
    assert any("deleted successfully" in m for m in message_texts(response))


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"key": "no spaces"}, "key", "must match"),
        ({"max_participants": "0"}, "max_participants", "greater than or equal to 1"),
        ({"max_participants": "1001"}, "max_participants", "less than or equal to 1000"),
        ({"run_interval": ""}, None, "runUnit and runInterval go together"),
        ({"end": "2026-01-01"}, None, "end must not be before start"),
        ({"breakdown_attributes": "tier"}, "breakdown_attributes", "unknown user attribute"),
        ({"user_attributes": "tier:gold"}, "user_attributes", "unknown user attribute keys"),
        ({"metric": ""}, None, "metricId is required for metric leaderboards"),
        ({"rank_by": "streak"}, None, "Streak leaderboards can only be perpetual"),
        ({"status": "finished"}, None, "Only a leaderboard whose end date has passed"),
        ({"key": "words-board"}, None, "Key already in use by another leaderboard"),
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

    assert_refused(response, None, "key can only change while the leaderboard is inactive")
    board.refresh_from_db()
    assert (board.key, board.name) == ("words-board", "Words")


def test_metric_of_another_tenant_is_a_form_error(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant
) -> None:
    foreign = MetricFactory(tenant=other_tenant, key="steps")

    response = staff_client.post(
        admin_url(Leaderboard, "add"), board_form(foreign, tenant=tenant.pk)
    )

    assert_refused(response, "metric", "belongs to another tenant than the leaderboard")
    assert not Leaderboard.objects.exists()


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

    def shown(query: str) -> set[str]:
        response = staff_client.get(admin_url(model) + query)
        assert response.status_code == 200
        return {row.user.external_id for row in response.context["cl"].result_list}

    assert shown("") == {"alice", "bob"}
    assert shown("?q=alice") == {"alice"}
    assert shown("?q=ali") == set()


def test_entries_are_listed_in_rank_order(
    staff_client: Any, tenant: Tenant, board: Leaderboard, alice: EndUser
) -> None:
    record(board, EndUserFactory(tenant=tenant, external_id="bob"), 99)
    rows = staff_client.get(admin_url(LeaderboardEntry)).context["cl"].result_list
    assert [(r.user.external_id, r.value) for r in rows] == [("bob", 99), ("alice", 42)]


# Query counts


def populate(names: list[str], users_each: int) -> None:
    """Per organization: a metric board with entries and snapshots."""
    for name in names:
        org = OrganizationWithKey(name)
        metric = MetricFactory(tenant=org.tenant, key="words")
        board = services.leaderboard_save(
            org.tenant,
            None,
            {"name": "W", "key": "w", "rankBy": "metric", "metricId": str(metric.public_id)},
        )
        for i, user in enumerate(EndUserFactory.create_batch(users_each, tenant=org.tenant)):
            record(board, user, i + 1)


@pytest.mark.parametrize("model", [Leaderboard, *RECORD_MODELS])
def test_changelist_queries_do_not_grow_with_rows(
    staff_client: Any, django_assert_max_num_queries: Any, model: type
) -> None:
    populate(["A"], 1)
    url = admin_url(model)
    staff_client.get(url)  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    populate(["B", "C", "D", "E"], 5)
    with CaptureQueriesContext(connection) as many:
        response = staff_client.get(url)
    assert len(response.context["cl"].result_list) > 4
    assert len(many) == len(few), [q["sql"][:200] for q in many.captured_queries]
    with django_assert_max_num_queries(10):
        staff_client.get(url + "?q=user-1")
