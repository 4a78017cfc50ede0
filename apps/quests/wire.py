"""The quest's parts as other apps' bodies show them (webhook payloads) and the extension API's
bodies embed: the quest named, its period, a goal with the user's progress, the reward.
camelCase, as every body; each documented by its `Shape` (apps/core/api/shapes.py)."""

from collections.abc import Mapping, Sequence
from typing import Any

from rest_framework import serializers

from apps.core.api.shapes import Shape, renders
from apps.quests import domain
from apps.quests.choices import GoalKind
from apps.quests.selectors import Names, QuestDef


def quest_ref_render(quest: QuestDef) -> dict[str, Any]:
    return {"id": quest.public_id, "key": quest.key, "name": quest.name, "cadence": quest.cadence}


def period_render(period: domain.Period) -> dict[str, Any]:
    return {
        "start": period.start,
        "end": period.end,
        "firstDay": period.first.isoformat(),
        "lastDay": period.last.isoformat(),
    }


class QuestGoalProgress(Shape):
    # A goal of a QuestDef with the user's state in it ({"value"} or nothing yet).
    kind = serializers.ChoiceField(choices=GoalKind.choices)
    target = serializers.FloatField(help_text="1 for achievement goals.")
    progress = serializers.FloatField(
        help_text="How far the user got in the period: the metric's sum, the active days, the "
        "streak's extensions, the points gained, or 1 once the achievement is completed."
    )
    met = serializers.BooleanField()
    metricKey = serializers.CharField(required=False, help_text="metric goals.")
    pointsSystemKey = serializers.CharField(required=False, help_text="points goals.")
    achievementId = serializers.UUIDField(required=False, help_text="achievement goals.")


@renders(QuestGoalProgress)
def quest_goal_progress_render(
    stored: Mapping[str, Any], state: Mapping[str, Any], keys: Mapping[str, str]
) -> dict[str, Any]:
    """`keys`: the keys of the tenant's metrics and points systems, by public id."""
    target = float(stored["target"])
    progress = float(state.get("value", 0))
    body: dict[str, Any] = {
        "kind": stored["kind"],
        "target": target,
        "progress": progress,
        "met": progress >= target,
    }
    if stored.get("metric_id"):
        body["metricKey"] = keys.get(stored["metric_id"], "")
    if stored.get("points_system_id"):
        body["pointsSystemKey"] = keys.get(stored["points_system_id"], "")
    if stored.get("achievement_id"):
        body["achievementId"] = stored["achievement_id"]
    return body


class QuestReward(Shape):
    # What a quest's completion pays.
    points = serializers.IntegerField(help_text="0: no points.")
    pointsSystemKey = serializers.CharField(allow_null=True)
    achievementId = serializers.UUIDField(
        allow_null=True, help_text="The api achievement a completion completes."
    )


@renders(QuestReward)
def quest_reward_render(
    points: int, system_key: str | None, achievement_id: str | None
) -> dict[str, Any]:
    return {"points": points, "pointsSystemKey": system_key, "achievementId": achievement_id}


def goals_render(
    stored: Sequence[Mapping[str, Any]],
    states: Sequence[Mapping[str, Any]],
    keys: Mapping[str, str],
) -> list[dict[str, Any]]:
    padded = list(states) + [{}] * (len(stored) - len(states))
    return [
        quest_goal_progress_render(goal, state, keys)
        for goal, state in zip(stored, padded, strict=False)
    ]


def quest_reward_of(quest: QuestDef, names: Names) -> dict[str, Any]:
    """What the quest's completion pays, on the wire."""
    system = quest.reward_system_pk
    achievement = quest.reward_achievement_pk
    return quest_reward_render(
        quest.reward_points if system else 0,
        names.system_keys.get(system) if system else None,
        names.achievement_ids.get(achievement) if achievement else None,
    )
