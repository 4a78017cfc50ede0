"""Input shapes of the leagues admin API (/admin/ext/v1/leagues), and the response shapes of the
leagues extension routes (/ext/v1/...), each `Shape` with the function that renders it below it
(apps/core/api/shapes.py). The admin inputs agree with `LeagueSettings`
(tests/core/test_declarations.py); the application shapes follow the style of Trophy's
leaderboards (apps/leaderboards/wire.py)."""

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField, key_field
from apps.core.api.shapes import Shape, renders
from apps.leagues import domain
from apps.leagues.choices import Absent, Idle, ScoreBy, Status, Weekday, Zone, ZoneUnit
from apps.leagues.models import League, LeagueCohort, LeagueEntry
from apps.leagues.selectors import LeagueDef, Placed, UserWeek
from apps.leagues.wire import LeagueReward, LeagueTierRef, reward_render, tier_render
from apps.points.domain import MAX_POINTS
from apps.users.wire import AttributeKeyValue, AttributeRef, AttributeRefSerializer

# "HH:MM" from 00:00 to 24:00 (domain.minutes_parse), stated where the document can show it.
WEEK_ENDS_AT_PATTERN = r"^(?:(?:[01]\d|2[0-3]):[0-5]\d|24:00)$"
# What the application API shows of a league's status: an archived league is not shown.
LEAGUE_STATUSES = [Status.ACTIVE.value, Status.INACTIVE.value]
MAX_ZONE = domain.MAX_ZONE  # promotion and demotion sizes: places or percentages


# --- admin API input --------------------------------------------------------------------------


class LeagueTierSerializer(StrictSerializer):
    name = StringField(min_length=1, max_length=domain.TIER_NAME_LENGTH)
    promote = serializers.IntegerField(
        min_value=0,
        max_value=MAX_ZONE,
        required=False,
        help_text="Places (or percent of the members) promoted at the week's end; default 0. "
        "Must be 0 in the top tier.",
    )
    demote = serializers.IntegerField(
        min_value=0,
        max_value=MAX_ZONE,
        required=False,
        help_text="Places (or percent of the members) demoted at the week's end; default 0. "
        "Must be 0 in the lowest tier.",
    )


class LeagueRewardSerializer(StrictSerializer):
    fromPlace = serializers.IntegerField(min_value=1, max_value=domain.MAX_COHORT)
    toPlace = serializers.IntegerField(
        min_value=1,
        max_value=domain.MAX_COHORT,
        required=False,
        help_text="Last place rewarded (inclusive); default fromPlace.",
    )
    tier = StringField(
        max_length=domain.TIER_NAME_LENGTH,
        required=False,
        allow_null=True,
        help_text="The name of the one tier whose cohorts this reward is for; null: every tier.",
    )
    points = serializers.IntegerField(
        min_value=0,
        max_value=MAX_POINTS,
        required=False,
        help_text="Points paid into pointsSystemId.",
    )
    pointsSystemId = serializers.UUIDField(required=False, allow_null=True)
    achievementId = serializers.UUIDField(
        required=False, allow_null=True, help_text="An api achievement the placement completes."
    )

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        kwargs = super().service_kwargs(data)
        for name in ("points_system_id", "achievement_id"):
            if kwargs.get(name) is not None:
                kwargs[name] = str(kwargs[name])
        return kwargs


class _LeagueFields(StrictSerializer):
    description = StringField(max_length=2000, required=False, allow_null=True, allow_blank=True)
    status = serializers.ChoiceField(choices=Status.choices, required=False)
    metricId = serializers.UUIDField(
        required=False, allow_null=True, help_text="The metric of a scoreBy metric league."
    )
    pointsSystemId = serializers.UUIDField(
        required=False, allow_null=True, help_text="The points system of a scoreBy points league."
    )
    weekEndsOn = serializers.ChoiceField(
        choices=Weekday.choices,
        required=False,
        help_text="The weekday a week ends on, in the tenant's reporting time zone (default "
        "sunday).",
    )
    weekEndsAt = serializers.RegexField(
        WEEK_ENDS_AT_PATTERN,
        max_length=5,
        required=False,
        trim_whitespace=False,
        error_messages={"invalid": "must be HH:MM, from 00:00 to 24:00"},
        help_text="HH:MM (00:00 to 24:00) on weekEndsOn, in the tenant's reporting time zone "
        "(default 24:00): one moment for every user, whatever their own zone.",
    )
    cohortSize = serializers.IntegerField(
        min_value=domain.MIN_COHORT,
        max_value=domain.MAX_COHORT,
        required=False,
        help_text=f"Users per cohort (default {domain.DEFAULT_COHORT}).",
    )
    tiers = serializers.ListField(
        child=LeagueTierSerializer(),
        required=False,
        max_length=domain.MAX_TIERS,
        help_text=f"Lowest first, 1 to {domain.MAX_TIERS}, names unique. Left out or []: ten "
        "tiers, Bronze to Diamond, for a new league; unchanged for an update. An active league "
        "keeps its number of tiers.",
    )
    zoneUnit = serializers.ChoiceField(choices=ZoneUnit.choices, required=False)
    idle = serializers.ChoiceField(choices=Idle.choices, required=False)
    absent = serializers.ChoiceField(choices=Absent.choices, required=False)
    rewards = serializers.ListField(
        child=LeagueRewardSerializer(),
        required=False,
        max_length=domain.MAX_REWARDS,
        help_text="Per final placement: points into a points system and/or an api "
        "achievement's completion, paid once when the week ends.",
    )
    userAttributes = AttributeRefSerializer(
        many=True,
        required=False,
        allow_null=True,
        help_text="Only users with all these attribute values take part ([] or null: everyone).",
    )

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        for name in ("metricId", "pointsSystemId"):
            if value.get(name) is not None:
                value[name] = str(value[name])
        return value

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        """The declaration's arguments: tiers and rewards in the snake_case the configuration
        stores (from_place, points_system_id, ...)."""
        kwargs = super().service_kwargs(data)
        if "tiers" in kwargs:
            kwargs["tiers"] = [dict(tier) for tier in kwargs["tiers"]]
        if "rewards" in kwargs:
            kwargs["rewards"] = [
                LeagueRewardSerializer.service_kwargs(reward) for reward in kwargs["rewards"]
            ]
        return kwargs


class LeagueCreateSerializer(_LeagueFields):
    name = StringField(max_length=255)
    key = key_field()
    scoreBy = serializers.ChoiceField(choices=ScoreBy.choices)


class LeagueUpdateSerializer(_LeagueFields):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    key = key_field()
    scoreBy = serializers.ChoiceField(choices=ScoreBy.choices, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["key"].required = False


# --- output shapes shared by both documents ---------------------------------------------------


class LeagueTier(Shape):
    # One tier of League.tiers.
    name = serializers.CharField()
    promote = serializers.IntegerField(
        help_text="Promoted at the week's end: places, or percent of the members (zoneUnit)."
    )
    demote = serializers.IntegerField(
        help_text="Demoted at the week's end: places, or percent of the members (zoneUnit)."
    )


@renders(LeagueTier)
def league_tier_render(tier: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": tier["name"], "promote": tier["promote"], "demote": tier["demote"]}


# --- the admin API's league -------------------------------------------------------------------


class AdminLeague(Shape):
    # A League row (with its metric and points system loaded).
    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=Status.choices)
    scoreBy = serializers.ChoiceField(choices=ScoreBy.choices)
    metricId = serializers.UUIDField(allow_null=True, help_text="scoreBy metric; null otherwise.")
    pointsSystemId = serializers.UUIDField(
        allow_null=True, help_text="scoreBy points; null otherwise."
    )
    weekEndsOn = serializers.ChoiceField(choices=Weekday.choices)
    weekEndsAt = serializers.CharField(help_text="HH:MM, 00:00 to 24:00.")
    cohortSize = serializers.IntegerField()
    tiers = LeagueTier(many=True, help_text="Lowest first.")
    zoneUnit = serializers.ChoiceField(choices=ZoneUnit.choices)
    idle = serializers.ChoiceField(choices=Idle.choices)
    absent = serializers.ChoiceField(choices=Absent.choices)
    rewards = LeagueReward(many=True)
    userAttributes = AttributeRef(many=True, help_text="Participation filter ([] for everyone).")
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


@renders(AdminLeague)
def admin_league_render(league: League) -> dict[str, Any]:
    return {
        "id": str(league.public_id),
        "name": league.name,
        "key": league.key,
        "description": league.description,
        "status": league.status,
        "scoreBy": league.score_by,
        "metricId": str(league.metric.public_id) if league.metric else None,
        "pointsSystemId": str(league.points_system.public_id) if league.points_system else None,
        "weekEndsOn": league.week_ends_on,
        "weekEndsAt": domain.minutes_render(league.week_ends_at),
        "cohortSize": league.cohort_size,
        "tiers": [league_tier_render(tier) for tier in league.tiers],
        "zoneUnit": league.zone_unit,
        "idle": league.idle,
        "absent": league.absent,
        "rewards": [reward_render(reward) for reward in league.rewards],
        "userAttributes": list(league.user_attributes),
        "created": league.created,
        "updated": league.updated,
    }


# --- the application API ----------------------------------------------------------------------


class LeagueResponse(Shape):
    # A LeagueDef, what it scores ((key, name) or None) and its current week.
    id = serializers.UUIDField()
    key = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField(allow_null=True, help_text="null when there is none.")
    status = serializers.ChoiceField(
        choices=LEAGUE_STATUSES, help_text="Inactive: nothing counts until it is activated."
    )
    scoreBy = serializers.ChoiceField(choices=ScoreBy.choices)
    metricKey = serializers.CharField(required=False, help_text="scoreBy metric.")
    metricName = serializers.CharField(required=False, help_text="scoreBy metric.")
    pointsSystemKey = serializers.CharField(required=False, help_text="scoreBy points.")
    pointsSystemName = serializers.CharField(required=False, help_text="scoreBy points.")
    weekEndsOn = serializers.ChoiceField(choices=Weekday.choices)
    weekEndsAt = serializers.CharField(
        help_text="HH:MM on weekEndsOn, in the tenant's reporting time zone."
    )
    cohortSize = serializers.IntegerField(help_text="Most users per cohort.")
    tiers = LeagueTier(many=True, help_text="Lowest first.")
    zoneUnit = serializers.ChoiceField(choices=ZoneUnit.choices)
    idle = serializers.ChoiceField(
        choices=Idle.choices, help_text="What happens at the week's end to who scored nothing."
    )
    absent = serializers.ChoiceField(
        choices=Absent.choices, help_text="The tier of a user who comes back after skipping weeks."
    )
    userAttributes = AttributeKeyValue(
        many=True, help_text="Only users with all these attribute values take part."
    )
    weekStart = serializers.DateTimeField(help_text="The current week's start (inclusive).")
    weekEnd = serializers.DateTimeField(help_text="The current week's end (exclusive).")


@renders(LeagueResponse)
def league_response_render(
    league: LeagueDef, scored: tuple[str, str] | None, week: domain.Week
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": league.public_id,
        "key": league.key,
        "name": league.name,
        "description": league.description,
        "status": league.status,
        "scoreBy": league.score_by,
    }
    if scored is not None and league.score_by == ScoreBy.METRIC:
        body["metricKey"] = scored[0]
        body["metricName"] = scored[1]
    if scored is not None and league.score_by == ScoreBy.POINTS:
        body["pointsSystemKey"] = scored[0]
        body["pointsSystemName"] = scored[1]
    body["weekEndsOn"] = league.week_ends_on
    body["weekEndsAt"] = domain.minutes_render(league.week_ends_at)
    body["cohortSize"] = league.cohort_size
    body["tiers"] = [league_tier_render(tier) for tier in league.tiers]
    body["zoneUnit"] = league.zone_unit
    body["idle"] = league.idle
    body["absent"] = league.absent
    body["userAttributes"] = [
        {"key": k, "value": v} for k, v in (league.user_filters or {}).items()
    ]
    body["weekStart"] = week.start
    body["weekEnd"] = week.end
    return body


class LeagueStanding(Shape):
    # A Placed member of a cohort.
    rank = serializers.IntegerField(
        help_text="1-based: the placement, final once the cohort is finished."
    )
    userId = serializers.CharField()
    userName = serializers.CharField(allow_null=True)
    score = serializers.FloatField(
        help_text="What the user gained in the week; ties go to who reached it first."
    )
    zone = serializers.ChoiceField(
        choices=Zone.choices,
        help_text="Where the placement moves the user at the week's end (live until the cohort "
        "is finished). A user who scored nothing never promotes.",
    )


@renders(LeagueStanding)
def league_standing_render(placed: Placed) -> dict[str, Any]:
    entry = placed.entry
    return {
        "rank": placed.rank,
        "userId": entry.user.external_id,
        "userName": entry.user.name,
        "score": entry.score,
        "zone": placed.zone,
    }


class LeagueCohortResponse(Shape):
    # A LeagueCohort of a LeagueDef, with its members placed.
    id = serializers.UUIDField()
    tier = LeagueTierRef()
    weekStart = serializers.DateTimeField(help_text="The week's start (inclusive).")
    weekEnd = serializers.DateTimeField(help_text="The week's end (exclusive).")
    members = serializers.IntegerField()
    capacity = serializers.IntegerField(help_text="The most members it takes.")
    finished = serializers.BooleanField(
        help_text="The week has ended and its results are final (ranks, zones)."
    )
    standings = LeagueStanding(many=True, help_text="Best first.")


@renders(LeagueCohortResponse)
def league_cohort_response_render(
    league: LeagueDef, cohort: LeagueCohort, standings: Sequence[Placed]
) -> dict[str, Any]:
    return {
        "id": str(cohort.public_id),
        "tier": tier_render(league, cohort.tier),
        "weekStart": cohort.week_start,
        "weekEnd": cohort.week_end,
        "members": cohort.members,
        "capacity": cohort.capacity,
        "finished": cohort.finished_at is not None,
        "standings": [league_standing_render(p) for p in standings],
    }


class UserLeagueResponse(Shape):
    # A LeagueDef with a UserWeek, at `now`.
    id = serializers.UUIDField()
    key = serializers.CharField()
    name = serializers.CharField()
    weekStart = serializers.DateTimeField(help_text="The current week's start (inclusive).")
    weekEnd = serializers.DateTimeField(help_text="The current week's end (exclusive).")
    timeLeft = serializers.IntegerField(help_text="Seconds until the week ends.")
    tier = LeagueTierRef(
        help_text="The user's tier this week; before their first qualifying event of the week, "
        "the tier it would join them in."
    )
    rank = serializers.IntegerField(allow_null=True, help_text="null: not in a cohort this week.")
    score = serializers.FloatField(allow_null=True, help_text="null: not in a cohort this week.")
    zone = serializers.ChoiceField(
        choices=Zone.choices, allow_null=True, help_text="null: not in a cohort this week."
    )
    cohort = LeagueCohortResponse(
        allow_null=True,
        help_text="The user's cohort this week; null until their first qualifying event of "
        "the week joins them.",
    )


@renders(UserLeagueResponse)
def user_league_response_render(
    league: LeagueDef, mine: UserWeek, now: dt.datetime
) -> dict[str, Any]:
    own = mine.own
    return {
        "id": league.public_id,
        "key": league.key,
        "name": league.name,
        "weekStart": mine.week.start,
        "weekEnd": mine.week.end,
        "timeLeft": max(0, int((mine.week.end - now).total_seconds())),
        "tier": tier_render(league, mine.tier),
        "rank": own.rank if own else None,
        "score": own.entry.score if own else None,
        "zone": own.zone if own else None,
        "cohort": (
            league_cohort_response_render(league, mine.cohort, mine.standings)
            if mine.cohort is not None
            else None
        ),
    }


class UserLeagueNeighboursResponse(Shape):
    # A LeagueDef with a UserWeek and the k places around the user's.
    id = serializers.UUIDField()
    key = serializers.CharField()
    name = serializers.CharField()
    weekStart = serializers.DateTimeField(help_text="The current week's start (inclusive).")
    weekEnd = serializers.DateTimeField(help_text="The current week's end (exclusive).")
    cohortId = serializers.UUIDField(
        allow_null=True, help_text="The user's cohort this week; null: not in one yet."
    )
    rank = serializers.IntegerField(allow_null=True, help_text="null: not in a cohort this week.")
    k = serializers.IntegerField(help_text="Places shown above and below the user.")
    standings = LeagueStanding(
        many=True,
        help_text="The cohort's members from k places above the user to k below (fewer at the "
        "top and the bottom), best first, ranked as the cohort's standings are; [] when the "
        "user is not in a cohort this week.",
    )


@renders(UserLeagueNeighboursResponse)
def user_league_neighbours_response_render(
    league: LeagueDef, mine: UserWeek, k: int
) -> dict[str, Any]:
    own = mine.own
    window: Sequence[Placed] = ()
    if own is not None:
        at = own.rank - 1
        window = mine.standings[max(0, at - k) : at + k + 1]
    return {
        "id": league.public_id,
        "key": league.key,
        "name": league.name,
        "weekStart": mine.week.start,
        "weekEnd": mine.week.end,
        "cohortId": str(mine.cohort.public_id) if mine.cohort is not None else None,
        "rank": own.rank if own else None,
        "k": k,
        "standings": [league_standing_render(p) for p in window],
    }


class LeagueWeek(Shape):
    # A LeagueEntry (with its cohort) of a LeagueDef.
    cohortId = serializers.UUIDField()
    weekStart = serializers.DateTimeField()
    weekEnd = serializers.DateTimeField()
    tier = LeagueTierRef(help_text="The tier the user played the week in.")
    score = serializers.FloatField()
    finished = serializers.BooleanField(
        help_text="The week's results are written (shortly after the week ends)."
    )
    placement = serializers.IntegerField(allow_null=True, help_text="null until finished.")
    zone = serializers.ChoiceField(
        choices=Zone.choices, allow_null=True, help_text="null until finished."
    )
    nextTier = LeagueTierRef(
        allow_null=True,
        help_text="The tier the week earned for the user's next week; null until finished.",
    )
    left = serializers.BooleanField(
        help_text="Scored nothing in a league whose idle users leave: back in the lowest tier."
    )
    rewards = LeagueReward(many=True, help_text="What the placement earned (paid once).")


@renders(LeagueWeek)
def league_week_render(league: LeagueDef, entry: LeagueEntry) -> dict[str, Any]:
    return {
        "cohortId": str(entry.cohort.public_id),
        "weekStart": entry.week_start,
        "weekEnd": entry.cohort.week_end,
        "tier": tier_render(league, entry.tier),
        "score": entry.score,
        "finished": entry.cohort.finished_at is not None,
        "placement": entry.placement,
        "zone": entry.zone,
        "nextTier": (tier_render(league, entry.next_tier) if entry.next_tier is not None else None),
        "left": entry.left,
        "rewards": [reward_render(reward) for reward in entry.rewards],
    }
