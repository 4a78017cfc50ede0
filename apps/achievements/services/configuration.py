"""Configuration of achievements from the admin API and the dashboard: the fields of each
trigger, prerequisites without cycles, and backdating enqueued when qualification changes."""

from typing import Any

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.achievements.choices import Status, Trigger
from apps.achievements.errors import AchievementInvalidError
from apps.achievements.models import Achievement, AchievementPrerequisite
from apps.core.outbox import outbox_enqueue
from apps.metrics.models import Metric
from apps.users.choices import AttributeType
from apps.users.services import attribute_refs_check

# Fields that belong to one trigger only (reference §3.5).
TRIGGER_FIELDS = {
    Trigger.API: ("key",),
    Trigger.METRIC: ("metricId", "metricValue", "eventAttributes"),
    Trigger.STREAK: ("streakLength",),
    Trigger.ANNIVERSARY: ("anniversaryYears",),
    Trigger.ACHIEVEMENT: ("achievementIds",),
}
REQUIRED_FIELDS = {
    Trigger.API: ("key",),
    Trigger.METRIC: ("metricId", "metricValue"),
    Trigger.STREAK: ("streakLength",),
    Trigger.ANNIVERSARY: ("anniversaryYears",),
    Trigger.ACHIEVEMENT: ("achievementIds",),
}


def _apply(tenant: Tenant, achievement: Achievement, data: dict[str, Any], creating: bool) -> bool:
    """Set fields from validated data; returns whether qualification may have changed."""
    trigger = data.get("trigger", achievement.trigger)
    changed_trigger = trigger != achievement.trigger
    for other, fields in TRIGGER_FIELDS.items():
        if other != trigger:
            given = [f for f in fields if data.get(f) is not None]
            if given:
                raise AchievementInvalidError(
                    f"{', '.join(given)} only apply to {other} achievements"
                )
    if creating or changed_trigger:
        missing = [f for f in REQUIRED_FIELDS[trigger] if data.get(f) is None]
        if missing:
            raise AchievementInvalidError(f"{trigger} achievements need {', '.join(missing)}")
        achievement.key = achievement.metric = achievement.metric_value = None
        achievement.streak_length = achievement.anniversary_years = None
        achievement.event_attributes = []
    if trigger == Trigger.ACHIEVEMENT and "achievementIds" in data and not data["achievementIds"]:
        raise AchievementInvalidError("achievementIds: a composite needs at least one prerequisite")
    achievement.trigger = trigger
    for wire, attr in (("name", "name"), ("description", "description"), ("status", "status")):
        if wire in data:
            setattr(achievement, attr, data[wire])
    if "badge" in data:
        achievement.badge_url = data["badge"]["url"] if data["badge"] else None
    if "userAttributes" in data:
        achievement.user_attributes = attribute_refs_check(
            tenant, data["userAttributes"] or [], AttributeType.USER
        )
    if data.get("key") is not None:
        clash = Achievement.objects.filter(tenant=tenant, key=data["key"]).exclude(
            pk=achievement.pk
        )
        if clash.exists():
            raise AchievementInvalidError("Key already in use by another achievement")
        achievement.key = data["key"]
    if data.get("metricId") is not None:
        metric = Metric.objects.filter(tenant=tenant, public_id=data["metricId"]).first()
        if metric is None:
            raise AchievementInvalidError("metricId: Metric not found by ID")
        achievement.metric = metric
    if data.get("metricValue") is not None:
        achievement.metric_value = data["metricValue"]
    if "eventAttributes" in data:
        achievement.event_attributes = attribute_refs_check(
            tenant, data["eventAttributes"] or [], AttributeType.EVENT
        )
    for wire, attr in (
        ("streakLength", "streak_length"),
        ("anniversaryYears", "anniversary_years"),
    ):
        if data.get(wire) is not None:
            setattr(achievement, attr, data[wire])
    return (
        creating
        or changed_trigger
        or bool(
            {
                "metricId",
                "metricValue",
                "eventAttributes",
                "streakLength",
                "anniversaryYears",
                "achievementIds",
                "userAttributes",
                "status",
            }
            & set(data)
        )
    )


def _set_prerequisites(tenant: Tenant, achievement: Achievement, ids: list[str]) -> None:
    prerequisites = list(Achievement.objects.filter(tenant=tenant, public_id__in=ids))
    if len(prerequisites) != len(set(ids)):
        raise AchievementInvalidError("achievementIds: Achievement not found by ID")
    if any(p.pk == achievement.pk for p in prerequisites):
        raise AchievementInvalidError("achievementIds: an achievement cannot require itself")
    # Refuse cycles: no prerequisite may (transitively) require this achievement.
    frontier = {p.pk for p in prerequisites}
    seen: set[int] = set()
    while frontier:
        if achievement.pk in frontier:
            raise AchievementInvalidError("achievementIds: prerequisites would form a cycle")
        seen |= frontier
        frontier = (
            set(
                AchievementPrerequisite.objects.filter(composite_id__in=frontier).values_list(
                    "prerequisite_id", flat=True
                )
            )
            - seen
        )
    achievement.prerequisites.set(prerequisites)


def achievement_save(
    tenant: Tenant, achievement: Achievement | None, data: dict[str, Any]
) -> Achievement:
    """Create (achievement None) or update from a validated admin item. Activating, or
    editing an active achievement's qualification, backdates it after commit."""
    creating = achievement is None
    target = achievement or Achievement(tenant=tenant)
    was_active = not creating and target.status == Status.ACTIVE
    qualification_changed = _apply(tenant, target, data, creating)
    target.save()
    if target.trigger == Trigger.ACHIEVEMENT and data.get("achievementIds") is not None:
        _set_prerequisites(tenant, target, data["achievementIds"])
    elif target.trigger != Trigger.ACHIEVEMENT:
        target.prerequisites.clear()
    tenant_config_changed(tenant)
    if target.status == Status.ACTIVE and (not was_active or qualification_changed):
        from apps.achievements.tasks import achievement_backdate_task

        # Recorded in this transaction: if the task never arrives, the outbox sends it again.
        outbox_enqueue(achievement_backdate_task, target.pk)
    return target


def achievement_delete(tenant: Tenant, achievement: Achievement) -> None:
    """Deletes the achievement and its completions."""
    if achievement.required_by.exists():
        raise AchievementInvalidError(
            "Other achievements require this one; remove it from their achievementIds first"
        )
    achievement.delete()
    tenant_config_changed(tenant)
