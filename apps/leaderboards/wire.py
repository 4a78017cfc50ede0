"""The leaderboard as other apps' bodies and documents show it: the leaderboards map of event
responses (`MetricEventLeaderboardResponse`) and a user's rank in the year in review
(`UserLeaderboardResponse`), both built on `LeaderboardResponse`, which the leaderboard
endpoints return too, and a ranking of a page of them (`LeaderboardRanking`). Each is one
`Shape` (apps/core/api/shapes.py): its fields document it and render it (docs/style.md, "One
app from another").

The board shapes render a `BoardRun` (a board and the run shown) or anything with the same two
attributes, such as the pipeline's `BoardStanding`."""

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from rest_framework import serializers

from apps.core.api.shapes import OMIT, Getter, Shape, never, out
from apps.leaderboards.choices import RankBy, RunUnit, Status
from apps.users.wire import AttributeKeyValue

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


@dataclass(frozen=True)
class BoardRun:
    board: Any  # a BoardDef
    run_start: dt.date | None  # the run shown; None: the board's own dates


def _ranked_by(rank_by: str, attr: str) -> Getter:
    """A field written only for boards ranked by one thing."""
    return lambda r, _: getattr(r.board, attr) if r.board.rank_by == rank_by else OMIT


def _end(r: Any, _: Any) -> str | None:
    board = r.board
    end = board.run_end(r.run_start) if r.run_start else board.end
    return end.isoformat() if end is not None else None


def _hh_mm(attr: str) -> Getter:
    def get(r: Any, _: Any) -> str | None:
        moment = getattr(r.board, attr)
        return moment.strftime("%H:%M") if moment else None

    return get


def time_field(what: str) -> Any:
    return out(
        serializers.CharField(
            allow_null=True, help_text=f"HH:mm: {what} of the daily window; null: none."
        ),
        _hh_mm(f"{what}_time"),
    )


class LeaderboardResponse(Shape):
    # No docstring: subclasses would inherit it as their component description.
    id = out(serializers.CharField(), "board.public_id")
    name = out(serializers.CharField(), "board.name")
    key = out(serializers.CharField(), "board.key")
    rankBy = out(serializers.ChoiceField(choices=LEADERBOARD_RANK_BY), "board.rank_by")
    breakdownAttribute = out(
        serializers.CharField(
            allow_null=True, help_text="Deprecated: breakdownAttributes. Always null."
        ),
        lambda r, _: None,
    )
    breakdownAttributes = out(
        serializers.ListField(
            child=serializers.CharField(),
            help_text="Keys of the user attributes the rankings are broken down by ([] for none).",
        ),
        lambda r, _: list(r.board.breakdown_keys or ()),
    )
    description = out(
        serializers.CharField(allow_null=True, help_text="null when there is none."),
        "board.description",
    )
    start = out(
        serializers.DateField(help_text="First day (inclusive)."),
        lambda r, _: r.board.start.isoformat(),
    )
    end = out(
        serializers.DateField(
            allow_null=True,
            help_text="Last day (inclusive) of the current run of a repeating leaderboard, "
            "else of the leaderboard; null: never ends.",
        ),
        _end,
    )
    startTime = time_field("start")
    endTime = time_field("end")
    maxParticipants = out(
        serializers.IntegerField(
            help_text=f"Most users ranked per run (1 to {settings.LEADERBOARD_MAX_PARTICIPANTS})."
        ),
        "board.max_participants",
    )
    runUnit = out(
        serializers.ChoiceField(
            choices=LEADERBOARD_RUN_UNITS, allow_null=True, help_text="null: a single run."
        ),
        "board.run_unit",
    )
    runInterval = out(
        serializers.IntegerField(
            allow_null=True, help_text="Run length in runUnits; null: a single run."
        ),
        "board.run_interval",
    )
    userAttributes = out(
        AttributeKeyValue(
            many=True, help_text="Only users with all these attribute values take part."
        ),
        lambda r, _: [{"key": k, "value": v} for k, v in (r.board.user_filters or {}).items()],
    )
    metricKey = out(
        serializers.CharField(required=False, help_text="rankBy metric."),
        _ranked_by(RankBy.METRIC, "metric_key"),
    )
    metricName = out(
        serializers.CharField(required=False, help_text="rankBy metric."),
        _ranked_by(RankBy.METRIC, "metric_name"),
    )
    pointsSystemKey = out(
        serializers.CharField(required=False, help_text="rankBy points."),
        _ranked_by(RankBy.POINTS, "points_key"),
    )
    pointsSystemName = out(
        serializers.CharField(required=False, help_text="rankBy points."),
        _ranked_by(RankBy.POINTS, "points_name"),
    )


class UserLeaderboardResponse(LeaderboardResponse):
    # Renders a BoardRun with, as context, an object with the user's `rank` and `value`.
    rank = out(
        serializers.IntegerField(allow_null=True, help_text="null when not on the board."),
        "context.rank",
    )
    value = out(
        serializers.IntegerField(allow_null=True, help_text="null when not on the board."),
        "context.value",
    )


def _breakdown_values(s: Any, _: Any) -> list[dict[str, str]]:
    return [
        {"key": k, "value": v}
        for k, v in (part.split("=", 1) for part in s.group.split("|") if part)
    ]


class MetricEventLeaderboardResponse(LeaderboardResponse):
    """A leaderboard the event affected (no status); `end` is the end of the run the event
    counted in."""

    # Renders a BoardStanding (apps/leaderboards/services.py).
    rank = out(
        serializers.IntegerField(
            allow_null=True, help_text="The user's rank now; null: not on the board (it is full)."
        ),
        "rank",
    )
    previousRank = out(
        serializers.IntegerField(
            allow_null=True, help_text="The user's rank before the event; null: was not on it."
        ),
        "previous_rank",
    )
    threshold = out(
        serializers.IntegerField(help_text="Minimum value currently needed to enter."),
        lambda s, _: int(s.threshold),
    )
    breakdownAttributeValue = out(
        serializers.CharField(
            required=False, allow_null=True, help_text="Deprecated: breakdownAttributeValues."
        ),
        never,
    )
    breakdownAttributeValues = out(
        AttributeKeyValue(
            many=True, help_text="The user's values of the breakdown attributes ([] for none)."
        ),
        _breakdown_values,
    )


class LeaderboardRanking(Shape):
    # Renders a (user id, user name, rank, value) row.
    userId = out(serializers.CharField(), lambda row, _: row[0])
    userName = out(serializers.CharField(allow_null=True), lambda row, _: row[1])
    rank = out(serializers.IntegerField(help_text="1-based."), lambda row, _: row[2])
    value = out(
        serializers.IntegerField(help_text="The user's value, as an integer."),
        lambda row, _: int(row[3]),
    )
