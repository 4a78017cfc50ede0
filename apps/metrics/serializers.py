"""Wire shapes of metrics and metric reads."""

from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, key_field
from apps.metrics.choices import UnitType
from apps.metrics.models import Metric


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
