"""Input and response shapes of undoing events (POST /admin/ext/v1/events/undo)."""

from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField
from apps.core.api.shapes import Shape, renders
from apps.core.openapi import AdminIssue
from apps.metrics.models import MetricEvent
from apps.pipeline.intake import MAX_IDEMPOTENCY_KEY
from apps.pipeline.undo import UserUndo
from apps.points.ledger import SystemChange

MAX_UNDO_ITEMS = 100  # event ids or idempotency keys in one request


class UndoKeySerializer(StrictSerializer):
    userId = StringField(max_length=255, min_length=1)
    idempotencyKey = StringField(max_length=MAX_IDEMPOTENCY_KEY, min_length=1)
    metric = StringField(
        max_length=100,
        required=False,
        help_text="The metric's key; without it, the user's events of every metric that used "
        "this idempotency key.",
    )


class UndoRequestSerializer(StrictSerializer):
    eventIds = serializers.ListField(
        child=serializers.UUIDField(),
        required=False,
        min_length=1,
        max_length=MAX_UNDO_ITEMS,
        help_text="Events by id (the `eventId` an event's response gave).",
    )
    idempotencyKeys = serializers.ListField(
        child=UndoKeySerializer(),
        required=False,
        min_length=1,
        max_length=MAX_UNDO_ITEMS,
        help_text="Events by the idempotency key they were sent with.",
    )
    userId = StringField(
        max_length=255,
        min_length=1,
        required=False,
        help_text="All of this user's events from `since` (inclusive) to `until` (exclusive).",
    )
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    metric = StringField(
        max_length=100, required=False, help_text="With userId: only this metric's events."
    )
    reason = StringField(min_length=1, max_length=500, help_text="Why: recorded with the undo.")
    revokeAchievements = serializers.BooleanField(
        required=False,
        default=False,
        help_text="true: metric achievements the remaining events no longer reach (and the "
        "composites built on them) lose their completion and the points it paid; false: they "
        "are kept.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [k for k in ("eventIds", "idempotencyKeys", "userId") if k in attrs]
        if len(given) != 1:
            raise serializers.ValidationError(
                "name the events one way: eventIds, idempotencyKeys, or userId with since and until"
            )
        ranged = ("since" in attrs, "until" in attrs, "metric" in attrs)
        if given[0] != "userId" and any(ranged):
            raise serializers.ValidationError("since, until and metric go with userId only")
        if given[0] == "userId":
            if "since" not in attrs or "until" not in attrs:
                raise serializers.ValidationError("userId needs since and until")
            if attrs["since"] >= attrs["until"]:
                raise serializers.ValidationError("since must be before until")
        return attrs


class UndoneEventShape(Shape):
    eventId = serializers.UUIDField()
    userId = serializers.CharField()
    metric = serializers.CharField(help_text="The metric's key.")
    value = serializers.FloatField()
    occurredAt = serializers.DateTimeField()


class UndoPointsShape(Shape):
    system = serializers.CharField(help_text="The points system's key.")
    change = serializers.IntegerField(help_text="What the undo's awards added (negative: taken).")
    total = serializers.IntegerField()
    level = serializers.CharField(allow_null=True, help_text="The level's key after the undo.")


class UserUndoShape(Shape):
    userId = serializers.CharField()
    undoId = serializers.UUIDField(help_text="Shared by the events undone together.")
    events = serializers.IntegerField(help_text="How many events of the user were undone.")
    metricTotals = serializers.DictField(
        child=serializers.FloatField(), help_text="The user's totals after, by metric key."
    )
    points = UndoPointsShape(many=True)
    revokedAchievements = serializers.ListField(
        child=serializers.UUIDField(), help_text="Ids of the achievements revoked."
    )
    streak = serializers.IntegerField(
        allow_null=True,
        help_text="The streak's length after the undo, when it changed it (else null).",
    )


class UndoResult(Shape):
    undone = UndoneEventShape(many=True)
    users = UserUndoShape(many=True)
    issues = AdminIssue(many=True)


@renders(UndoneEventShape)
def undone_event_render(event: MetricEvent, metric_keys: dict[int, str]) -> dict[str, Any]:
    return {
        "eventId": str(event.public_id),
        "userId": event.user.external_id,
        "metric": metric_keys.get(event.metric_id, ""),
        "value": float(event.value),
        "occurredAt": event.occurred_at.isoformat().replace("+00:00", "Z"),
    }


@renders(UndoPointsShape)
def undo_points_render(change: SystemChange) -> dict[str, Any]:
    levels = {level.pk: level.key for level in change.system.levels}
    return {
        "system": change.system.key,
        "change": change.added,
        "total": change.total,
        "level": levels.get(change.level_pk) if change.level_pk else None,
    }


@renders(UserUndoShape)
def user_undo_render(
    undo: UserUndo, metric_keys: dict[int, str], achievement_ids: dict[int, str]
) -> dict[str, Any]:
    return {
        "userId": undo.user.external_id,
        "undoId": str(undo.undo_id),
        "events": len(undo.events),
        "metricTotals": {metric_keys.get(pk, ""): float(t) for pk, t in undo.totals.items()},
        "points": [undo_points_render(c) for c in undo.points],
        "revokedAchievements": [achievement_ids[pk] for pk in undo.revoked],
        "streak": undo.streak[1] if undo.streak is not None else None,
    }


@renders(UndoResult)
def undo_result_render(
    events: list[MetricEvent],
    undos: list[UserUndo],
    issues: list[dict[str, Any]],
    metric_keys: dict[int, str],
    achievement_ids: dict[int, str],
) -> dict[str, Any]:
    return {
        "undone": [undone_event_render(e, metric_keys) for e in events],
        "users": [user_undo_render(u, metric_keys, achievement_ids) for u in undos],
        "issues": issues,
    }
