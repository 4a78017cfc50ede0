"""The achievement as other apps' bodies and documents show it: `UserAchievementResponse` and
`user_achievement_render` (event responses, completions, the year in review, webhook
payloads), with their statistics (`UserAchievementWithStatsResponse`, `with_stats`), and the
badge a configuration takes (`BadgeSerializer`: achievements, points systems and levels).
Declared once here; the achievements app's own routes use them too (docs/style.md, "One app
from another")."""

import datetime as dt
from typing import Any

from rest_framework import serializers

from apps.achievements.choices import Trigger
from apps.achievements.domain import rarity
from apps.achievements.selectors import AchievementDef, Stats
from apps.core.api.fields import StrictSerializer
from apps.users.wire import AttributeKeyValue

ACHIEVEMENT_TRIGGERS = ["metric", "streak", "api", "achievement", "anniversary"]


class UserAchievementResponse(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    trigger = serializers.ChoiceField(choices=ACHIEVEMENT_TRIGGERS)
    description = serializers.CharField(required=False, allow_null=True)
    badgeUrl = serializers.CharField(required=False, allow_null=True)
    key = serializers.CharField(required=False, help_text="api trigger.")
    streakLength = serializers.IntegerField(required=False, help_text="streak trigger.")
    anniversaryYears = serializers.IntegerField(required=False, help_text="anniversary trigger.")
    achievementIds = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="achievement trigger."
    )
    metricId = serializers.CharField(required=False, help_text="metric trigger.")
    metricValue = serializers.FloatField(required=False, help_text="metric trigger.")
    metricName = serializers.CharField(required=False, help_text="metric trigger.")
    userAttributes = AttributeKeyValue(many=True)
    eventAttribute = AttributeKeyValue(required=False, help_text="Deprecated: eventAttributes.")
    eventAttributes = AttributeKeyValue(many=True, required=False)
    achievedAt = serializers.DateTimeField(
        required=False, allow_null=True, help_text="null while not completed."
    )


def completions_field() -> serializers.IntegerField:
    return serializers.IntegerField(help_text="Number of users who completed it.")


def rarity_field() -> serializers.FloatField:
    return serializers.FloatField(
        help_text="Percent of the tenant's users who completed it, to two decimals."
    )


class UserAchievementWithStatsResponse(UserAchievementResponse):
    """An achievement with the user's completion time and how many users completed it."""

    achievedAt = serializers.DateTimeField(
        allow_null=True,
        help_text="When the user completed it; null when not completed (includeIncomplete=true).",
    )
    completions = completions_field()
    rarity = rarity_field()


def _kv(filters: dict[str, str] | None) -> list[dict[str, str]]:
    return [{"key": k, "value": v} for k, v in (filters or {}).items()]


def achievement_render(d: AchievementDef) -> dict[str, Any]:
    """AchievementResponse: trigger-specific fields only for their trigger."""
    body: dict[str, Any] = {
        "id": d.public_id,
        "name": d.name,
        "trigger": d.trigger,
        "description": d.description,
        "badgeUrl": d.badge_url,
        "userAttributes": _kv(d.user_filters),
    }
    if d.trigger == Trigger.API:
        body["key"] = d.key
    elif d.trigger == Trigger.METRIC:
        body.update(
            metricId=d.metric_public_id,
            metricName=d.metric_name,
            metricValue=d.metric_value,
            eventAttributes=_kv(d.event_filters),
        )
    elif d.trigger == Trigger.STREAK:
        body["streakLength"] = d.streak_length
    elif d.trigger == Trigger.ANNIVERSARY:
        body["anniversaryYears"] = d.anniversary_years
    elif d.trigger == Trigger.ACHIEVEMENT:
        body["achievementIds"] = list(d.prerequisite_ids)
    return body


def user_achievement_render(d: AchievementDef, achieved_at: dt.datetime | None) -> dict[str, Any]:
    return {**achievement_render(d), "achievedAt": achieved_at}


def with_stats(body: dict[str, Any], d: AchievementDef, stats: Stats) -> dict[str, Any]:
    completions = stats.completions.get(d.pk, 0)
    return {**body, "completions": completions, "rarity": rarity(completions, stats.users)}


class BadgeSerializer(StrictSerializer):
    url = serializers.URLField(max_length=2000)


def with_badge_url(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Service arguments take a badge ({"url"} or null on the wire) as its URL, `badge_url`."""
    if "badge" in kwargs:
        badge = kwargs.pop("badge")
        kwargs["badge_url"] = badge["url"] if badge else None
    return kwargs
