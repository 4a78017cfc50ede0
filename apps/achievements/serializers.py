"""Wire shapes of achievements: admin input, application and admin output."""

import datetime as dt
from collections.abc import Mapping
from typing import Any

from rest_framework import serializers
from rest_framework.fields import Field

from apps.achievements.choices import Status, Trigger
from apps.achievements.domain import rarity
from apps.achievements.models import Achievement
from apps.achievements.selectors import AchievementDef, Stats, achievement_settings
from apps.core.api.fields import (
    MAX_ATTRIBUTE_VALUE,
    StrictSerializer,
    StringField,
    camel_case,
    key_field,
)
from apps.users.serializers import UpsertedUserSerializer


class _AttributeRefList(serializers.ListSerializer):
    """A null list means none; DRF hands `allow_null` to the items too, and [null] reached the
    services as None (a 500). Items are never null."""

    def run_child_validation(self, data: Any) -> Any:
        if data is None:
            raise serializers.ValidationError(Field.default_error_messages["null"], code="null")
        return super().run_child_validation(data)


class AttributeRefSerializer(StrictSerializer):
    attributeId = serializers.UUIDField(format="hex_verbose")
    attributeValue = StringField(max_length=MAX_ATTRIBUTE_VALUE)

    class Meta:
        list_serializer_class = _AttributeRefList

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        return {"attributeId": str(value["attributeId"]), "attributeValue": value["attributeValue"]}


class BadgeSerializer(StrictSerializer):
    url = serializers.URLField(max_length=2000)


def with_badge_url(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Service arguments take a badge ({"url"} or null on the wire) as its URL, `badge_url`."""
    if "badge" in kwargs:
        badge = kwargs.pop("badge")
        kwargs["badge_url"] = badge["url"] if badge else None
    return kwargs


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


class AchievementCompleteSerializer(StrictSerializer):
    user = UpsertedUserSerializer()


class AchievementCreateSerializer(_AchievementFields):
    name = StringField(max_length=255)
    trigger = serializers.ChoiceField(choices=Trigger.choices)


class AchievementUpdateSerializer(_AchievementFields):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    trigger = serializers.ChoiceField(choices=Trigger.choices, required=False)


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
