"""Leaderboards through the SDK: the admin configuration (rankBy metric, points and streak;
statuses and their transitions; capacity, dates, daily time windows, runs, breakdown attributes
and participation filters; fields frozen once live), the application reads (the list, rankings
pages, a user's rank and history) and the `leaderboards` map of the metric event response
(rank, previous rank, threshold, run end, breakdown values).

The live server runs in real time: dates are relative to today's UTC date, and every user here
is a UTC user. The snapshot and lifecycle jobs run in-process (the live server shares the
test's database) and their effect is read through the SDK.
"""

import datetime as dt
import uuid
from typing import Any

import pytest
from trophy import TrophyApi
from trophy.errors import NotFoundError, UnauthorizedError, UnprocessableEntityError
from trophy.leaderboards.types import LeaderboardsAllResponseItem
from trophy.types import (
    AdminAttribute,
    AdminLeaderboard,
    AdminLeaderboardUserAttributesItem,
    CreatedAdminPointsSystem,
    CreatedMetric,
    DeletedResource,
    EventResponse,
    LeaderboardEvent,
    LeaderboardRanking,
    LeaderboardResponseUserAttributesItem,
    LeaderboardResponseWithRankings,
    MetricEventLeaderboardResponse,
    MetricEventLeaderboardResponseBreakdownAttributeValuesItem,
    StreakSettingsMetric,
    UserLeaderboardResponseWithHistory,
)

from tests.contract.helpers import (
    CONTRACT_DB,
    MakeClient,
    create_attribute,
    create_metric,
    error_message,
)

pytestmark = [pytest.mark.contract, CONTRACT_DB]

UTC = dt.UTC


# --- helpers ----------------------------------------------------------------------------------


def today() -> dt.date:
    return dt.datetime.now(UTC).date()


def day(offset: int) -> str:
    """Today (UTC) plus `offset` days, as YYYY-MM-DD."""
    return (today() + dt.timedelta(days=offset)).isoformat()


def hhmm(offset_minutes: int) -> str:
    """The UTC time of day `offset_minutes` from now, as HH:mm."""
    return (dt.datetime.now(UTC) + dt.timedelta(minutes=offset_minutes)).strftime("%H:%M")


def create_board(client: TrophyApi, key: str = "top", **fields: Any) -> AdminLeaderboard:
    fields.setdefault("name", key.title())
    response = client.admin.leaderboards.create(request=[{"key": key, **fields}])
    assert response.issues == []
    (board,) = response.created
    assert isinstance(board, AdminLeaderboard)
    return board


def metric_board(
    client: TrophyApi, metric: CreatedMetric, key: str = "top", **fields: Any
) -> AdminLeaderboard:
    """A live metric board (active unless told otherwise)."""
    fields.setdefault("status", "active")
    return create_board(client, key, rank_by="metric", metric_id=metric.id, **fields)


def create_issue(client: TrophyApi, **item: Any) -> str:
    """Create one invalid board: the message of its single issue (nothing is created)."""
    item.setdefault("name", "Invalid")
    item.setdefault("key", "invalid")
    response = client.admin.leaderboards.with_raw_response.create(request=[item])
    assert response.status_code == 200
    assert response.data.created == []
    assert [(i.index, i.severity) for i in response.data.issues] == [(0, "error")]
    return response.data.issues[0].message


def update_issue(client: TrophyApi, board: AdminLeaderboard, **fields: Any) -> str:
    response = client.admin.leaderboards.update(request=[{"id": board.id, **fields}])
    assert response.updated == []
    assert [(i.id, i.severity) for i in response.issues] == [(board.id, "error")]
    return response.issues[0].message


def event(
    client: TrophyApi,
    user: str,
    value: float,
    key: str = "words",
    **user_fields: Any,
) -> EventResponse:
    response = client.metrics.event(key, user={"id": user, "tz": "UTC", **user_fields}, value=value)
    assert isinstance(response, EventResponse)
    assert all(
        isinstance(b, MetricEventLeaderboardResponse) for b in response.leaderboards.values()
    )
    return response


def on_board(response: EventResponse, key: str = "top") -> MetricEventLeaderboardResponse:
    """The event's entry for one leaderboard (it must be there)."""
    assert key in response.leaderboards, response.leaderboards
    board = response.leaderboards[key]
    assert board.key == key
    return board


def rankings(client: TrophyApi, key: str = "top", **params: Any) -> list[tuple[str, int, int]]:
    """(userId, rank, value) of a rankings page."""
    board = client.leaderboards.get(key, **params)
    assert isinstance(board, LeaderboardResponseWithRankings)
    assert all(isinstance(r, LeaderboardRanking) for r in board.rankings)
    return [(r.user_id, r.rank, r.value) for r in board.rankings]


def user_rank(client: TrophyApi, user: str, key: str = "top") -> tuple[int | None, int | None]:
    response = client.users.leaderboard(user, key)
    assert isinstance(response, UserLeaderboardResponseWithHistory)
    return response.rank, response.value


def create_system(client: TrophyApi, key: str = "xp") -> CreatedAdminPointsSystem:
    response = client.admin.points.systems.create(request=[{"key": key, "name": key.upper()}])
    assert response.issues == []
    (system,) = response.created
    return system


@pytest.fixture
def xp(client: TrophyApi, words: CreatedMetric) -> CreatedAdminPointsSystem:
    """A points system paying 2 points per word (an active trigger at threshold 1)."""
    system = create_system(client, "xp")
    response = client.admin.points.triggers.create(
        system.id,
        request=[
            {
                "type": "metric",
                "points": 2,
                "metric_id": words.id,
                "metric_threshold": 1,
                "status": "active",
            }
        ],
    )
    assert response.issues == []
    return system


@pytest.fixture
def plan(client: TrophyApi) -> AdminAttribute:
    """A user attribute."""
    return create_attribute(client, "plan", "user")


@pytest.fixture
def country(client: TrophyApi) -> AdminAttribute:
    """Another user attribute."""
    return create_attribute(client, "country", "user")


@pytest.fixture
def daily(client: TrophyApi, words: CreatedMetric) -> TrophyApi:
    """A daily streak: at least 1 word a day."""
    client.admin.streaks.settings.update(
        frequency="daily", metrics=[StreakSettingsMetric(key="words", threshold=1)]
    )
    return client


# --- admin: create, get, list -----------------------------------------------------------------


def test_create_a_metric_board_with_every_field_answers_201(
    client: TrophyApi, words: CreatedMetric, plan: AdminAttribute, country: AdminAttribute
) -> None:
    response = client.admin.leaderboards.with_raw_response.create(
        request=[
            {
                "name": "Top writers",
                "key": "top",
                "description": "Most words",
                "rank_by": "metric",
                "metric_id": words.id,
                "max_participants": 50,
                "start": day(-3),
                "end": day(30),
                "start_time": "08:00",
                "end_time": "20:30",
                "breakdown_attributes": [country.id],
                "run_unit": "day",
                "run_interval": 7,
                "user_attributes": [{"attribute_id": plan.id, "attribute_value": "pro"}],
            }
        ]
    )

    assert response.status_code == 201
    assert response.data.issues == []
    (board,) = response.data.created
    assert isinstance(board, AdminLeaderboard)
    assert uuid.UUID(board.id)
    assert (board.name, board.key, board.description, board.status, board.rank_by) == (
        "Top writers",
        "top",
        "Most words",
        "inactive",  # the default: nobody enters until it is made live
        "metric",
    )
    assert (board.metric_id, board.points_system_id, board.max_participants) == (words.id, None, 50)
    assert (board.start, board.end, board.start_time, board.end_time) == (
        day(-3),
        day(30),
        "08:00",
        "20:30",
    )
    assert (board.run_unit, board.run_interval) == ("day", 7)
    assert board.breakdown_attributes == [country.id]
    assert board.user_attributes == [
        AdminLeaderboardUserAttributesItem(attribute_id=plan.id, attribute_value="pro")
    ]
    assert client.admin.leaderboards.get(board.id) == board
    assert client.admin.leaderboards.list() == [board]


def test_a_board_created_with_only_the_required_fields_gets_the_defaults(
    client: TrophyApi, words: CreatedMetric
) -> None:
    board = create_board(client, "top", rank_by="metric", metric_id=words.id)

    assert (board.status, board.start, board.end, board.max_participants) == (
        "inactive",
        day(0),  # start defaults to today
        None,
        1000,
    )
    assert (board.description, board.start_time, board.end_time) == (None, None, None)
    assert (board.run_unit, board.run_interval) == (None, None)
    assert (board.breakdown_attributes, board.user_attributes) == ([], [])


def test_points_and_streak_boards_reference_what_they_rank_by(
    client: TrophyApi, words: CreatedMetric
) -> None:
    xp = create_system(client, "xp")

    points = create_board(client, "xp-board", rank_by="points", points_system_id=xp.id)
    streak = create_board(client, "streaks", rank_by="streak")

    assert (points.rank_by, points.points_system_id, points.metric_id) == ("points", xp.id, None)
    assert (streak.rank_by, streak.points_system_id, streak.metric_id) == ("streak", None, None)
    # a metricId on a board that does not rank by a metric is dropped
    other = create_board(client, "other", rank_by="streak", metric_id=words.id)
    assert other.metric_id is None


@pytest.mark.parametrize(
    ("status", "fields", "expected"),
    [
        ("inactive", {}, "inactive"),
        ("active", {}, "active"),
        ("active", {"start": day(-10), "end": day(0)}, "active"),  # the end day still counts
        ("active", {"start": day(3)}, "scheduled"),  # live, but its start is in the future
        ("scheduled", {"start": day(3), "end": day(9)}, "scheduled"),
        ("scheduled", {}, "active"),  # "scheduled" with a start of today is simply active
        ("finished", {"start": day(-10), "end": day(-1)}, "finished"),
    ],
)
def test_the_status_given_at_creation_depends_on_the_dates(
    client: TrophyApi, words: CreatedMetric, status: str, fields: dict[str, Any], expected: str
) -> None:
    board = metric_board(client, words, status=status, **fields)

    assert board.status == expected
    assert client.admin.leaderboards.get(board.id).status == expected


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ({"rank_by": "metric"}, "metricId"),
        ({"rank_by": "metric", "metric_id": str(uuid.uuid4())}, "metricId"),
        ({"rank_by": "points"}, "pointsSystemId"),
        ({"rank_by": "points", "points_system_id": str(uuid.uuid4())}, "pointsSystemId"),
        ({"rank_by": "streak", "run_unit": "day", "run_interval": 1}, "perpetual"),
        ({"rank_by": "streak", "run_unit": "day"}, "runInterval"),
        ({"rank_by": "streak", "run_interval": 2}, "runUnit"),
        ({"rank_by": "streak", "run_unit": "week", "run_interval": 1}, "runUnit"),
        ({"rank_by": "streak", "max_participants": 0}, "maxParticipants"),
        ({"rank_by": "streak", "max_participants": 1001}, "maxParticipants"),
        ({"rank_by": "streak", "start": day(0), "end": day(-1)}, "end"),
        ({"rank_by": "streak", "start_time": "25:00"}, "startTime"),
        ({"rank_by": "streak", "key": "has space"}, "key"),
        ({"rank_by": "streak", "breakdown_attributes": [str(uuid.uuid4())]}, "ttribute"),
        ({"rank_by": "ranking"}, "rankBy"),
        ({"rank_by": "streak", "status": "active", "end": day(-1), "start": day(-5)}, "end"),
        ({"rank_by": "streak", "status": "finished"}, "inished"),
        ({"rank_by": "streak", "status": "finished", "end": day(0)}, "inished"),
    ],
)
def test_invalid_boards_are_issues_and_create_nothing(
    client: TrophyApi, item: dict[str, Any], expected: str
) -> None:
    message = create_issue(client, **item)

    assert expected in message
    assert client.admin.leaderboards.list() == []


def test_a_breakdown_or_filter_attribute_must_be_a_user_attribute(client: TrophyApi) -> None:
    device = create_attribute(client, "device", "event")

    assert create_issue(client, rank_by="streak", breakdown_attributes=[device.id])
    assert create_issue(
        client,
        rank_by="streak",
        user_attributes=[{"attribute_id": device.id, "attribute_value": "ios"}],
    )
    assert client.admin.leaderboards.list() == []


def test_a_board_key_is_unique(client: TrophyApi, words: CreatedMetric) -> None:
    create_board(client, "top", rank_by="streak")

    response = client.admin.leaderboards.with_raw_response.create(
        request=[
            {"name": "Again", "key": "top", "rank_by": "streak"},
            {"name": "Words", "key": "words", "rank_by": "metric", "metric_id": words.id},
        ]
    )

    assert response.status_code == 201
    assert [b.key for b in response.data.created] == ["words"]
    assert [(i.index, i.severity) for i in response.data.issues] == [(0, "error")]
    assert "Key already in use" in response.data.issues[0].message


def test_list_boards_is_oldest_first_with_limit_and_skip(client: TrophyApi) -> None:
    keys = [create_board(client, f"board-{n}", rank_by="streak").key for n in range(3)]

    assert [b.key for b in client.admin.leaderboards.list()] == keys
    assert [b.key for b in client.admin.leaderboards.list(limit=1, skip=1)] == ["board-1"]
    assert client.admin.leaderboards.list(skip=3) == []


def test_get_of_an_unknown_or_malformed_board_id_is_404(client: TrophyApi) -> None:
    for board_id in (str(uuid.uuid4()), "not-a-uuid"):
        with pytest.raises(NotFoundError) as caught:
            client.admin.leaderboards.get(board_id)
        assert error_message(caught.value) == "Leaderboard not found by ID"


# --- admin: update and delete -----------------------------------------------------------------


def test_update_changes_the_given_fields_and_null_clears_the_optional_ones(
    client: TrophyApi, words: CreatedMetric
) -> None:
    board = create_board(
        client,
        "top",
        rank_by="metric",
        metric_id=words.id,
        description="d",
        end=day(10),
        start_time="08:00",
        end_time="18:00",
        run_unit="month",
        run_interval=1,
    )

    response = client.admin.leaderboards.with_raw_response.update(
        request=[
            {
                "id": board.id,
                "name": "Renamed",
                "key": "renamed",  # allowed while inactive
                "max_participants": 10,
                "end": None,
                "start_time": None,
                "end_time": "23:59",
                "run_unit": None,
                "run_interval": None,
            }
        ]
    )

    assert response.status_code == 200
    assert response.data.issues == []
    (updated,) = response.data.updated
    assert isinstance(updated, AdminLeaderboard)
    assert (updated.id, updated.name, updated.key, updated.description) == (
        board.id,
        "Renamed",
        "renamed",
        "d",
    )
    assert (updated.max_participants, updated.end, updated.start_time, updated.end_time) == (
        10,
        None,
        None,
        "23:59",
    )
    assert (updated.run_unit, updated.run_interval) == (None, None)
    assert (updated.status, updated.metric_id) == ("inactive", words.id)
    assert client.admin.leaderboards.get(board.id) == updated


def test_an_inactive_board_can_change_what_it_ranks_by(
    client: TrophyApi, words: CreatedMetric
) -> None:
    board = create_board(client, "top", rank_by="metric", metric_id=words.id)
    xp = create_system(client, "xp")

    (updated,) = client.admin.leaderboards.update(
        request=[{"id": board.id, "rank_by": "points", "points_system_id": xp.id}]
    ).updated

    assert (updated.rank_by, updated.points_system_id, updated.metric_id) == ("points", xp.id, None)


def test_key_rank_by_and_user_attributes_are_frozen_once_live(
    client: TrophyApi, words: CreatedMetric, plan: AdminAttribute
) -> None:
    board = metric_board(client, words)
    scheduled = metric_board(client, words, "later", start=day(2))

    for target in (board, scheduled):
        assert "key" in update_issue(client, target, key="renamed")
        assert "rankBy" in update_issue(client, target, rank_by="streak")
        assert "userAttributes" in update_issue(
            client, target, user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}]
        )
    assert client.admin.leaderboards.get(board.id) == board

    # the rest stays editable
    (renamed,) = client.admin.leaderboards.update(
        request=[{"id": board.id, "name": "Renamed", "max_participants": 5}]
    ).updated
    assert (renamed.name, renamed.key, renamed.max_participants, renamed.status) == (
        "Renamed",
        "top",
        5,
        "active",
    )

    # back to inactive, the frozen fields can change again
    (off,) = client.admin.leaderboards.update(
        request=[{"id": board.id, "status": "inactive"}]
    ).updated
    assert off.status == "inactive"
    (rekeyed,) = client.admin.leaderboards.update(request=[{"id": board.id, "key": "new"}]).updated
    assert rekeyed.key == "new"


def test_status_transitions_through_update(client: TrophyApi, words: CreatedMetric) -> None:
    board = create_board(client, "top", rank_by="metric", metric_id=words.id, start=day(2))

    (live,) = client.admin.leaderboards.update(
        request=[{"id": board.id, "status": "active"}]
    ).updated
    assert live.status == "scheduled"
    (now,) = client.admin.leaderboards.update(
        request=[{"id": board.id, "start": day(0), "status": "active"}]
    ).updated
    assert (now.start, now.status) == (day(0), "active")

    assert "inished" in update_issue(client, board, status="finished")  # no end yet

    past = create_board(
        client, "past", rank_by="metric", metric_id=words.id, start=day(-9), end=day(-2)
    )
    assert "end" in update_issue(client, past, status="active")
    (done,) = client.admin.leaderboards.update(
        request=[{"id": past.id, "status": "finished"}]
    ).updated
    assert done.status == "finished"


def test_update_of_unknown_boards_is_an_issue_per_item(client: TrophyApi) -> None:
    unknown = str(uuid.uuid4())

    response = client.admin.leaderboards.update(
        request=[{"id": unknown, "name": "x"}, {"id": "not-a-uuid", "name": "y"}]
    )

    assert response.updated == []
    assert [(i.id, i.index, i.severity) for i in response.issues] == [
        (unknown, None, "error"),
        (None, 1, "error"),
    ]
    assert response.issues[0].message == "Leaderboard not found by ID"


def test_delete_removes_a_board_from_every_read(client: TrophyApi, words: CreatedMetric) -> None:
    board = metric_board(client, words)
    other = metric_board(client, words, "other")
    event(client, "ada", 5)
    unknown = str(uuid.uuid4())
    # ada is ranked: nothing goes until its key confirms it (issue 27's guard rails).
    refused = client.admin.leaderboards.delete(ids=[board.id])
    assert refused.deleted == []
    assert [(i.id, i.severity) for i in refused.issues] == [(board.id, "error")]

    response = client.admin.leaderboards.with_raw_response.delete(
        ids=[board.id, unknown, "not-a-uuid"],
        request_options={"additional_query_parameters": {"confirm": board.key}},
    )

    assert response.status_code == 200
    assert response.data.deleted == [DeletedResource(id=board.id)]
    assert [(i.id, i.severity) for i in response.data.issues] == [
        (unknown, "error"),
        ("not-a-uuid", "error"),
    ]
    assert [b.id for b in client.admin.leaderboards.list()] == [other.id]
    with pytest.raises(NotFoundError):
        client.admin.leaderboards.get(board.id)
    with pytest.raises(NotFoundError):
        client.leaderboards.get("top")
    with pytest.raises(NotFoundError):
        client.users.leaderboard("ada", "top")
    assert [b.key for b in client.leaderboards.all_()] == ["other"]
    assert set(event(client, "ada", 1).leaderboards) == {"other"}


def test_the_leaderboard_endpoints_refuse_an_unknown_key(
    client: TrophyApi, make_client: MakeClient, words: CreatedMetric
) -> None:
    board = metric_board(client, words)
    anonymous = make_client("not-a-key")

    for call in (
        anonymous.admin.leaderboards.list,
        lambda: anonymous.admin.leaderboards.get(board.id),
        lambda: anonymous.admin.leaderboards.create(
            request=[{"name": "x", "key": "x", "rank_by": "streak"}]
        ),
        lambda: anonymous.admin.leaderboards.update(request=[{"id": board.id, "name": "x"}]),
        lambda: anonymous.admin.leaderboards.delete(ids=[board.id]),
        anonymous.leaderboards.all_,
        lambda: anonymous.leaderboards.get("top"),
        lambda: anonymous.users.leaderboard("ada", "top"),
    ):
        with pytest.raises(UnauthorizedError) as caught:
            call()
        assert caught.value.status_code == 401


# --- GET /leaderboards ------------------------------------------------------------------------


def test_all_lists_live_boards_and_finished_ones_on_request(
    client: TrophyApi, words: CreatedMetric, plan: AdminAttribute, country: AdminAttribute
) -> None:
    xp = create_system(client, "xp")
    metric_board(
        client,
        words,
        "top",
        description="Most words",
        max_participants=20,
        start_time="06:00",
        end_time="22:00",
        breakdown_attributes=[country.id],
        user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}],
    )
    create_board(client, "xp", rank_by="points", points_system_id=xp.id, status="active")
    create_board(client, "streaks", rank_by="streak", status="active", start=day(5))
    create_board(client, "hidden", rank_by="streak")  # inactive: never listed
    create_board(client, "over", rank_by="streak", status="finished", start=day(-9), end=day(-2))

    boards = client.leaderboards.all_()
    everything = client.leaderboards.all_(include_finished=True)

    assert all(isinstance(b, LeaderboardsAllResponseItem) for b in boards + everything)
    assert [(b.key, b.status) for b in boards] == [
        ("top", "active"),
        ("xp", "active"),
        ("streaks", "scheduled"),
    ]
    assert [(b.key, b.status) for b in everything] == [
        ("top", "active"),
        ("xp", "active"),
        ("streaks", "scheduled"),
        ("over", "finished"),
    ]
    assert client.leaderboards.all_(include_finished=False) == boards
    top, points, streaks = boards
    assert (top.name, top.rank_by, top.description, top.metric_key, top.metric_name) == (
        "Top",
        "metric",
        "Most words",
        "words",
        "Words",
    )
    assert (top.points_system_key, top.points_system_name) == (None, None)
    assert (top.start, top.end, top.start_time, top.end_time, top.max_participants) == (
        day(0),
        None,
        "06:00",
        "22:00",
        20,
    )
    assert (top.breakdown_attributes, top.run_unit, top.run_interval) == (["country"], None, None)
    assert top.user_attributes == [LeaderboardResponseUserAttributesItem(key="plan", value="pro")]
    assert (points.rank_by, points.points_system_key, points.points_system_name) == (
        "points",
        "xp",
        "XP",
    )
    assert (points.metric_key, points.breakdown_attributes, points.user_attributes) == (
        None,
        [],
        [],
    )
    assert (streaks.rank_by, streaks.start, streaks.metric_key) == ("streak", day(5), None)
    assert everything[3].end == day(-2)


def test_a_repeating_board_shows_the_end_of_its_current_run(
    client: TrophyApi, words: CreatedMetric
) -> None:
    metric_board(client, words, "weekly", start=day(-2), run_unit="day", run_interval=7)
    metric_board(client, words, "capped", start=day(-2), end=day(1), run_unit="day", run_interval=7)

    weekly, capped = client.leaderboards.all_()

    assert (weekly.start, weekly.end, weekly.run_unit, weekly.run_interval) == (
        day(-2),
        day(4),
        "day",
        7,
    )
    assert capped.end == day(1)  # the run ends with the board


# --- GET /leaderboards/{key} ------------------------------------------------------------------


def test_rankings_order_by_value_and_ties_by_who_reached_the_value_first(
    client: TrophyApi, words: CreatedMetric
) -> None:
    board = metric_board(client, words)
    event(client, "bob", 5, name="Bob")
    event(client, "ada", 10, name="Ada")
    event(client, "cat", 3)
    event(client, "bob", 5)  # bob reaches 10 after ada
    event(client, "dan", 20)

    response = client.leaderboards.get("top")

    assert isinstance(response, LeaderboardResponseWithRankings)
    assert (response.id, response.key, response.name, response.status) == (
        board.id,
        "top",
        "Top",
        "active",
    )
    assert (response.rank_by, response.metric_key, response.metric_name) == (
        "metric",
        "words",
        "Words",
    )
    assert [(r.user_id, r.user_name, r.rank, r.value) for r in response.rankings] == [
        ("dan", None, 1, 20),
        ("ada", "Ada", 2, 10),
        ("bob", "Bob", 3, 10),
        ("cat", None, 4, 3),
    ]
    assert rankings(client, offset=1, limit=2) == [("ada", 2, 10), ("bob", 3, 10)]
    assert rankings(client, offset=4) == []
    assert rankings(client, limit=0) == []


def test_rankings_default_to_a_page_of_ten(client: TrophyApi, words: CreatedMetric) -> None:
    metric_board(client, words)
    for n in range(12):
        event(client, f"user-{n:02}", n + 1)

    page = rankings(client)

    assert [rank for _, rank, _ in page] == list(range(1, 11))
    assert page[0] == ("user-11", 1, 12)
    assert rankings(client, offset=10) == [("user-01", 11, 2), ("user-00", 12, 1)]


def test_user_id_centres_the_page_on_that_user(client: TrophyApi, words: CreatedMetric) -> None:
    metric_board(client, words)
    for n, user in enumerate(["ada", "bob", "cat", "dan", "eve"]):
        event(client, user, 50 - n)  # ada first ... eve last

    assert rankings(client, user_id="cat", limit=2) == [("cat", 3, 48), ("dan", 4, 47)]
    assert rankings(client, user_id="eve") == [("eve", 5, 46)]
    assert rankings(client, user_id="nobody") == []


def test_an_inactive_or_unknown_board_is_not_found(client: TrophyApi, words: CreatedMetric) -> None:
    create_board(client, "hidden", rank_by="metric", metric_id=words.id)

    for key in ("hidden", "unknown"):
        with pytest.raises(NotFoundError) as caught:
            client.leaderboards.get(key)
        assert key in error_message(caught.value)
        with pytest.raises(NotFoundError):
            client.users.leaderboard("ada", key)


def test_invalid_rankings_parameters_are_422(client: TrophyApi, words: CreatedMetric) -> None:
    metric_board(client, words, start=day(-1))

    for params in (
        {"limit": 1001},
        {"offset": -1},
        {"run": "not-a-date"},
        {"run": day(-5)},  # before the board starts
        {"user_attributes": "plan:pro"},  # not a breakdown board
    ):
        with pytest.raises(UnprocessableEntityError) as caught:
            client.leaderboards.get("top", **params)
        assert error_message(caught.value)


def test_a_scheduled_board_is_readable_but_ranks_nobody_yet(
    client: TrophyApi, words: CreatedMetric
) -> None:
    metric_board(client, words, start=day(2))

    assert event(client, "ada", 10).leaderboards == {}
    response = client.leaderboards.get("top")
    assert (response.status, response.start, response.rankings) == ("scheduled", day(2), [])
    assert user_rank(client, "ada") == (None, None)


def test_an_inactive_board_ranks_nobody_and_keeps_its_entries_when_taken_off_the_air(
    client: TrophyApi, words: CreatedMetric
) -> None:
    board = create_board(client, "top", rank_by="metric", metric_id=words.id)
    assert event(client, "ada", 10).leaderboards == {}

    client.admin.leaderboards.update(request=[{"id": board.id, "status": "active"}])
    assert on_board(event(client, "bob", 4)).rank == 1
    client.admin.leaderboards.update(request=[{"id": board.id, "status": "inactive"}])
    assert event(client, "bob", 4).leaderboards == {}
    client.admin.leaderboards.update(request=[{"id": board.id, "status": "active"}])

    assert rankings(client) == [("bob", 1, 4)]


def test_a_finished_board_stays_readable(client: TrophyApi, words: CreatedMetric) -> None:
    create_board(
        client,
        "over",
        rank_by="metric",
        metric_id=words.id,
        status="finished",
        start=day(-9),
        end=day(-2),
    )

    assert event(client, "ada", 10).leaderboards == {}
    response = client.leaderboards.get("over")
    assert (response.status, response.end, response.rankings) == ("finished", day(-2), [])
    assert rankings(client, "over", run=day(-5)) == []


# --- runs -------------------------------------------------------------------------------------


def test_a_daily_board_ranks_each_run_separately_and_past_runs_stay_readable(
    client: TrophyApi, words: CreatedMetric
) -> None:
    metric_board(client, words, start=day(-3), run_unit="day", run_interval=1)

    response = on_board(event(client, "ada", 10))
    assert (response.rank, response.end) == (1, day(0))

    assert rankings(client) == [("ada", 1, 10)]
    assert rankings(client, run=day(0)) == [("ada", 1, 10)]
    assert rankings(client, run=day(-1)) == []
    assert client.leaderboards.get("top", run=day(-1)).end == day(-1)
    history = client.users.leaderboard("ada", "top", run=day(-2))
    assert (history.rank, history.value, history.end) == (None, None, day(-2))


def test_a_multi_day_run_is_addressed_by_any_date_inside_it(
    client: TrophyApi, words: CreatedMetric
) -> None:
    metric_board(client, words, start=day(-1), run_unit="day", run_interval=3)
    event(client, "ada", 7)

    for run in (day(-1), day(0), day(1)):
        response = client.leaderboards.get("top", run=run)
        assert (response.end, [(r.user_id, r.value) for r in response.rankings]) == (
            day(1),
            [("ada", 7)],
        )
    assert rankings(client, run=day(2)) == []


# --- capacity and thresholds ------------------------------------------------------------------


def test_a_full_board_takes_only_newcomers_who_beat_the_lowest_entry(
    client: TrophyApi, words: CreatedMetric
) -> None:
    metric_board(client, words, max_participants=2)

    ada = on_board(event(client, "ada", 10))
    assert (ada.rank, ada.previous_rank, ada.threshold) == (1, None, 0)
    bob = on_board(event(client, "bob", 5))
    assert (bob.rank, bob.previous_rank, bob.threshold) == (2, None, 5)  # now full

    cat = event(client, "cat", 5).leaderboards.get("top")  # a tie does not beat the lowest
    assert cat is None or (cat.rank, cat.previous_rank, cat.threshold) == (None, None, 5)
    assert rankings(client) == [("ada", 1, 10), ("bob", 2, 5)]
    assert user_rank(client, "cat") == (None, None)

    dan = on_board(event(client, "dan", 7))  # displaces bob
    assert (dan.rank, dan.previous_rank, dan.threshold) == (2, None, 7)
    assert rankings(client) == [("ada", 1, 10), ("dan", 2, 7)]
    assert user_rank(client, "bob") == (None, None)

    # bob comes back with everything he gained in the run: 5 + 4 = 9 > 7
    back = on_board(event(client, "bob", 4))
    assert (back.rank, back.previous_rank, back.threshold) == (2, None, 9)
    assert rankings(client) == [("ada", 1, 10), ("bob", 2, 9)]

    # a participant climbing: previous rank and new rank
    up = on_board(event(client, "bob", 2))
    assert (up.rank, up.previous_rank, up.threshold) == (1, 2, 10)
    assert rankings(client) == [("bob", 1, 11), ("ada", 2, 10)]


def test_the_event_response_describes_each_board_it_changed(
    client: TrophyApi, words: CreatedMetric
) -> None:
    board = metric_board(client, words, end=day(20), description="Most words")
    create_metric(client, "lessons")

    first = on_board(event(client, "ada", 3))
    assert (first.id, first.name, first.rank_by, first.description) == (
        board.id,
        "Top",
        "metric",
        "Most words",
    )
    assert (first.metric_key, first.metric_name, first.start, first.end) == (
        "words",
        "Words",
        day(0),
        day(20),
    )
    assert (first.rank, first.previous_rank, first.threshold) == (1, None, 0)
    assert first.breakdown_attribute_values in (None, [])
    assert first.breakdown_attributes == []

    assert on_board(event(client, "bob", 5)).rank == 1  # ada drops to 2
    again = on_board(event(client, "ada", 3))  # 6 > 5
    assert (again.rank, again.previous_rank, again.threshold) == (1, 2, 0)
    assert event(client, "ada", 1, key="lessons").leaderboards == {}  # not this board's metric


# --- points and streak boards -----------------------------------------------------------------


def test_a_points_board_ranks_the_points_gained(
    client: TrophyApi, words: CreatedMetric, xp: CreatedAdminPointsSystem
) -> None:
    create_board(client, "xp-board", rank_by="points", points_system_id=xp.id, status="active")

    response = event(client, "ada", 3)
    ada = on_board(response, "xp-board")
    assert response.points["xp"].added == 6
    assert (ada.rank, ada.points_system_key, ada.points_system_name, ada.metric_key) == (
        1,
        "xp",
        "XP",
        None,
    )
    event(client, "bob", 5)

    assert rankings(client, "xp-board") == [("bob", 1, 10), ("ada", 2, 6)]
    assert user_rank(client, "ada", "xp-board") == (2, 6)


def test_a_streak_board_ranks_the_current_streak_length(
    daily: TrophyApi, words: CreatedMetric
) -> None:
    client = daily
    create_board(client, "streaks", rank_by="streak", status="active")

    ada = on_board(event(client, "ada", 1), "streaks")
    assert (ada.rank, ada.rank_by) == (1, "streak")
    assert "streaks" not in event(client, "ada", 1).leaderboards  # the streak did not change
    bob = on_board(event(client, "bob", 1), "streaks")
    assert (bob.rank, bob.previous_rank) == (2, None)  # same length, reached later

    assert rankings(client, "streaks") == [("ada", 1, 1), ("bob", 2, 1)]


# --- daily time windows -----------------------------------------------------------------------


def test_only_activity_inside_the_daily_time_window_counts(
    client: TrophyApi, words: CreatedMetric
) -> None:
    metric_board(client, words, "open", start_time=hhmm(-60), end_time=hhmm(60))
    metric_board(client, words, "closed", start_time=hhmm(60), end_time=hhmm(120))
    metric_board(client, words, "from-midnight", start_time="00:00")  # only a start: from then on
    metric_board(client, words, "until-midnight", end_time="00:00")  # only an end: until then

    response = event(client, "ada", 4)

    assert set(response.leaderboards) == {"open", "from-midnight"}
    assert rankings(client, "open") == [("ada", 1, 4)]
    assert rankings(client, "closed") == []


# --- participation filters and breakdowns -----------------------------------------------------


def test_only_users_matching_the_user_attributes_take_part(
    client: TrophyApi, words: CreatedMetric, plan: AdminAttribute
) -> None:
    metric_board(
        client, words, user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}]
    )

    assert on_board(event(client, "ada", 5, attributes={"plan": "pro"})).rank == 1
    assert event(client, "bob", 9, attributes={"plan": "free"}).leaderboards == {}
    assert event(client, "cat", 9).leaderboards == {}

    assert rankings(client) == [("ada", 1, 5)]
    assert user_rank(client, "bob") == (None, None)


def test_a_breakdown_board_ranks_each_group_separately(
    client: TrophyApi, words: CreatedMetric, plan: AdminAttribute, country: AdminAttribute
) -> None:
    metric_board(client, words, breakdown_attributes=[country.id, plan.id])

    ada = on_board(event(client, "ada", 5, attributes={"country": "fr", "plan": "pro"}))
    assert ada.breakdown_attributes == ["country", "plan"]
    assert ada.breakdown_attribute_values == [
        MetricEventLeaderboardResponseBreakdownAttributeValuesItem(key="country", value="fr"),
        MetricEventLeaderboardResponseBreakdownAttributeValuesItem(key="plan", value="pro"),
    ]
    assert (ada.rank, ada.threshold) == (1, 0)
    bob = on_board(event(client, "bob", 9, attributes={"country": "de", "plan": "pro"}))
    assert bob.rank == 1  # a group of his own
    cat = on_board(event(client, "cat", 7, attributes={"country": "fr", "plan": "pro"}))
    assert cat.rank == 1
    assert event(client, "dan", 9, attributes={"country": "fr"}).leaderboards == {}  # no plan

    assert rankings(client, user_attributes="country:fr,plan:pro") == [
        ("cat", 1, 7),
        ("ada", 2, 5),
    ]
    assert rankings(client, user_attributes="plan:pro,country:de") == [("bob", 1, 9)]
    assert rankings(client, user_attributes="country:us,plan:free") == []
    assert user_rank(client, "ada") == (2, 5)
    assert user_rank(client, "dan") == (None, None)
    response = client.leaderboards.get("top", user_attributes="country:fr,plan:pro")
    assert response.breakdown_attributes == ["country", "plan"]


def test_a_breakdown_board_needs_a_value_for_every_breakdown_attribute(
    client: TrophyApi, words: CreatedMetric, plan: AdminAttribute, country: AdminAttribute
) -> None:
    metric_board(client, words, breakdown_attributes=[country.id, plan.id])

    for params in (
        {},
        {"user_attributes": "country:fr"},
        {"user_attributes": "country:fr,plan:pro,extra:1"},
        {"user_attributes": "nonsense"},
    ):
        with pytest.raises(UnprocessableEntityError) as caught:
            client.leaderboards.get("top", **params)
        assert error_message(caught.value)


def test_max_participants_applies_per_breakdown_group(
    client: TrophyApi, words: CreatedMetric, country: AdminAttribute
) -> None:
    metric_board(client, words, max_participants=1, breakdown_attributes=[country.id])

    on_board(event(client, "ada", 5, attributes={"country": "fr"}))
    bob = on_board(event(client, "bob", 1, attributes={"country": "de"}))
    assert (bob.rank, bob.threshold) == (1, 1)
    cat = on_board(event(client, "cat", 6, attributes={"country": "fr"}))
    assert (cat.rank, cat.threshold) == (1, 6)

    assert rankings(client, user_attributes="country:fr") == [("cat", 1, 6)]
    assert rankings(client, user_attributes="country:de") == [("bob", 1, 1)]


# --- GET /users/{id}/leaderboards/{key} -------------------------------------------------------


def test_a_users_leaderboard_has_rank_value_and_the_board(
    client: TrophyApi, words: CreatedMetric
) -> None:
    board = metric_board(client, words, end=day(5))
    event(client, "ada", 3)
    event(client, "bob", 8)
    client.users.create(id="cat")

    response = client.users.leaderboard("ada", "top")

    assert isinstance(response, UserLeaderboardResponseWithHistory)
    assert (response.id, response.key, response.name, response.rank_by) == (
        board.id,
        "top",
        "Top",
        "metric",
    )
    assert (response.metric_key, response.start, response.end) == ("words", day(0), day(5))
    assert (response.rank, response.value, response.history) == (2, 3, [])
    assert user_rank(client, "bob") == (1, 8)
    assert user_rank(client, "cat") == (None, None)  # not on the board
    with pytest.raises(NotFoundError):
        client.users.leaderboard("nobody", "top")


def test_the_history_comes_from_the_daily_snapshots(
    client: TrophyApi, words: CreatedMetric
) -> None:
    from apps.leaderboards.jobs import leaderboards_snapshots

    metric_board(client, words)
    event(client, "ada", 3)
    event(client, "bob", 8)

    leaderboards_snapshots(dt.datetime.now(UTC))
    event(client, "ada", 10)  # after the snapshot: rank 1, 13
    leaderboards_snapshots(dt.datetime.now(UTC))  # rewrites today's snapshot

    response = client.users.leaderboard("ada", "top", num_events=5)
    (snapshot,) = response.history
    assert isinstance(snapshot, LeaderboardEvent)
    assert (snapshot.date, snapshot.rank, snapshot.value) == (day(0), 1, 13)
    assert (snapshot.previous_rank, snapshot.previous_value) == (None, None)
    assert snapshot.timestamp == dt.datetime.combine(today(), dt.time(), tzinfo=UTC)
    assert (response.rank, response.value) == (1, 13)
    assert client.users.leaderboard("ada", "top", num_events=0).history == []
    bob = client.users.leaderboard("bob", "top")
    assert [(h.rank, h.value) for h in bob.history] == [(2, 8)]


def test_invalid_user_leaderboard_parameters_are_422(
    client: TrophyApi, words: CreatedMetric
) -> None:
    metric_board(client, words)
    event(client, "ada", 1)

    for params in ({"num_events": 101}, {"num_events": -1}, {"run": "yesterday"}):
        with pytest.raises(UnprocessableEntityError) as caught:
            client.users.leaderboard("ada", "top", **params)
        assert error_message(caught.value)


# --- lifecycle job ----------------------------------------------------------------------------


def test_the_lifecycle_job_starts_scheduled_boards_and_finishes_ended_ones(
    client: TrophyApi, words: CreatedMetric
) -> None:
    from apps.leaderboards.jobs import leaderboards_lifecycle

    later = metric_board(client, words, "later", start=day(1))
    ending = metric_board(client, words, "ending", end=day(0))
    now = dt.datetime.now(UTC)

    leaderboards_lifecycle(now)
    assert client.admin.leaderboards.get(later.id).status == "scheduled"
    assert client.admin.leaderboards.get(ending.id).status == "active"

    tomorrow_noon = dt.datetime.combine(today() + dt.timedelta(days=1), dt.time(12), tzinfo=UTC)
    leaderboards_lifecycle(tomorrow_noon)
    leaderboards_lifecycle(tomorrow_noon)  # idempotent

    assert client.admin.leaderboards.get(later.id).status == "active"
    assert client.admin.leaderboards.get(ending.id).status == "finished"
    assert [(b.key, b.status) for b in client.leaderboards.all_(include_finished=True)] == [
        ("later", "active"),
        ("ending", "finished"),
    ]


def test_each_history_entry_carries_the_previous_days_state(
    client: TrophyApi, words: CreatedMetric
) -> None:
    from apps.leaderboards.jobs import leaderboards_snapshots

    metric_board(client, words, start=day(-3))
    event(client, "ada", 3)
    event(client, "bob", 8)
    yesterday_noon = dt.datetime.combine(today() - dt.timedelta(days=1), dt.time(12), tzinfo=UTC)
    leaderboards_snapshots(yesterday_noon)
    event(client, "ada", 10)
    leaderboards_snapshots(dt.datetime.now(UTC))

    history = client.users.leaderboard("ada", "top", num_events=5).history

    assert [(h.date, h.previous_rank, h.rank, h.previous_value, h.value) for h in history] == [
        (day(0), 2, 1, 3, 13),
        (day(-1), None, 2, None, 3),
    ]
    # the previous state does not depend on how many days are asked for
    (newest,) = client.users.leaderboard("ada", "top", num_events=1).history
    assert (newest.date, newest.previous_rank, newest.previous_value) == (day(0), 2, 3)


def test_rankings_never_exceed_max_participants_after_it_is_lowered(
    client: TrophyApi, words: CreatedMetric
) -> None:
    board = metric_board(client, words, max_participants=5)
    event(client, "ada", 3)
    event(client, "bob", 4)
    event(client, "cat", 5)

    client.admin.leaderboards.update(request=[{"id": board.id, "max_participants": 2}])

    assert rankings(client) == [("cat", 1, 5), ("bob", 2, 4)]
    assert user_rank(client, "ada") == (None, None)
    dan = event(client, "dan", 1).leaderboards.get("top")
    assert dan is None or (dan.rank, dan.threshold) == (None, 4)
