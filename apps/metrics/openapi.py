"""OpenAPI documentation of metrics and event summaries (documentation only). The metric key and
the event-summary parameters, which points summaries share, are in apps/metrics/wire.py; a
user's metrics are read (with their achievements) through apps.achievements."""

from rest_framework import serializers

from apps.metrics.choices import UnitType


class UsersMetricEventSummaryResponseItem(serializers.Serializer):
    date = serializers.DateField(help_text="First day of the bucket.")
    total = serializers.FloatField(help_text="The user's total at the end of the bucket.")
    change = serializers.FloatField(help_text="The change within the bucket.")


class CreatedMetric(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    unitType = serializers.ChoiceField(choices=UnitType.choices)
    units = serializers.CharField(help_text='"" when none; a currency code for currency.')
