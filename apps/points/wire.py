"""The points shapes other apps' bodies and documents show: the points map of event responses
and achievement completions (`MetricEventPointsResponse`), with the levels, triggers, boosts
and awards it carries, which the points endpoints return too. Their renders are in
apps/points/ledger.py; this module documents them once (docs/style.md, "One app from
another")."""

from rest_framework import serializers

from apps.users.wire import AttributeKeyValue

# Enum value sets of the application API (named in SPECTACULAR_SETTINGS.ENUM_NAME_OVERRIDES).
# The application API spells time units hour/day, the admin API hours/days (reference §6.3).
POINTS_TRIGGER_TYPES = ["metric", "achievement", "streak", "time", "user_creation"]
POINTS_TRIGGER_STATUSES = ["active", "inactive", "archived"]
POINTS_TRIGGER_TIME_UNITS = ["hour", "day"]
POINTS_BOOST_STATUSES = ["active", "scheduled", "finished"]
POINTS_BOOST_ROUNDINGS = ["down", "up", "nearest"]


def description_field() -> serializers.CharField:
    return serializers.CharField(allow_null=True, help_text="null when the system has none.")


def badge_url_field() -> serializers.CharField:
    return serializers.CharField(allow_null=True)


def max_points_field() -> serializers.IntegerField:
    return serializers.IntegerField(
        allow_null=True, help_text="Most points a user can hold; null: no cap."
    )


class PointsLevel(serializers.Serializer):
    id = serializers.CharField()
    key = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True, help_text='"" when none.')
    badgeUrl = badge_url_field()
    points = serializers.IntegerField(help_text="Total from which a user is at this level.")


class PointsTrigger(serializers.Serializer):
    id = serializers.CharField()
    type = serializers.ChoiceField(choices=POINTS_TRIGGER_TYPES)
    points = serializers.IntegerField(help_text="Points each time it fires; negative deducts.")
    status = serializers.ChoiceField(choices=POINTS_TRIGGER_STATUSES)
    achievementId = serializers.CharField(required=False, help_text="achievement trigger.")
    metricId = serializers.CharField(required=False, help_text="metric trigger.")
    metricName = serializers.CharField(required=False, help_text="metric trigger.")
    metricThreshold = serializers.IntegerField(
        required=False, help_text="metric trigger: fires at each multiple of this total."
    )
    streakLengthThreshold = serializers.IntegerField(
        required=False, help_text="streak trigger: fires at each multiple of this length."
    )
    achievementName = serializers.CharField(required=False, help_text="achievement trigger.")
    timeUnit = serializers.ChoiceField(
        choices=POINTS_TRIGGER_TIME_UNITS, required=False, help_text="time trigger."
    )
    timeInterval = serializers.IntegerField(required=False, help_text="time trigger.")
    userAttributes = AttributeKeyValue(
        many=True, help_text="Only users with all these attribute values earn it."
    )
    eventAttribute = AttributeKeyValue(required=False, help_text="Deprecated: eventAttributes.")
    eventAttributes = AttributeKeyValue(
        many=True, required=False, help_text="metric trigger: events counted ([] for all)."
    )
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


class PointsBoost(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=POINTS_BOOST_STATUSES)
    start = serializers.DateField(help_text="First day (inclusive).")
    end = serializers.DateField(allow_null=True, help_text="Last day (inclusive); null: open.")
    multiplier = serializers.FloatField()
    rounding = serializers.ChoiceField(
        choices=POINTS_BOOST_ROUNDINGS, help_text="How a fractional boosted award is rounded."
    )


class PointsAward(serializers.Serializer):
    id = serializers.CharField()
    awarded = serializers.IntegerField(help_text="Points added; negative for a deduction.")
    date = serializers.DateTimeField()
    total = serializers.IntegerField(help_text="The user's total after the award.")
    trigger = PointsTrigger(help_text="The trigger as it was when it fired.")
    boosts = PointsBoost(many=True, help_text="The boosts applied to this award.")


class PointsResponseBase(serializers.Serializer):
    # No docstring: subclasses would inherit it as their component description.
    id = serializers.CharField()
    key = serializers.CharField()
    name = serializers.CharField()
    description = description_field()
    badgeUrl = badge_url_field()
    maxPoints = max_points_field()


class MetricEventPointsResponse(PointsResponseBase):
    """A points system changed by an event or an achievement completion."""

    total = serializers.IntegerField(help_text="The user's new total.")
    level = PointsLevel(
        required=False,
        allow_null=True,
        help_text="Present only when the user's level changed: the new level, or null when the "
        "user fell below every level.",
    )
    added = serializers.IntegerField(help_text="Net points added; negative for deductions.")
    awards = PointsAward(many=True, help_text="The awards made.")
