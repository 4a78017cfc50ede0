"""Wire shapes of achievements: admin input, admin output, and a user's metrics with their
achievements (served by this app). The achievement as other apps embed it is in
apps/achievements/wire.py."""

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from rest_framework import serializers

from apps.achievements.choices import Status, Trigger
from apps.achievements.models import Achievement
from apps.achievements.selectors import achievement_settings
from apps.achievements.wire import BadgeSerializer, with_badge_url
from apps.core.api.fields import StrictSerializer, StringField, camel_case, key_field
from apps.metrics.selectors import MetricDef
from apps.users.wire import AttributeRefSerializer


class _AchievementFields(StrictSerializer):
    description = StringField(max_length=2000, required=False, allow_null=True, allow_blank=True)
    status = serializers.ChoiceField(choices=Status.choices, required=False)
    badge = BadgeSerializer(required=False, allow_null=True)
    userAttributes = AttributeRefSerializer(many=True, required=False, allow_null=True)
    key = key_field()
    metricId = serializers.UUIDField(required=False, allow_null=True)
    metricValue = serializers.DecimalField(
        max_digits=24, decimal_places=6, min_value=1, required=False, allow_null=True
    )
    eventAttributes = AttributeRefSerializer(many=True, required=False, allow_null=True)
    streakLength = serializers.IntegerField(
        min_value=1, max_value=100_000, required=False, allow_null=True
    )
    anniversaryYears = serializers.IntegerField(
        min_value=1, max_value=200, required=False, allow_null=True
    )
    achievementIds = serializers.ListField(
        child=serializers.UUIDField(), required=False, allow_null=True, max_length=100
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["key"].required = False
        self.fields["key"].allow_null = True

    def validate_achievementIds(self, value: list[Any] | None) -> list[str] | None:
        return None if value is None else [str(v) for v in value]

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        return with_badge_url(super().service_kwargs(data))

    def validate_metricId(self, value: Any) -> str | None:
        return None if value is None else str(value)


class AchievementCreateSerializer(_AchievementFields):
    name = StringField(max_length=255)
    trigger = serializers.ChoiceField(choices=Trigger.choices)


class AchievementUpdateSerializer(_AchievementFields):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    trigger = serializers.ChoiceField(choices=Trigger.choices, required=False)


def user_metric_render(
    metric: MetricDef, current: Decimal, achievements: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "id": metric.public_id,
        "key": metric.key,
        "name": metric.name,
        # Metrics have no other status in gamify; the Node SDK requires the field.
        "status": "active",
        "current": current,
        "achievements": achievements,
    }


def admin_render(a: Achievement) -> dict[str, Any]:
    """AdminAchievement: the stored settings (achievement_settings) as the admin API names
    them; the badge is an object."""
    body: dict[str, Any] = {"id": str(a.public_id)}
    for name, value in achievement_settings(a).items():
        if name == "badge_url":
            body["badge"] = {"url": value} if value else None
        else:
            body[camel_case(name)] = value
    return body
