"""Wire shapes of the metric definitions of the admin API: input serializers and the response
shape, with the function that renders it (apps/core/api/shapes.py)."""

from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, key_field
from apps.core.api.shapes import Shape, renders
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


class CreatedMetric(Shape):
    # A metric definition (admin API), rendered from the Metric.

    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    unitType = serializers.ChoiceField(choices=UnitType.choices)
    units = serializers.CharField(help_text='"" when none; a currency code for currency.')


@renders(CreatedMetric)
def created_metric_render(metric: Metric) -> dict[str, Any]:
    return {
        "id": str(metric.public_id),
        "name": metric.name,
        "key": metric.key,
        "unitType": metric.unit_type,
        "units": metric.units,
    }
