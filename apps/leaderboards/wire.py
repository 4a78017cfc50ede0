"""The leaderboard as other apps' bodies and documents show it: the leaderboards map of event
responses (`MetricEventLeaderboardResponse`) and a user's rank in the year in review
(`UserLeaderboardResponse`), both built on `LeaderboardResponse`, which the leaderboard
endpoints return too. Their renders are in apps/leaderboards/services.py; this module documents
them once (docs/style.md, "One app from another")."""

from django.conf import settings
from rest_framework import serializers

from apps.users.wire import AttributeKeyValue

# Enum value sets of the application API (named in SPECTACULAR_SETTINGS.ENUM_NAME_OVERRIDES).
LEADERBOARD_RANK_BY = ["metric", "streak", "points"]
LEADERBOARD_RUN_UNITS = ["day", "month", "year"]


def time_field(what: str) -> serializers.CharField:
    return serializers.CharField(
        allow_null=True, help_text=f"HH:mm: {what} of the daily window; null: none."
    )


class LeaderboardResponse(serializers.Serializer):
    # No docstring: subclasses would inherit it as their component description.
    id = serializers.CharField()
    name = serializers.CharField()
    key = serializers.CharField()
    rankBy = serializers.ChoiceField(choices=LEADERBOARD_RANK_BY)
    breakdownAttribute = serializers.CharField(
        allow_null=True, help_text="Deprecated: breakdownAttributes. Always null."
    )
    breakdownAttributes = serializers.ListField(
        child=serializers.CharField(),
        help_text="Keys of the user attributes the rankings are broken down by ([] for none).",
    )
    metricKey = serializers.CharField(required=False, help_text="rankBy metric.")
    metricName = serializers.CharField(required=False, help_text="rankBy metric.")
    pointsSystemKey = serializers.CharField(required=False, help_text="rankBy points.")
    pointsSystemName = serializers.CharField(required=False, help_text="rankBy points.")
    description = serializers.CharField(allow_null=True, help_text="null when there is none.")
    start = serializers.DateField(help_text="First day (inclusive).")
    end = serializers.DateField(
        allow_null=True,
        help_text="Last day (inclusive) of the current run of a repeating leaderboard, else "
        "of the leaderboard; null: never ends.",
    )
    startTime = time_field("start")
    endTime = time_field("end")
    maxParticipants = serializers.IntegerField(
        help_text=f"Most users ranked per run (1 to {settings.LEADERBOARD_MAX_PARTICIPANTS})."
    )
    runUnit = serializers.ChoiceField(
        choices=LEADERBOARD_RUN_UNITS, allow_null=True, help_text="null: a single run."
    )
    runInterval = serializers.IntegerField(
        allow_null=True, help_text="Run length in runUnits; null: a single run."
    )
    userAttributes = AttributeKeyValue(
        many=True, help_text="Only users with all these attribute values take part."
    )


class UserLeaderboardResponse(LeaderboardResponse):
    rank = serializers.IntegerField(allow_null=True, help_text="null when not on the board.")
    value = serializers.IntegerField(allow_null=True, help_text="null when not on the board.")


class MetricEventLeaderboardResponse(LeaderboardResponse):
    """A leaderboard the event affected (no status); `end` is the end of the run the event
    counted in."""

    rank = serializers.IntegerField(
        allow_null=True, help_text="The user's rank now; null: not on the board (it is full)."
    )
    previousRank = serializers.IntegerField(
        allow_null=True, help_text="The user's rank before the event; null: was not on it."
    )
    threshold = serializers.IntegerField(help_text="Minimum value currently needed to enter.")
    breakdownAttributeValue = serializers.CharField(
        required=False, allow_null=True, help_text="Deprecated: breakdownAttributeValues."
    )
    breakdownAttributeValues = AttributeKeyValue(
        many=True, help_text="The user's values of the breakdown attributes ([] for none)."
    )
