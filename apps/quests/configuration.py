"""Writes of quest configuration, for the admin API and the dashboard alike: creating, changing
(status changes are the `status` setting) and deleting quests and pools. Every write calls
`tenant_config_changed`, which bumps the tenant's configuration version."""

import datetime as dt
from typing import Any

from django.utils import timezone

from apps.accounts.history import ALL, recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.achievements.choices import Trigger
from apps.achievements.models import Achievement
from apps.core.declarations import given_values, required_check
from apps.core.errors import ValidationError
from apps.core.wording import listed
from apps.metrics.models import Metric
from apps.points.models import PointsSystem
from apps.quests import domain
from apps.quests.choices import Cadence, GoalKind, Status
from apps.quests.domain import QuestPoolSettings, QuestSettings
from apps.quests.models import Quest, QuestPool, QuestProgress
from apps.users.choices import AttributeType
from apps.users.configuration import attribute_refs_check

_PLAIN = ("name", "description", "badge_url", "cadence", "starts_on", "ends_on", "reward_points")


@recorded("quest")
def quest_create(tenant: Tenant, settings: QuestSettings, now: dt.datetime | None = None) -> Quest:
    """A new quest, inactive unless `status` says otherwise."""
    required_check(settings)
    return _save(tenant, Quest(tenant=tenant), given_values(settings), now or timezone.now())


@recorded("quest")
def quest_update(
    tenant: Tenant, quest: Quest, changes: QuestSettings, now: dt.datetime | None = None
) -> Quest:
    """Change the given settings; the others are kept. Activating a quest starts its count
    from now (`activated_at`); deactivating or archiving it stops the count at once."""
    return _save(tenant, quest, given_values(changes), now or timezone.now())


def quest_settings_stored(quest: Quest) -> dict[str, Any]:
    """The stored settings as a QuestSettings holds them (for forms)."""
    system, achievement = quest.reward_points_system, quest.reward_achievement
    return {
        "name": quest.name,
        "key": quest.key,
        "description": quest.description,
        "badge_url": quest.badge_url,
        "status": quest.status,
        "cadence": quest.cadence,
        "starts_on": quest.starts_on,
        "ends_on": quest.ends_on,
        "goals": quest.goals,
        "reward_points": quest.reward_points,
        "reward_points_system_id": str(system.public_id) if system else None,
        "reward_achievement_id": str(achievement.public_id) if achievement else None,
        "user_attributes": quest.user_attributes,
    }


def _save(tenant: Tenant, quest: Quest, values: dict[str, Any], now: dt.datetime) -> Quest:
    if "key" in values:
        if Quest.objects.filter(tenant=tenant, key=values["key"]).exclude(pk=quest.pk).exists():
            raise ValidationError(
                "Key already in use by another quest", fields="key", code="unique"
            )
        quest.key = values["key"]
    for name in _PLAIN:
        if name in values:
            setattr(quest, name, values[name])
    if values.get("reward_points") is None and "reward_points" in values:
        quest.reward_points = 0
    if "status" in values and values["status"] != quest.status:
        if values["status"] == Status.ACTIVE:
            quest.activated_at = now
        quest.status = values["status"]
    if "goals" in values:
        quest.goals = _goals(tenant, values["goals"])
    if "reward_points_system_id" in values:
        quest.reward_points_system = (
            _system(tenant, values["reward_points_system_id"])
            if values["reward_points_system_id"] is not None
            else None
        )
    if "reward_achievement_id" in values:
        quest.reward_achievement = (
            _api_achievement(tenant, values["reward_achievement_id"])
            if values["reward_achievement_id"] is not None
            else None
        )
    if "user_attributes" in values:
        quest.user_attributes = attribute_refs_check(
            tenant, values["user_attributes"], AttributeType.USER
        )
    _validate(quest)
    quest.save()
    tenant_config_changed(tenant)
    return quest


def _system(tenant: Tenant, public_id: str) -> PointsSystem:
    system = PointsSystem.objects.filter(tenant=tenant, public_id=public_id).first()
    if system is None:
        raise ValidationError(
            "{reward_points_system_id}: Points system not found by ID",
            fields="reward_points_system_id",
            code="not_found",
        )
    return system


def _api_achievement(tenant: Tenant, public_id: str) -> Achievement:
    found = Achievement.objects.filter(
        tenant=tenant, public_id=public_id, trigger=Trigger.API
    ).first()
    if found is None:
        raise ValidationError(
            "{reward_achievement_id}: not an api achievement of this tenant",
            fields="reward_achievement_id",
            code="not_found",
        )
    return found


_GOAL_REFERENCES: dict[GoalKind, tuple[str, Any, str]] = {
    GoalKind.METRIC: ("metric_id", Metric, "Metric"),
    GoalKind.POINTS: ("points_system_id", PointsSystem, "Points system"),
    GoalKind.ACHIEVEMENT: ("achievement_id", Achievement, "Achievement"),
}


def _goals(tenant: Tenant, goals: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The goals as stored: each with its kind, target and the one reference its kind takes
    (public ids of this tenant's metric, points system or achievement)."""
    problem = domain.goals_problem(goals)
    if problem is not None:
        raise problem
    stored = []
    for goal in goals:
        kind = GoalKind(goal["kind"])
        target = 1 if kind == GoalKind.ACHIEVEMENT else goal["target"]
        item: dict[str, Any] = {"kind": kind.value, "target": domain.number_stored(target)}
        reference = _GOAL_REFERENCES.get(kind)
        if reference is not None:
            name, model, noun = reference
            public_id = str(goal[name])
            if not model.objects.filter(tenant=tenant, public_id=public_id).exists():
                raise ValidationError(
                    f"{{goals}}: {noun} not found by ID: {public_id}",
                    fields="goals",
                    code="not_found",
                )
            item[name] = public_id
        stored.append(item)
    return stored


def _validate(quest: Quest) -> None:
    if quest.cadence == Cadence.ONCE:
        if quest.starts_on is None or quest.ends_on is None:
            raise ValidationError(
                "{starts_on} and {ends_on} are required for a once quest",
                fields=["starts_on", "ends_on"],
                code="required",
            )
        if quest.ends_on < quest.starts_on:
            raise ValidationError(
                "{ends_on} must not be before {starts_on}",
                fields=["ends_on", "starts_on"],
                code="invalid",
            )
    else:
        quest.starts_on = quest.ends_on = None
    if quest.reward_points and quest.reward_points_system is None:
        raise ValidationError(
            "{reward_points_system_id} is required to pay reward points",
            fields="reward_points_system_id",
            code="required",
        )
    if quest.pk is not None:
        pools = [
            p.name
            for p in QuestPool.objects.filter(tenant_id=quest.tenant_id)
            if p.cadence != quest.cadence
            and any(m["quest_id"] == str(quest.public_id) for m in p.members)
        ]
        if pools:
            raise ValidationError(
                f"{{cadence}}: the quest is in {listed(sorted(pools))}, whose cadence differs",
                fields="cadence",
                code="invalid",
            )


@recorded(ALL)
def quest_delete(tenant: Tenant, quest: Quest) -> None:
    """Delete a quest nobody has made progress in, and that no pool names; one with history
    is archived instead (status)."""
    if QuestProgress.objects.filter(quest=quest).exists():
        raise ValidationError(
            "A quest with history cannot be deleted: archive it", code="protected"
        )
    public_id = str(quest.public_id)
    pools = [
        p.name
        for p in QuestPool.objects.filter(tenant=tenant)
        if any(m["quest_id"] == public_id for m in p.members)
    ]
    if pools:
        raise ValidationError(
            f"The quest is in {listed(sorted(pools))}: take it out of the pool first",
            code="protected",
        )
    quest.delete()
    tenant_config_changed(tenant)


# --- pools ------------------------------------------------------------------------------------


@recorded("quest_pool")
def pool_create(
    tenant: Tenant, settings: QuestPoolSettings, now: dt.datetime | None = None
) -> QuestPool:
    required_check(settings)
    return _pool_save(tenant, QuestPool(tenant=tenant), given_values(settings), now)


@recorded("quest_pool")
def pool_update(
    tenant: Tenant, pool: QuestPool, changes: QuestPoolSettings, now: dt.datetime | None = None
) -> QuestPool:
    """Change the given settings. A quest added to the pool keeps the moment it was added, so
    that it joins users' sets from their next period (domain.candidates_at); one already in it
    keeps its moment, whatever its weight becomes."""
    return _pool_save(tenant, pool, given_values(changes), now)


def pool_settings_stored(pool: QuestPool) -> dict[str, Any]:
    return {
        "name": pool.name,
        "key": pool.key,
        "status": pool.status,
        "cadence": pool.cadence,
        "size": pool.size,
        "quests": [{"quest_id": m["quest_id"], "weight": m["weight"]} for m in pool.members],
    }


def _pool_save(
    tenant: Tenant, pool: QuestPool, values: dict[str, Any], now: dt.datetime | None
) -> QuestPool:
    now = now or timezone.now()
    if "key" in values:
        taken = QuestPool.objects.filter(tenant=tenant, key=values["key"]).exclude(pk=pool.pk)
        if taken.exists():
            raise ValidationError(
                "Key already in use by another quest pool", fields="key", code="unique"
            )
        pool.key = values["key"]
    for name in ("name", "status", "cadence", "size"):
        if name in values:
            setattr(pool, name, values[name])
    if "quests" in values:
        problem = domain.pool_problem(pool.size, values["quests"])
        if problem is not None:
            raise problem
        before = {m["quest_id"]: m.get("added_at") for m in pool.members}
        pool.members = [
            {
                "quest_id": str(m["quest_id"]),
                "weight": int(m.get("weight") or 1),
                "added_at": before.get(str(m["quest_id"])) or now.isoformat(),
            }
            for m in values["quests"]
        ]
    ids = [m["quest_id"] for m in pool.members]
    quests = {
        str(q.public_id): q
        for q in Quest.objects.filter(tenant=tenant, public_id__in=ids).exclude(
            status=Status.ARCHIVED
        )
    }
    missing = [i for i in ids if i not in quests]
    if missing:
        raise ValidationError(
            f"{{quests}}: quest not found by ID (or archived): {', '.join(missing)}",
            fields="quests",
            code="not_found",
        )
    other = sorted(q.key for q in quests.values() if q.cadence != pool.cadence)
    if other:
        raise ValidationError(
            f"{{quests}}: {listed(other)} not of the pool's cadence ({pool.cadence})",
            fields="quests",
            code="invalid",
        )
    elsewhere = [
        p.name
        for p in QuestPool.objects.filter(tenant=tenant).exclude(pk=pool.pk)
        if any(m["quest_id"] in quests for m in p.members)
    ]
    if elsewhere:
        raise ValidationError(
            f"{{quests}}: a quest can be in one pool only; some are in {listed(sorted(elsewhere))}",
            fields="quests",
            code="invalid",
        )
    pool.save()
    tenant_config_changed(tenant)
    return pool


@recorded("quest_pool")
def pool_delete(tenant: Tenant, pool: QuestPool) -> None:
    """Delete a pool: its quests become everyone's (those still active)."""
    pool.delete()
    tenant_config_changed(tenant)
