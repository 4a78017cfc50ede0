"""Wire shapes of achievements: admin input, and the response shapes with the functions that
render them (apps/core/api/shapes.py): the admin achievement, the application's achievement with
statistics, and a user's metrics with their achievements (served by this app). The achievement
as other apps embed it is in apps/achievements/wire.py."""

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, NamedTuple

from rest_framework import serializers

from apps.achievements.choices import Status, Trigger
from apps.achievements.domain import (
    MAX_ANNIVERSARY_YEARS,
    MAX_PREREQUISITES,
    MAX_STREAK_LENGTH,
    rarity,
)
from apps.achievements.models import Achievement
from apps.achievements.selectors import AchievementDef, Stats, achievement_settings
from apps.achievements.wire import (
    BadgeSerializer,
    UserAchievementResponse,
    UserAchievementWithStatsResponse,
    kv,
    trigger_settings,
    with_badge_url,
)
from apps.core.api.fields import StrictSerializer, StringField, key_field
from apps.core.api.shapes import Shape, renders
from apps.core.openapi import Badge
from apps.metrics.selectors import MetricDef
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
        min_value=1, max_value=MAX_STREAK_LENGTH, required=False, allow_null=True
    )
    anniversaryYears = serializers.IntegerField(
        min_value=1, max_value=MAX_ANNIVERSARY_YEARS, required=False, allow_null=True
    )
    achievementIds = serializers.ListField(
        child=serializers.UUIDField(), required=False, allow_null=True, max_length=MAX_PREREQUISITES
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


# --- responses: each shape documents a body, the function below it renders it ----------------


class AchievementWithStatsResponse(UserAchievementWithStatsResponse):
    """An achievement (AchievementResponse) with how many users completed it."""

    # An AchievementDef with its Statistics (no user: no achievedAt).
    achievedAt = None  # type: ignore[assignment] # DRF drops an inherited field set to None


@renders(AchievementWithStatsResponse)
def achievement_with_stats_response_render(d: AchievementDef, stats: Stats) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": d.public_id,
        "name": d.name,
        "trigger": d.trigger,
        "description": d.description,
        "badgeUrl": d.badge_url,
        "userAttributes": kv(d.user_filters),
    }
    body.update(trigger_settings(d))
    completions = stats.completions.get(d.pk, 0)
    body["completions"] = completions
    body["rarity"] = rarity(completions, stats.users)
    return body


class UserMetric(NamedTuple):
    """What MetricResponse adds to the metric: the user's total and achievements (rendered)."""

    current: Decimal
    achievements: list[dict[str, Any]]


class MetricResponse(Shape):
    # A user's metric (a MetricDef) with its UserMetric.

    id = serializers.CharField()
    key = serializers.CharField()
    name = serializers.CharField()
    # Metrics have no other status in gamify; the Node SDK requires the field.
    status = serializers.ChoiceField(
        choices=["active"], help_text="Always active (required by the Node SDK)."
    )
    current = serializers.FloatField(help_text="The user's total.")
    achievements = UserAchievementResponse(
        many=True, help_text="The metric's achievements with the user's progress."
    )


@renders(MetricResponse)
def metric_response_render(metric: MetricDef, user_metric: UserMetric) -> dict[str, Any]:
    return {
        "id": metric.public_id,
        "key": metric.key,
        "name": metric.name,
        "status": "active",
        "current": user_metric.current,
        "achievements": user_metric.achievements,
    }


class AdminAchievement(Shape):
    # A stored achievement's settings as the services take them (achievement_settings), with
    # its id: the settings of other triggers are absent.

    id = serializers.UUIDField()
    name = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    trigger = serializers.ChoiceField(choices=Trigger.choices)
    status = serializers.ChoiceField(
        choices=Status.choices,
        help_text="inactive: invisible and not completable; locked: no new completions, shown "
        "only to the users who completed it.",
    )
    badge = Badge(allow_null=True)
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


@renders(AdminAchievement)
def admin_render(a: Achievement) -> dict[str, Any]:
    settings = achievement_settings(a)
    body: dict[str, Any] = {
        "id": str(a.public_id),
        "name": settings["name"],
        "description": settings["description"],
        "trigger": settings["trigger"],
        "status": settings["status"],
        "badge": {"url": settings["badge_url"]} if settings["badge_url"] else None,
        "userAttributes": settings["user_attributes"],
    }
    if "key" in settings:
        body["key"] = settings["key"]
    if "metric_id" in settings:
        body["metricId"] = settings["metric_id"]
    if "metric_value" in settings:
        body["metricValue"] = settings["metric_value"]
    if "event_attributes" in settings:
        body["eventAttributes"] = settings["event_attributes"]
    if "streak_length" in settings:
        body["streakLength"] = settings["streak_length"]
    if "anniversary_years" in settings:
        body["anniversaryYears"] = settings["anniversary_years"]
    if "achievement_ids" in settings:
        body["achievementIds"] = settings["achievement_ids"]
    return body
