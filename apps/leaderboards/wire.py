"""The leaderboard as other apps' bodies and documents show it: the leaderboards map of event
responses (`MetricEventLeaderboardResponse`) and a user's rank in the year in review
(`UserLeaderboardResponse`), both built on `LeaderboardResponse`, which the leaderboard
endpoints return too, and a ranking of a page of them (`LeaderboardRanking`). Each is one
`Shape` (apps/core/api/shapes.py) that documents it, with the typed function that renders it
below it (docs/style.md, "One app from another")."""

import datetime as dt
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.conf import settings
from rest_framework import serializers

from apps.core.api.shapes import Shape, renders
from apps.leaderboards.choices import RankBy, RunUnit, Status
from apps.users.wire import AttributeKeyValue

if TYPE_CHECKING:  # the selectors and services render with this module
    from apps.leaderboards.selectors import BoardDef
    from apps.leaderboards.services import BoardStanding

# Enum value sets of the application API (named in SPECTACULAR_SETTINGS.ENUM_NAME_OVERRIDES):
# the values of the choices, without their labels, so that they are enums of their own next to
# the admin API's.
LEADERBOARD_RANK_BY = RankBy.values
LEADERBOARD_RUN_UNITS = RunUnit.values
# Labelled: POINTS_BOOST_STATUSES has the same values, and sharing its hash would name this
# enum PointsBoostStatusEnum. An inactive board does not exist in the application API.
LEADERBOARD_STATUSES = [
    (Status.ACTIVE.value, "Active: the current run is counting"),
    (Status.SCHEDULED.value, "Scheduled: starts later"),
    (Status.FINISHED.value, "Finished: past its end date"),
]


def time_field(what: str) -> serializers.CharField:
    return serializers.CharField(
        allow_null=True, help_text=f"HH:mm: {what} of the daily window; null: none."
    )


class LeaderboardResponse(Shape):
    # No docstring: subclasses would inherit it as their component description.
    # A BoardDef and the run shown. The fields of one rankBy are present only for it.
    id = serializers.CharField()
    name = serializers.CharField()
    key = serializers.CharField()
    rankBy = serializers.ChoiceField(choices=LEADERBOARD_RANK_BY)
    breakdownAttribute = serializers.CharField(
        allow_null=True, help_text="Deprecated: breakdownAttributes. Always null."
    )
    breakdownAttributes = serializers.ListField(
        child=serializers.CharField(),
        help_text="Keys of the user attributes the rankings are broken down by ([] for none).",
    )
    description = serializers.CharField(allow_null=True, help_text="null when there is none.")
    start = serializers.DateField(help_text="First day (inclusive).")
    end = serializers.DateField(
        allow_null=True,
        help_text="Last day (inclusive) of the current run of a repeating leaderboard, "
        "else of the leaderboard; null: never ends.",
    )
    startTime = time_field("start")
    endTime = time_field("end")
    maxParticipants = serializers.IntegerField(
        help_text=f"Most users ranked per run (1 to {settings.LEADERBOARD_MAX_PARTICIPANTS})."
    )
    runUnit = serializers.ChoiceField(
        choices=LEADERBOARD_RUN_UNITS, allow_null=True, help_text="null: a single run."
    )
    runInterval = serializers.IntegerField(
        allow_null=True, help_text="Run length in runUnits; null: a single run."
    )
    userAttributes = AttributeKeyValue(
        many=True, help_text="Only users with all these attribute values take part."
    )
    metricKey = serializers.CharField(required=False, help_text="rankBy metric.")
    metricName = serializers.CharField(required=False, help_text="rankBy metric.")
    pointsSystemKey = serializers.CharField(required=False, help_text="rankBy points.")
    pointsSystemName = serializers.CharField(required=False, help_text="rankBy points.")


@renders(LeaderboardResponse)
def board_render(board: "BoardDef", run_start: dt.date | None) -> dict[str, Any]:
    """LeaderboardResponse; `end` is the given run's end for repeating boards (None: the
    board's own dates)."""
    end = board.run_end(run_start) if run_start else board.end
    body: dict[str, Any] = {
        "id": board.public_id,
        "name": board.name,
        "key": board.key,
        "rankBy": board.rank_by,
        "breakdownAttribute": None,
        "breakdownAttributes": list(board.breakdown_keys or ()),
        "description": board.description,
        "start": board.start.isoformat(),
        "end": end.isoformat() if end is not None else None,
        "startTime": board.start_time.strftime("%H:%M") if board.start_time else None,
        "endTime": board.end_time.strftime("%H:%M") if board.end_time else None,
        "maxParticipants": board.max_participants,
        "runUnit": board.run_unit,
        "runInterval": board.run_interval,
        "userAttributes": [{"key": k, "value": v} for k, v in (board.user_filters or {}).items()],
    }
    if board.rank_by == RankBy.METRIC:
        body["metricKey"] = board.metric_key
        body["metricName"] = board.metric_name
    elif board.rank_by == RankBy.POINTS:
        body["pointsSystemKey"] = board.points_key
        body["pointsSystemName"] = board.points_name
    return body


class UserLeaderboardResponse(LeaderboardResponse):
    # A board and run with the user's rank and value.
    rank = serializers.IntegerField(allow_null=True, help_text="null when not on the board.")
    value = serializers.IntegerField(allow_null=True, help_text="null when not on the board.")


@renders(UserLeaderboardResponse)
def user_leaderboard_response_render(
    board: "BoardDef", run_start: dt.date | None, rank: int | None, value: int | None
) -> dict[str, Any]:
    body = board_render(board, run_start)
    body["rank"] = rank
    body["value"] = value
    return body


class MetricEventLeaderboardResponse(LeaderboardResponse):
    """A leaderboard the event affected (no status); `end` is the end of the run the event
    counted in."""

    # A BoardStanding (apps/leaderboards/services.py).

    never_written = frozenset({"breakdownAttributeValue"})
    rank = serializers.IntegerField(
        allow_null=True, help_text="The user's rank now; null: not on the board (it is full)."
    )
    previousRank = serializers.IntegerField(
        allow_null=True, help_text="The user's rank before the event; null: was not on it."
    )
    threshold = serializers.IntegerField(help_text="Minimum value currently needed to enter.")
    breakdownAttributeValue = serializers.CharField(
        required=False, allow_null=True, help_text="Deprecated: breakdownAttributeValues."
    )
    breakdownAttributeValues = AttributeKeyValue(
        many=True, help_text="The user's values of the breakdown attributes ([] for none)."
    )


@renders(MetricEventLeaderboardResponse)
def metric_event_leaderboard_response_render(s: "BoardStanding") -> dict[str, Any]:
    body = board_render(s.board, s.run_start)
    body["rank"] = s.rank
    body["previousRank"] = s.previous_rank
    body["threshold"] = int(s.threshold)
    body["breakdownAttributeValues"] = [
        {"key": k, "value": v}
        for k, v in (part.split("=", 1) for part in s.group.split("|") if part)
    ]
    return body


class LeaderboardRanking(Shape):
    # A user's place in a run.
    userId = serializers.CharField()
    userName = serializers.CharField(allow_null=True)
    rank = serializers.IntegerField(help_text="1-based.")
    value = serializers.IntegerField(help_text="The user's value, as an integer.")


@renders(LeaderboardRanking)
def leaderboard_ranking_render(
    user_id: str, user_name: str | None, rank: int, value: Decimal
) -> dict[str, Any]:
    return {"userId": user_id, "userName": user_name, "rank": rank, "value": int(value)}
