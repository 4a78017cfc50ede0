"""Input shapes of the leaderboards admin API (reference §3.7)."""

from typing import Any

from django.conf import settings
from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField, key_field
from apps.leaderboards import domain
from apps.leaderboards.choices import RankBy, RunUnit, Status
from apps.users.wire import AttributeRefSerializer

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
