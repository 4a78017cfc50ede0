"""Input shapes of the leaderboards admin API (reference §3.7), and the output shapes that only
the leaderboard endpoints return (those other apps show too are in apps/leaderboards/wire.py)."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField, key_field
from apps.core.api.shapes import Shape, out
from apps.leaderboards import domain
from apps.leaderboards.choices import RankBy, RunUnit, Status
from apps.leaderboards.wire import (
    LEADERBOARD_STATUSES,
    LeaderboardRanking,
    LeaderboardResponse,
    UserLeaderboardResponse,
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


# --- output shapes (declared once: they render and document, apps/core/api/shapes.py) -------


def _status_field() -> Any:
    return out(serializers.ChoiceField(choices=LEADERBOARD_STATUSES), "board.status")


class LeaderboardsAllResponseItem(LeaderboardResponse):
    # Renders a wire.BoardRun.
    status = _status_field()


class LeaderboardResponseWithRankings(LeaderboardResponse):
    # Renders a wire.BoardRun with, as context, the rendered rankings (or None: none).
    status = _status_field()
    rankings = out(LeaderboardRanking(many=True, help_text="Best first."), lambda _, c: c or [])


class LeaderboardEvent(Shape):
    # Renders a (snapshot, the snapshot before it or None) pair.
    date = out(
        serializers.DateField(help_text="The day this snapshot closes."),
        lambda pair, _: pair[0].date.isoformat(),
    )
    timestamp = out(
        serializers.DateTimeField(help_text="Deprecated: date (its start, in UTC)."),
        lambda pair, _: f"{pair[0].date.isoformat()}T00:00:00Z",
    )
    previousRank = out(
        serializers.IntegerField(
            allow_null=True, help_text="The rank of the previous snapshot; null: none or unranked."
        ),
        lambda pair, _: pair[1].rank if pair[1] else None,
    )
    rank = out(
        serializers.IntegerField(allow_null=True, help_text="null: not on the board."),
        lambda pair, _: pair[0].rank,
    )
    previousValue = out(
        serializers.IntegerField(allow_null=True),
        lambda pair, _: int(pair[1].value) if pair[1] and pair[1].value is not None else None,
    )
    value = out(
        serializers.IntegerField(allow_null=True),
        lambda pair, _: int(pair[0].value) if pair[0].value is not None else None,
    )


@dataclass(frozen=True)
class UserRank:
    rank: int | None
    value: int | None
    history: Sequence[tuple[Any, Any]]  # (snapshot, the one before it or None), newest first


class UserLeaderboardResponseWithHistory(UserLeaderboardResponse):
    # Renders a wire.BoardRun with, as context, a UserRank.
    history = out(
        LeaderboardEvent(many=True, help_text="Daily snapshots in this run, newest first."),
        lambda _, c: [LeaderboardEvent.render(pair) for pair in c.history],
    )


def _id_of(attr: str) -> Any:
    return lambda b, _: str(getattr(b, attr).public_id) if getattr(b, attr) else None


class AdminLeaderboard(Shape):
    # Renders a Leaderboard row (with its metric and points system loaded).
    id = out(serializers.UUIDField(), lambda b, _: str(b.public_id))
    name = serializers.CharField()
    key = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=Status.choices)
    rankBy = serializers.ChoiceField(choices=RankBy.choices)
    metricId = out(
        serializers.UUIDField(allow_null=True, help_text="rankBy metric; null otherwise."),
        _id_of("metric"),
    )
    pointsSystemId = out(
        serializers.UUIDField(allow_null=True, help_text="rankBy points; null otherwise."),
        _id_of("points_system"),
    )
    maxParticipants = serializers.IntegerField()
    start = out(serializers.DateField(), lambda b, _: b.start.isoformat())
    end = out(
        serializers.DateField(allow_null=True),
        lambda b, _: b.end.isoformat() if b.end else None,
    )
    startTime = out(
        serializers.CharField(allow_null=True, help_text="HH:mm"),
        lambda b, _: b.start_time.strftime("%H:%M") if b.start_time else None,
    )
    endTime = out(
        serializers.CharField(allow_null=True, help_text="HH:mm"),
        lambda b, _: b.end_time.strftime("%H:%M") if b.end_time else None,
    )
    breakdownAttributes = out(
        serializers.ListField(
            child=serializers.UUIDField(), help_text="Ids of user attributes (not keys)."
        ),
        lambda b, _: list(b.breakdown_attributes),
    )
    runUnit = serializers.ChoiceField(choices=RunUnit.choices, allow_null=True)
    runInterval = serializers.IntegerField(allow_null=True)
    userAttributes = out(
        AttributeRef(many=True, help_text="Participation filter ([] for everyone)."),
        lambda b, _: list(b.user_attributes),
    )
