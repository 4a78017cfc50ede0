"""Wire shapes of metrics and metric reads."""

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, key_field
from apps.metrics.choices import UnitType
from apps.metrics.domain import SummaryBucket
from apps.metrics.models import Metric
from apps.metrics.selectors import MetricDef


class MetricCreateSerializer(StrictSerializer):
    name = serializers.CharField(max_length=255)
    key = key_field()
    unitType = serializers.ChoiceField(choices=UnitType.choices, default=UnitType.NUMBER)
    units = serializers.CharField(max_length=32, default="", allow_blank=True)


class MetricUpdateSerializer(StrictSerializer):
    id = serializers.UUIDField()
    name = serializers.CharField(max_length=255, required=False)
    unitType = serializers.ChoiceField(choices=UnitType.choices, required=False)
    units = serializers.CharField(max_length=32, required=False, allow_blank=True)


def metric_render(metric: Metric) -> dict[str, Any]:
    return {
        "id": str(metric.public_id),
        "name": metric.name,
        "key": metric.key,
        "unitType": metric.unit_type,
        "units": metric.units,
    }


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


def summary_render(buckets: list[SummaryBucket]) -> list[dict[str, Any]]:
    return [{"date": b.date.isoformat(), "total": b.total, "change": b.change} for b in buckets]
