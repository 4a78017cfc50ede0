"""The achievement as other apps' bodies and documents show it: `UserAchievementResponse` and
`user_achievement_render` (event responses, completions, the year in review, webhook
payloads), with their statistics (`UserAchievementWithStatsResponse`, `Statistics`), and the
badge a configuration takes (`BadgeSerializer`: achievements, points systems and levels).
Declared once here; the achievements app's own routes use them too (docs/style.md, "One app
from another")."""

import datetime as dt
from collections.abc import Callable
from typing import Any, NamedTuple

from rest_framework import serializers

from apps.achievements.choices import Trigger
from apps.achievements.domain import rarity
from apps.achievements.selectors import AchievementDef, Stats
from apps.core.api.fields import StrictSerializer
from apps.core.api.shapes import Getter, Shape, never, only_when, out
from apps.users.wire import AttributeKeyValue

# The application API's trigger enum: the values of Trigger, named AchievementTriggerEnum as
# Trophy names it (the admin enum, Trigger.choices with its labels, is another component).
ACHIEVEMENT_TRIGGERS = Trigger.values


def _kv(filters: dict[str, str] | None) -> list[dict[str, str]]:
    return [{"key": k, "value": v} for k, v in (filters or {}).items()]


def _when(trigger: str, get: Callable[[AchievementDef], Any]) -> Getter:
    """The getter of a field that only achievements of one trigger have."""
    return only_when("trigger", trigger, lambda d, _: get(d))


class UserAchievementResponse(Shape):
    # Renders an AchievementDef with, as context, the user's completion time (None while not
    # completed). Trigger-specific fields are present only for their trigger.

    id = out(serializers.CharField(), "public_id")
    name = serializers.CharField()
    trigger = serializers.ChoiceField(choices=ACHIEVEMENT_TRIGGERS)
    description = serializers.CharField(required=False, allow_null=True)
    badgeUrl = serializers.CharField(required=False, allow_null=True)
    userAttributes = out(AttributeKeyValue(many=True), lambda d, _: _kv(d.user_filters))
    key = out(
        serializers.CharField(required=False, help_text="api trigger."),
        _when(Trigger.API, lambda d: d.key),
    )
    metricId = out(
        serializers.CharField(required=False, help_text="metric trigger."),
        _when(Trigger.METRIC, lambda d: d.metric_public_id),
    )
    metricName = out(
        serializers.CharField(required=False, help_text="metric trigger."),
        _when(Trigger.METRIC, lambda d: d.metric_name),
    )
    metricValue = out(
        serializers.FloatField(required=False, help_text="metric trigger."),
        _when(Trigger.METRIC, lambda d: d.metric_value),
    )
    eventAttribute = out(
        AttributeKeyValue(required=False, help_text="Deprecated: eventAttributes."), never
    )
    eventAttributes = out(
        AttributeKeyValue(many=True, required=False),
        _when(Trigger.METRIC, lambda d: _kv(d.event_filters)),
    )
    streakLength = out(
        serializers.IntegerField(required=False, help_text="streak trigger."),
        _when(Trigger.STREAK, lambda d: d.streak_length),
    )
    anniversaryYears = out(
        serializers.IntegerField(required=False, help_text="anniversary trigger."),
        _when(Trigger.ANNIVERSARY, lambda d: d.anniversary_years),
    )
    achievementIds = out(
        serializers.ListField(
            child=serializers.CharField(), required=False, help_text="achievement trigger."
        ),
        _when(Trigger.ACHIEVEMENT, lambda d: list(d.prerequisite_ids)),
    )
    achievedAt = out(
        serializers.DateTimeField(
            required=False, allow_null=True, help_text="null while not completed."
        ),
        lambda _, achieved_at: achieved_at,
    )


class Statistics(NamedTuple):
    """The context of the shapes with statistics: the user's completion time (None while not
    completed, or for no user) and the tenant's statistics."""

    achieved_at: dt.datetime | None
    stats: Stats


def _completions(d: AchievementDef, given: Statistics) -> int:
    return given.stats.completions.get(d.pk, 0)


class UserAchievementWithStatsResponse(UserAchievementResponse):
    """An achievement with the user's completion time and how many users completed it."""

    # Renders an AchievementDef with, as context, its Statistics.
    achievedAt = out(
        serializers.DateTimeField(
            allow_null=True,
            help_text="When the user completed it; null when not completed "
            "(includeIncomplete=true).",
        ),
        "context.achieved_at",
    )
    completions = out(
        serializers.IntegerField(help_text="Number of users who completed it."), _completions
    )
    rarity = out(
        serializers.FloatField(
            help_text="Percent of the tenant's users who completed it, to two decimals."
        ),
        lambda d, given: rarity(_completions(d, given), given.stats.users),
    )


def user_achievement_render(
    d: AchievementDef, achieved_at: dt.datetime | None, stats: Stats | None = None
) -> dict[str, Any]:
    """UserAchievementResponse, or UserAchievementWithStatsResponse given the statistics."""
    if stats is None:
        return UserAchievementResponse.render(d, achieved_at)
    return UserAchievementWithStatsResponse.render(d, Statistics(achieved_at, stats))


class BadgeSerializer(StrictSerializer):
    url = serializers.URLField(max_length=2000)


def with_badge_url(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Service arguments take a badge ({"url"} or null on the wire) as its URL, `badge_url`."""
    if "badge" in kwargs:
        badge = kwargs.pop("badge")
        kwargs["badge_url"] = badge["url"] if badge else None
    return kwargs
