"""Input shapes of the quests admin API (/admin/ext/v1/quests, /admin/ext/v1/quest-pools), and
the response shapes of the quests extension routes, each `Shape` with the function that renders
it below it (apps/core/api/shapes.py). The admin inputs agree with `QuestSettings` and
`QuestPoolSettings` (tests/core/test_declarations.py)."""

import datetime as dt
from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField, key_field
from apps.core.api.shapes import Shape, renders
from apps.quests import domain
from apps.quests.choices import Cadence, GoalKind, PoolCadence, PoolStatus, Status
from apps.quests.models import Quest, QuestPool, QuestProgress
from apps.quests.selectors import Assigned, Names
from apps.quests.wire import (
    QuestGoalProgress,
    QuestReward,
    goals_render,
    quest_reward_of,
)
from apps.users.wire import AttributeRef, AttributeRefSerializer

# --- admin API input --------------------------------------------------------------------------


class QuestGoalSerializer(StrictSerializer):
    kind = serializers.ChoiceField(choices=GoalKind.choices)
    target = serializers.DecimalField(
        max_digits=20,
        decimal_places=6,
        min_value=0,
        max_value=domain.MAX_TARGET,
        required=False,
        help_text="What the period must reach: the metric's sum, the number of active days, "
        "of streak extensions, or the points gained. Above 0; not taken by achievement goals.",
    )
    metricId = serializers.UUIDField(required=False, allow_null=True, help_text="metric goals.")
    pointsSystemId = serializers.UUIDField(
        required=False, allow_null=True, help_text="points goals."
    )
    achievementId = serializers.UUIDField(
        required=False, allow_null=True, help_text="achievement goals."
    )

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        kwargs = super().service_kwargs(data)
        for name in ("metric_id", "points_system_id", "achievement_id"):
            if kwargs.get(name) is not None:
                kwargs[name] = str(kwargs[name])
        return kwargs


class _QuestFields(StrictSerializer):
    description = StringField(max_length=2000, required=False, allow_null=True, allow_blank=True)
    badgeUrl = serializers.URLField(max_length=2000, required=False, allow_null=True)
    status = serializers.ChoiceField(choices=Status.choices, required=False)
    startsOn = serializers.DateField(
        required=False, allow_null=True, help_text="Once quests: the first day (user's calendar)."
    )
    endsOn = serializers.DateField(
        required=False, allow_null=True, help_text="Once quests: the last day (user's calendar)."
    )
    rewardPoints = serializers.IntegerField(
        min_value=0,
        max_value=domain.MAX_REWARD_POINTS,
        required=False,
        help_text="Points paid into rewardPointsSystemId once per completion (default 0).",
    )
    rewardPointsSystemId = serializers.UUIDField(required=False, allow_null=True)
    rewardAchievementId = serializers.UUIDField(
        required=False, allow_null=True, help_text="An api achievement a completion completes."
    )
    userAttributes = AttributeRefSerializer(
        many=True,
        required=False,
        allow_null=True,
        help_text="Only users with all these attribute values get the quest ([] or null: "
        "everyone).",
    )

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        for name in ("rewardPointsSystemId", "rewardAchievementId"):
            if value.get(name) is not None:
                value[name] = str(value[name])
        return value

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        kwargs = super().service_kwargs(data)
        if "goals" in kwargs:
            kwargs["goals"] = [QuestGoalSerializer.service_kwargs(g) for g in kwargs["goals"]]
        return kwargs


def _goals_field(required: bool) -> serializers.ListField:
    return serializers.ListField(
        child=QuestGoalSerializer(),
        required=required,
        min_length=1,
        max_length=domain.MAX_GOALS,
        help_text=f"1 to {domain.MAX_GOALS} goals, all to be met within one period.",
    )


class QuestCreateSerializer(_QuestFields):
    name = StringField(max_length=255)
    key = key_field()
    cadence = serializers.ChoiceField(choices=Cadence.choices)
    goals = _goals_field(required=True)


class QuestUpdateSerializer(_QuestFields):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    key = key_field()
    cadence = serializers.ChoiceField(choices=Cadence.choices, required=False)
    goals = _goals_field(required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["key"].required = False


class PoolMemberSerializer(StrictSerializer):
    questId = serializers.UUIDField()
    weight = serializers.IntegerField(
        min_value=1, max_value=domain.MAX_WEIGHT, required=False, help_text="Default 1."
    )

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        kwargs = super().service_kwargs(data)
        kwargs["quest_id"] = str(kwargs["quest_id"])
        return kwargs


def _members_field(required: bool) -> serializers.ListField:
    return serializers.ListField(
        child=PoolMemberSerializer(),
        required=required,
        min_length=1,
        max_length=domain.MAX_POOL_MEMBERS,
        help_text="The pool's quests (of its cadence; a quest is in one pool at most), each "
        "with a weight.",
    )


class _PoolFields(StrictSerializer):
    status = serializers.ChoiceField(choices=PoolStatus.choices, required=False)

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        kwargs = super().service_kwargs(data)
        if "quests" in kwargs:
            kwargs["quests"] = [PoolMemberSerializer.service_kwargs(m) for m in kwargs["quests"]]
        return kwargs


class PoolCreateSerializer(_PoolFields):
    name = StringField(max_length=255)
    key = key_field()
    cadence = serializers.ChoiceField(choices=PoolCadence.choices)
    size = serializers.IntegerField(
        min_value=1, max_value=domain.MAX_POOL_SIZE, help_text="Quests each user gets per period."
    )
    quests = _members_field(required=True)


class PoolUpdateSerializer(_PoolFields):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    key = key_field()
    cadence = serializers.ChoiceField(choices=PoolCadence.choices, required=False)
    size = serializers.IntegerField(
        min_value=1,
        max_value=domain.MAX_POOL_SIZE,
        required=False,
        help_text="Quests each user gets per period.",
    )
    quests = _members_field(required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["key"].required = False


# --- the admin API's shapes -------------------------------------------------------------------


class QuestGoal(Shape):
    # One stored goal (Quest.goals).
    kind = serializers.ChoiceField(choices=GoalKind.choices)
    target = serializers.FloatField(help_text="1 for achievement goals.")
    metricId = serializers.UUIDField(required=False, help_text="metric goals.")
    pointsSystemId = serializers.UUIDField(required=False, help_text="points goals.")
    achievementId = serializers.UUIDField(required=False, help_text="achievement goals.")


@renders(QuestGoal)
def quest_goal_render(goal: Mapping[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": goal["kind"], "target": float(goal["target"])}
    if goal.get("metric_id"):
        body["metricId"] = goal["metric_id"]
    if goal.get("points_system_id"):
        body["pointsSystemId"] = goal["points_system_id"]
    if goal.get("achievement_id"):
        body["achievementId"] = goal["achievement_id"]
    return body


class AdminQuest(Shape):
    # A Quest row (with its reward's system and achievement loaded).
    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    badgeUrl = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=Status.choices)
    activatedAt = serializers.DateTimeField(
        allow_null=True, help_text="When it last became active: progress counts from then."
    )
    cadence = serializers.ChoiceField(choices=Cadence.choices)
    startsOn = serializers.DateField(allow_null=True, help_text="Once quests; null otherwise.")
    endsOn = serializers.DateField(allow_null=True, help_text="Once quests; null otherwise.")
    goals = QuestGoal(many=True)
    rewardPoints = serializers.IntegerField()
    rewardPointsSystemId = serializers.UUIDField(allow_null=True)
    rewardAchievementId = serializers.UUIDField(allow_null=True)
    userAttributes = AttributeRef(many=True, help_text="User filter ([] for everyone).")
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


@renders(AdminQuest)
def admin_quest_render(quest: Quest) -> dict[str, Any]:
    system, achievement = quest.reward_points_system, quest.reward_achievement
    return {
        "id": str(quest.public_id),
        "name": quest.name,
        "key": quest.key,
        "description": quest.description,
        "badgeUrl": quest.badge_url,
        "status": quest.status,
        "activatedAt": quest.activated_at,
        "cadence": quest.cadence,
        "startsOn": quest.starts_on.isoformat() if quest.starts_on else None,
        "endsOn": quest.ends_on.isoformat() if quest.ends_on else None,
        "goals": [quest_goal_render(g) for g in quest.goals],
        "rewardPoints": quest.reward_points,
        "rewardPointsSystemId": str(system.public_id) if system else None,
        "rewardAchievementId": str(achievement.public_id) if achievement else None,
        "userAttributes": list(quest.user_attributes),
        "created": quest.created,
        "updated": quest.updated,
    }


class PoolMember(Shape):
    questId = serializers.UUIDField()
    weight = serializers.IntegerField()
    addedAt = serializers.DateTimeField(
        help_text="When it joined the pool: users get it from their next period."
    )


@renders(PoolMember)
def pool_member_render(member: Mapping[str, Any]) -> dict[str, Any]:
    """A member as stored (QuestPool.members)."""
    return {
        "questId": member["quest_id"],
        "weight": member["weight"],
        "addedAt": member["added_at"],
    }


class AdminQuestPool(Shape):
    # A QuestPool row.
    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    status = serializers.ChoiceField(choices=PoolStatus.choices)
    cadence = serializers.ChoiceField(choices=PoolCadence.choices)
    size = serializers.IntegerField(help_text="Quests each user gets per period.")
    quests = PoolMember(many=True)
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


@renders(AdminQuestPool)
def admin_pool_render(pool: QuestPool) -> dict[str, Any]:
    return {
        "id": str(pool.public_id),
        "name": pool.name,
        "key": pool.key,
        "status": pool.status,
        "cadence": pool.cadence,
        "size": pool.size,
        "quests": [pool_member_render(m) for m in pool.members],
        "created": pool.created,
        "updated": pool.updated,
    }


# --- the application API ----------------------------------------------------------------------


class UserQuest(Shape):
    # An Assigned quest with the user's progress row of its period (or none yet).
    id = serializers.UUIDField()
    key = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    badgeUrl = serializers.CharField(allow_null=True)
    cadence = serializers.ChoiceField(choices=Cadence.choices)
    poolKey = serializers.CharField(
        allow_null=True, help_text="The pool that chose it for the user; null: everyone's."
    )
    periodStart = serializers.DateTimeField(
        help_text="When the period started: the user's local midnight (inclusive)."
    )
    periodEnd = serializers.DateTimeField(
        help_text="When the period ends: the user's local midnight (exclusive)."
    )
    timeLeft = serializers.IntegerField(help_text="Seconds until the period ends.")
    goals = QuestGoalProgress(many=True, help_text="All must be met within the period.")
    reward = QuestReward()
    completed = serializers.BooleanField()
    completedAt = serializers.DateTimeField(allow_null=True)


class QuestHistoryEntry(Shape):
    # A QuestProgress row of a period that has ended, with its quest.
    id = serializers.UUIDField(help_text="The quest's id.")
    key = serializers.CharField()
    name = serializers.CharField()
    cadence = serializers.ChoiceField(choices=Cadence.choices)
    periodStart = serializers.DateField(help_text="The period's first day (user's calendar).")
    periodEnd = serializers.DateField(help_text="The period's last day (user's calendar).")
    goals = QuestGoalProgress(many=True)
    completed = serializers.BooleanField()
    completedAt = serializers.DateTimeField(allow_null=True)
    rewardPoints = serializers.IntegerField(help_text="The points the completion paid.")


@renders(UserQuest)
def user_quest_render(
    assigned: Assigned, row: QuestProgress | None, names: Names, now: dt.datetime
) -> dict[str, Any]:
    quest, period = assigned.quest, assigned.period
    return {
        "id": quest.public_id,
        "key": quest.key,
        "name": quest.name,
        "description": quest.description,
        "badgeUrl": quest.badge_url,
        "cadence": quest.cadence,
        "poolKey": assigned.pool_key,
        "periodStart": period.start,
        "periodEnd": period.end,
        "timeLeft": max(0, int((period.end - now).total_seconds())),
        "goals": goals_render(quest.goals_stored, row.goals if row else [], names.keys),
        "reward": quest_reward_of(quest, names),
        "completed": row is not None and row.completed_at is not None,
        "completedAt": row.completed_at if row else None,
    }


@renders(QuestHistoryEntry)
def quest_history_entry_render(row: QuestProgress, names: Names) -> dict[str, Any]:
    quest = row.quest
    return {
        "id": str(quest.public_id),
        "key": quest.key,
        "name": quest.name,
        "cadence": quest.cadence,
        "periodStart": row.period_first.isoformat(),
        "periodEnd": row.period_last.isoformat(),
        "goals": goals_render(quest.goals, row.goals, names.keys),
        "completed": row.completed_at is not None,
        "completedAt": row.completed_at,
        "rewardPoints": row.reward_points,
    }
