"""Input shapes of the leaderboards admin API (reference §3.7), and the output shapes that only
the leaderboard endpoints return (those other apps show too are in apps/leaderboards/wire.py)."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField, key_field
from apps.core.api.shapes import Shape, renders
from apps.leaderboards import domain
from apps.leaderboards.choices import RankBy, RunUnit, Status
from apps.leaderboards.models import Leaderboard, LeaderboardSnapshot
from apps.leaderboards.selectors import BoardDef
from apps.leaderboards.wire import (
    LEADERBOARD_STATUSES,
    LeaderboardRanking,
    LeaderboardResponse,
    UserLeaderboardResponse,
    board_render,
    user_leaderboard_response_render,
)
from apps.users.wire import AttributeRef, AttributeRefSerializer

_TIME_FORMATS = ["%H:%M", "%H:%M:%S"]  # HH:mm (the regex in the reference also allows :ss)


class _BoardFields(StrictSerializer):
    description = StringField(max_length=2000, required=False, allow_null=True, allow_blank=True)
    status = serializers.ChoiceField(choices=Status.choices, required=False)
    metricId = serializers.UUIDField(required=False, allow_null=True)
    pointsSystemId = serializers.UUIDField(required=False, allow_null=True)
    maxParticipants = serializers.IntegerField(min_value=1, max_value=1000, required=False)
    start = serializers.DateField(required=False)
    end = serializers.DateField(required=False, allow_null=True)
    startTime = serializers.TimeField(required=False, allow_null=True, input_formats=_TIME_FORMATS)
    endTime = serializers.TimeField(required=False, allow_null=True, input_formats=_TIME_FORMATS)
    breakdownAttributes = serializers.ListField(
        child=serializers.UUIDField(),
        required=False,
        allow_null=True,
        max_length=domain.MAX_BREAKDOWN_ATTRIBUTES,
    )
    runUnit = serializers.ChoiceField(choices=RunUnit.choices, required=False, allow_null=True)
    runInterval = serializers.IntegerField(
        min_value=1, max_value=domain.MAX_RUN_INTERVAL, required=False, allow_null=True
    )
    userAttributes = AttributeRefSerializer(many=True, required=False, allow_null=True)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The operator's LEADERBOARD_MAX_PARTICIPANTS (default 1,000, Trophy's limit).
        self.fields["maxParticipants"] = serializers.IntegerField(
            min_value=1, max_value=settings.LEADERBOARD_MAX_PARTICIPANTS, required=False
        )

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        for name in ("metricId", "pointsSystemId"):
            if value.get(name) is not None:
                value[name] = str(value[name])
        if value.get("breakdownAttributes"):
            value["breakdownAttributes"] = [str(v) for v in value["breakdownAttributes"]]
        return value


class LeaderboardCreateSerializer(_BoardFields):
    name = StringField(max_length=255)
    key = key_field()
    rankBy = serializers.ChoiceField(choices=RankBy.choices)


class LeaderboardUpdateSerializer(_BoardFields):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    key = key_field()
    rankBy = serializers.ChoiceField(choices=RankBy.choices, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["key"].required = False


# --- output shapes (each documents a body; the function below it renders it) -----------------


def _status_field() -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=LEADERBOARD_STATUSES)


class LeaderboardsAllResponseItem(LeaderboardResponse):
    # A BoardDef and the run shown.
    status = _status_field()


@renders(LeaderboardsAllResponseItem)
def leaderboards_all_response_item_render(
    board: BoardDef, run_start: dt.date | None
) -> dict[str, Any]:
    body = board_render(board, run_start)
    body["status"] = board.status
    return body


class LeaderboardResponseWithRankings(LeaderboardResponse):
    # A BoardDef and the run shown, with the rendered rankings (or None: none).
    status = _status_field()
    rankings = LeaderboardRanking(many=True, help_text="Best first.")


@renders(LeaderboardResponseWithRankings)
def leaderboard_response_with_rankings_render(
    board: BoardDef, run_start: dt.date | None, rankings: list[dict[str, Any]] | None
) -> dict[str, Any]:
    body = board_render(board, run_start)
    body["status"] = board.status
    body["rankings"] = rankings or []
    return body


class LeaderboardEvent(Shape):
    # A snapshot, with the snapshot before it (or None).
    date = serializers.DateField(help_text="The day this snapshot closes.")
    timestamp = serializers.DateTimeField(help_text="Deprecated: date (its start, in UTC).")
    previousRank = serializers.IntegerField(
        allow_null=True, help_text="The rank of the previous snapshot; null: none or unranked."
    )
    rank = serializers.IntegerField(allow_null=True, help_text="null: not on the board.")
    previousValue = serializers.IntegerField(allow_null=True)
    value = serializers.IntegerField(allow_null=True)


@renders(LeaderboardEvent)
def leaderboard_event_render(
    snapshot: LeaderboardSnapshot, before: LeaderboardSnapshot | None
) -> dict[str, Any]:
    return {
        "date": snapshot.date.isoformat(),
        "timestamp": f"{snapshot.date.isoformat()}T00:00:00Z",
        "previousRank": before.rank if before else None,
        "rank": snapshot.rank,
        "previousValue": int(before.value) if before and before.value is not None else None,
        "value": int(snapshot.value) if snapshot.value is not None else None,
    }


@dataclass(frozen=True)
class UserRank:
    rank: int | None
    value: int | None
    # (snapshot, the one before it or None), newest first
    history: Sequence[tuple[LeaderboardSnapshot, LeaderboardSnapshot | None]]


class UserLeaderboardResponseWithHistory(UserLeaderboardResponse):
    # A BoardDef and the run shown, with a UserRank.
    history = LeaderboardEvent(many=True, help_text="Daily snapshots in this run, newest first.")


@renders(UserLeaderboardResponseWithHistory)
def user_leaderboard_response_with_history_render(
    board: BoardDef, run_start: dt.date | None, user_rank: UserRank
) -> dict[str, Any]:
    body = user_leaderboard_response_render(board, run_start, user_rank.rank, user_rank.value)
    body["history"] = [leaderboard_event_render(*pair) for pair in user_rank.history]
    return body


class AdminLeaderboard(Shape):
    # A Leaderboard row (with its metric and points system loaded).
    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=Status.choices)
    rankBy = serializers.ChoiceField(choices=RankBy.choices)
    metricId = serializers.UUIDField(allow_null=True, help_text="rankBy metric; null otherwise.")
    pointsSystemId = serializers.UUIDField(
        allow_null=True, help_text="rankBy points; null otherwise."
    )
    maxParticipants = serializers.IntegerField()
    start = serializers.DateField()
    end = serializers.DateField(allow_null=True)
    startTime = serializers.CharField(allow_null=True, help_text="HH:mm")
    endTime = serializers.CharField(allow_null=True, help_text="HH:mm")
    breakdownAttributes = serializers.ListField(
        child=serializers.UUIDField(), help_text="Ids of user attributes (not keys)."
    )
    runUnit = serializers.ChoiceField(choices=RunUnit.choices, allow_null=True)
    runInterval = serializers.IntegerField(allow_null=True)
    userAttributes = AttributeRef(many=True, help_text="Participation filter ([] for everyone).")


@renders(AdminLeaderboard)
def admin_leaderboard_render(b: Leaderboard) -> dict[str, Any]:
    return {
        "id": str(b.public_id),
        "name": b.name,
        "key": b.key,
        "description": b.description,
        "status": b.status,
        "rankBy": b.rank_by,
        "metricId": str(b.metric.public_id) if b.metric else None,
        "pointsSystemId": str(b.points_system.public_id) if b.points_system else None,
        "maxParticipants": b.max_participants,
        "start": b.start.isoformat(),
        "end": b.end.isoformat() if b.end else None,
        "startTime": b.start_time.strftime("%H:%M") if b.start_time else None,
        "endTime": b.end_time.strftime("%H:%M") if b.end_time else None,
        "breakdownAttributes": list(b.breakdown_attributes),
        "runUnit": b.run_unit,
        "runInterval": b.run_interval,
        "userAttributes": list(b.user_attributes),
    }
