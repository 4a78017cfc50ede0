"""Wire shapes of achievements: admin input, and the response shapes that render and document
themselves (apps/core/api/shapes.py): the admin achievement, the application's achievement with
statistics, and a user's metrics with their achievements (served by this app). The achievement
as other apps embed it is in apps/achievements/wire.py."""

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, NamedTuple

from rest_framework import serializers

from apps.achievements.choices import Status, Trigger
from apps.achievements.models import Achievement
from apps.achievements.selectors import achievement_settings
from apps.achievements.wire import (
    BadgeSerializer,
    UserAchievementResponse,
    UserAchievementWithStatsResponse,
    with_badge_url,
)
from apps.core.api.fields import StrictSerializer, StringField, key_field
from apps.core.api.shapes import Shape, out
from apps.core.openapi import Badge
from apps.users.wire import AttributeRef, AttributeRefSerializer


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


# --- responses: each shape renders (Shape.render) and documents itself ------------------


class AchievementWithStatsResponse(UserAchievementWithStatsResponse):
    """An achievement (AchievementResponse) with how many users completed it."""

    # Renders an AchievementDef with, as context, its Statistics (no user: no achievedAt).
    achievedAt = None  # DRF drops an inherited field set to None


class UserMetric(NamedTuple):
    """The context of MetricResponse: the user's total and achievements (rendered)."""

    current: Decimal
    achievements: list[dict[str, Any]]


class MetricResponse(Shape):
    # Renders a user's metric (a MetricDef) with, as context, its UserMetric.

    id = out(serializers.CharField(), "public_id")
    key = serializers.CharField()
    name = serializers.CharField()
    status = out(
        serializers.ChoiceField(
            choices=["active"], help_text="Always active (required by the Node SDK)."
        ),
        # Metrics have no other status in gamify; the Node SDK requires the field.
        lambda *_: "active",
    )
    current = out(serializers.FloatField(help_text="The user's total."), "context.current")
    achievements = out(
        UserAchievementResponse(
            many=True, help_text="The metric's achievements with the user's progress."
        ),
        "context.achievements",
    )


def _badge(settings: Mapping[str, Any], _: Any) -> dict[str, str] | None:
    return {"url": settings["badge_url"]} if settings["badge_url"] else None


class AdminAchievement(Shape):
    # Renders a stored achievement's settings as the services take them (achievement_settings)
    # with, as context, the Achievement: the settings of other triggers are absent.

    from_mapping = True

    id = out(serializers.UUIDField(), lambda _, a: str(a.public_id))
    name = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    trigger = serializers.ChoiceField(choices=Trigger.choices)
    status = serializers.ChoiceField(
        choices=Status.choices,
        help_text="inactive: invisible and not completable; locked: no new completions, shown "
        "only to the users who completed it.",
    )
    badge = out(Badge(allow_null=True), _badge)
    userAttributes = AttributeRef(
        many=True, help_text="Only users with all these attribute values can complete it."
    )
    key = serializers.CharField(required=False, help_text="api trigger.")
    metricId = serializers.UUIDField(required=False, help_text="metric trigger.")
    metricValue = serializers.FloatField(
        required=False, help_text="metric trigger: the total that completes it."
    )
    eventAttributes = AttributeRef(
        many=True, required=False, help_text="metric trigger: events counted."
    )
    streakLength = serializers.IntegerField(required=False, help_text="streak trigger.")
    anniversaryYears = serializers.IntegerField(required=False, help_text="anniversary trigger.")
    achievementIds = serializers.ListField(
        child=serializers.UUIDField(),
        required=False,
        help_text="achievement trigger: the achievements to complete first.",
    )


def admin_render(a: Achievement) -> dict[str, Any]:
    return AdminAchievement.render(achievement_settings(a), a)
