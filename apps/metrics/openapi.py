"""OpenAPI documentation of metrics and event summaries (documentation only). The metric key and
the event-summary parameters, which points summaries share, are in apps/metrics/wire.py; a
user's metrics are read (with their achievements) through apps.achievements."""

from rest_framework import serializers

from apps.metrics.choices import UnitType


class CreatedMetric(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    unitType = serializers.ChoiceField(choices=UnitType.choices)
    units = serializers.CharField(help_text='"" when none; a currency code for currency.')
