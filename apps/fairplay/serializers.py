"""Input and response shapes of fair play's admin routes (/admin/ext/v1/users/{userId}/
exclusion, /admin/ext/v1/anomaly-rules), each `Shape` with the function that renders it below
it."""

from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField, key_field
from apps.core.api.shapes import Shape, renders
from apps.fairplay.choices import RuleKind, RuleStatus
from apps.fairplay.domain import MAX_THRESHOLD, MAX_WINDOW_MINUTES
from apps.fairplay.models import AnomalyRule
from apps.fairplay.services import MAX_REASON
from apps.users.models import EndUser


class ExclusionSerializer(StrictSerializer):
    reason = StringField(
        max_length=MAX_REASON,
        help_text=f"Why the user is excluded (1 to {MAX_REASON} characters), kept on the "
        "exclusion with who made it.",
    )


class ExclusionResponse(Shape):
    # A user's exclusion from the rankings.
    userId = serializers.CharField()
    excluded = serializers.BooleanField(help_text="Whether the user is excluded now.")
    excludedAt = serializers.DateTimeField(
        allow_null=True, help_text="When the exclusion was made (null: not excluded)."
    )
    reason = serializers.CharField(allow_null=True, help_text="Why (null: not excluded).")
    excludedBy = serializers.CharField(
        allow_null=True,
        help_text="Who made it: `api_key:<key name>` or `staff:<username>` (null: not excluded).",
    )
    changed = serializers.BooleanField(
        help_text="Whether this request changed anything (false: the user already was, or was "
        "not, excluded)."
    )


@renders(ExclusionResponse)
def exclusion_response_render(user: EndUser, changed: bool) -> dict[str, Any]:
    excluded = user.excluded_at is not None
    return {
        "userId": user.external_id,
        "excluded": excluded,
        "excludedAt": user.excluded_at,
        "reason": user.excluded_reason if excluded else None,
        "excludedBy": user.excluded_by if excluded else None,
        "changed": changed,
    }


# --- anomaly rules ------------------------------------------------------------------------------


class _RuleFields(StrictSerializer):
    metricId = serializers.UUIDField(
        required=False, allow_null=True, help_text="The metric a metric rule adds up."
    )
    pointsSystemId = serializers.UUIDField(
        required=False, allow_null=True, help_text="The points system a points rule adds up."
    )
    threshold = serializers.DecimalField(
        max_digits=24,
        decimal_places=6,
        min_value=0,
        max_value=MAX_THRESHOLD,
        coerce_to_string=False,
        required=False,
        help_text="The user is flagged once their total in a window is more than this (equal "
        "is not more): points, metric value, or events.",
    )
    windowMinutes = serializers.IntegerField(
        min_value=1,
        max_value=MAX_WINDOW_MINUTES,
        required=False,
        help_text="The window's length in minutes; windows follow each other from midnight UTC.",
    )
    status = serializers.ChoiceField(choices=RuleStatus.choices, required=False)

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        for name in ("metricId", "pointsSystemId"):
            if value.get(name) is not None:
                value[name] = str(value[name])
        return value


class AnomalyRuleCreateSerializer(_RuleFields):
    name = StringField(max_length=255)
    key = key_field()
    kind = serializers.ChoiceField(
        choices=RuleKind.choices,
        help_text="points: points of pointsSystemId; metric: values of metricId; events: events "
        "of any metric, counted one each.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["threshold"].required = True
        self.fields["windowMinutes"].required = True


class AnomalyRuleUpdateSerializer(_RuleFields):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    key = key_field()
    kind = serializers.ChoiceField(choices=RuleKind.choices, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["key"].required = False


class AdminAnomalyRule(Shape):
    # An AnomalyRule (with its metric and points system loaded).
    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    kind = serializers.ChoiceField(choices=RuleKind.choices)
    metricId = serializers.UUIDField(allow_null=True, help_text="kind metric; null otherwise.")
    pointsSystemId = serializers.UUIDField(
        allow_null=True, help_text="kind points; null otherwise."
    )
    threshold = serializers.FloatField()
    windowMinutes = serializers.IntegerField()
    status = serializers.ChoiceField(choices=RuleStatus.choices)
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


@renders(AdminAnomalyRule)
def admin_anomaly_rule_render(rule: AnomalyRule) -> dict[str, Any]:
    return {
        "id": str(rule.public_id),
        "name": rule.name,
        "key": rule.key,
        "kind": rule.kind,
        "metricId": str(rule.metric.public_id) if rule.metric else None,
        "pointsSystemId": str(rule.points_system.public_id) if rule.points_system else None,
        "threshold": rule.threshold,
        "windowMinutes": rule.window_minutes,
        "status": rule.status,
        "created": rule.created,
        "updated": rule.updated,
    }
