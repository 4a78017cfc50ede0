"""Input shapes of metric events (single and batch) and of achievement completion."""

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import FieldsBuiltOnce, StrictSerializer, StringField
from apps.metrics.domain import value_parse
from apps.metrics.errors import MetricValueInvalidError
from apps.pipeline.intake import MAX_IDEMPOTENCY_KEY
from apps.users.wire import StringMapField, UpsertedUserSerializer


class MetricValueField(serializers.Field):
    def to_internal_value(self, data: Any) -> Decimal:
        try:
            return value_parse(data)
        except MetricValueInvalidError as exc:
            raise serializers.ValidationError(exc.message.removeprefix("value ")) from None


class MetricEventSerializer(FieldsBuiltOnce, StrictSerializer):
    user = UpsertedUserSerializer()
    value = MetricValueField()
    attributes = StringMapField(allow_null_values=False, required=False, default=dict)


class BatchEventUserSerializer(UpsertedUserSerializer):
    """BatchMetricEventUser: an upserted user without signUpDate."""

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields.pop("signUpDate")
        return fields


class BatchEventSerializer(StrictSerializer):
    key = StringField(max_length=100)
    user = BatchEventUserSerializer()
    value = MetricValueField()
    attributes = StringMapField(allow_null_values=False, required=False, default=dict)
    # The SDK sends null for an idempotency key passed as None: same as absent.
    idempotencyKey = StringField(
        max_length=MAX_IDEMPOTENCY_KEY, required=False, allow_null=True, min_length=1
    )


class AchievementCompleteSerializer(FieldsBuiltOnce, StrictSerializer):
    user = UpsertedUserSerializer()
