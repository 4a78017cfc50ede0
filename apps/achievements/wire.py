"""The achievement as other apps' bodies and documents show it: `UserAchievementResponse` and
`user_achievement_render` (event responses, completions, the year in review, webhook
payloads), with their statistics (`UserAchievementWithStatsResponse`, `Statistics`), and the
badge a configuration takes (`BadgeSerializer`: achievements, points systems and levels).
Declared once here; the achievements app's own routes use them too (docs/style.md, "One app
from another")."""

import datetime as dt
from typing import Any, NamedTuple

from rest_framework import serializers

from apps.achievements.choices import Trigger
from apps.achievements.domain import rarity
from apps.achievements.selectors import AchievementDef, Stats
from apps.core.api.fields import StrictSerializer
from apps.core.api.shapes import Shape, renders
from apps.users.wire import AttributeKeyValue

# The application API's trigger enum: the values of Trigger, named AchievementTriggerEnum as
# Trophy names it (the admin enum, Trigger.choices with its labels, is another component).
ACHIEVEMENT_TRIGGERS = Trigger.values


def kv(filters: dict[str, str] | None) -> list[dict[str, str]]:
    return [{"key": k, "value": v} for k, v in (filters or {}).items()]


def trigger_settings(d: AchievementDef) -> dict[str, Any]:
    """The settings of the achievement's trigger, as UserAchievementResponse and the shapes
    built on it write them (each render adds them with `body.update(trigger_settings(d))`,
    which tests/core/test_shapes.py reads through)."""
    settings: dict[str, Any] = {}
    trigger = d.trigger
    if trigger == Trigger.API:
        settings["key"] = d.key
    elif trigger == Trigger.METRIC:
        settings["metricId"] = d.metric_public_id
        settings["metricName"] = d.metric_name
        settings["metricValue"] = d.metric_value
        settings["eventAttributes"] = kv(d.event_filters)
    elif trigger == Trigger.STREAK:
        settings["streakLength"] = d.streak_length
    elif trigger == Trigger.ANNIVERSARY:
        settings["anniversaryYears"] = d.anniversary_years
    elif trigger == Trigger.ACHIEVEMENT:
        settings["achievementIds"] = list(d.prerequisite_ids)
    return settings


class UserAchievementResponse(Shape):
    # An AchievementDef with the user's completion time (None while not completed).
    # Trigger-specific fields are present only for their trigger.

    never_written = frozenset({"eventAttribute"})

    id = serializers.CharField()
    name = serializers.CharField()
    trigger = serializers.ChoiceField(choices=ACHIEVEMENT_TRIGGERS)
    description = serializers.CharField(required=False, allow_null=True)
    badgeUrl = serializers.CharField(required=False, allow_null=True)
    userAttributes = AttributeKeyValue(many=True)
    key = serializers.CharField(required=False, help_text="api trigger.")
    metricId = serializers.CharField(required=False, help_text="metric trigger.")
    metricName = serializers.CharField(required=False, help_text="metric trigger.")
    metricValue = serializers.FloatField(required=False, help_text="metric trigger.")
    eventAttribute = AttributeKeyValue(required=False, help_text="Deprecated: eventAttributes.")
    eventAttributes = AttributeKeyValue(many=True, required=False)
    streakLength = serializers.IntegerField(required=False, help_text="streak trigger.")
    anniversaryYears = serializers.IntegerField(required=False, help_text="anniversary trigger.")
    achievementIds = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="achievement trigger."
    )
    achievedAt = serializers.DateTimeField(
        required=False, allow_null=True, help_text="null while not completed."
    )


@renders(UserAchievementResponse)
def user_achievement_response_render(
    d: AchievementDef, achieved_at: dt.datetime | None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": d.public_id,
        "name": d.name,
        "trigger": d.trigger,
        "description": d.description,
        "badgeUrl": d.badge_url,
        "userAttributes": kv(d.user_filters),
    }
    body.update(trigger_settings(d))
    body["achievedAt"] = achieved_at
    return body


class Statistics(NamedTuple):
    """What the shapes with statistics add: the user's completion time (None while not
    completed, or for no user) and the tenant's statistics."""

    achieved_at: dt.datetime | None
    stats: Stats


class UserAchievementWithStatsResponse(UserAchievementResponse):
    """An achievement with the user's completion time and how many users completed it."""

    # An AchievementDef with its Statistics.
    achievedAt = serializers.DateTimeField(
        allow_null=True,
        help_text="When the user completed it; null when not completed (includeIncomplete=true).",
    )
    completions = serializers.IntegerField(help_text="Number of users who completed it.")
    rarity = serializers.FloatField(
        help_text="Percent of the tenant's users who completed it, to two decimals."
    )


@renders(UserAchievementWithStatsResponse)
def user_achievement_with_stats_response_render(
    d: AchievementDef, given: Statistics
) -> dict[str, Any]:
    body = user_achievement_response_render(d, given.achieved_at)
    completions = given.stats.completions.get(d.pk, 0)
    body["completions"] = completions
    body["rarity"] = rarity(completions, given.stats.users)
    return body


def user_achievement_render(
    d: AchievementDef, achieved_at: dt.datetime | None, stats: Stats | None = None
) -> dict[str, Any]:
    """UserAchievementResponse, or UserAchievementWithStatsResponse given the statistics."""
    if stats is None:
        return user_achievement_response_render(d, achieved_at)
    return user_achievement_with_stats_response_render(d, Statistics(achieved_at, stats))


class BadgeSerializer(StrictSerializer):
    url = serializers.URLField(max_length=2000)


def with_badge_url(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Service arguments take a badge ({"url"} or null on the wire) as its URL, `badge_url`."""
    if "badge" in kwargs:
        badge = kwargs.pop("badge")
        kwargs["badge_url"] = badge["url"] if badge else None
    return kwargs
