"""Configuration of achievements from the admin API and the dashboard: the fields of each
trigger, prerequisites without cycles, and backdating enqueued when qualification changes."""

from decimal import Decimal
from typing import Any, TypedDict, Unpack

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.achievements.choices import Status, Trigger
from apps.achievements.errors import AchievementInvalidError
from apps.achievements.models import Achievement, AchievementPrerequisite
from apps.core.arguments import arguments_check, kind_problem
from apps.core.outbox import outbox_enqueue
from apps.metrics.models import Metric
from apps.users.choices import AttributeType
from apps.users.services import attribute_refs_check


class AchievementSettings(TypedDict, total=False):
    """What an achievement may be given besides its name and trigger. Ids are public ids; the
    attribute filters are {"attributeId", "attributeValue"} references."""

    description: str | None
    status: str
    badge_url: str | None
    user_attributes: list[dict[str, str]] | None
    key: str | None  # api achievements: how POST /achievements/{key}/complete names it
    metric_id: str | None
    metric_value: Decimal | None
    event_attributes: list[dict[str, str]] | None
    streak_length: int | None
    anniversary_years: int | None
    achievement_ids: list[str] | None  # a composite's prerequisites


class AchievementChanges(AchievementSettings, total=False):
    name: str
    trigger: str


# Settings that belong to one trigger only (reference §3.5), and those each trigger needs.
TRIGGER_FIELDS = {
    Trigger.API: ("key",),
    Trigger.METRIC: ("metric_id", "metric_value", "event_attributes"),
    Trigger.STREAK: ("streak_length",),
    Trigger.ANNIVERSARY: ("anniversary_years",),
    Trigger.ACHIEVEMENT: ("achievement_ids",),
}
REQUIRED_FIELDS = {
    Trigger.API: ("key",),
    Trigger.METRIC: ("metric_id", "metric_value"),
    Trigger.STREAK: ("streak_length",),
    Trigger.ANNIVERSARY: ("anniversary_years",),
    Trigger.ACHIEVEMENT: ("achievement_ids",),
}
# The admin API's names, which messages use.
WIRE_NAMES = {
    "key": "key",
    "metric_id": "metricId",
    "metric_value": "metricValue",
    "event_attributes": "eventAttributes",
    "streak_length": "streakLength",
    "anniversary_years": "anniversaryYears",
    "achievement_ids": "achievementIds",
}
# Changing one of these (or the trigger) may change who qualifies: the achievement is backdated.
QUALIFYING = frozenset(
    {
        "metric_id",
        "metric_value",
        "event_attributes",
        "streak_length",
        "anniversary_years",
        "achievement_ids",
        "user_attributes",
        "status",
    }
)


def _apply(
    tenant: Tenant, achievement: Achievement, values: dict[str, Any], creating: bool
) -> bool:
    """Set the given settings; returns whether qualification may have changed."""
    trigger = values.get("trigger", achievement.trigger)
    changed_trigger = trigger != achievement.trigger
    problem = kind_problem(
        trigger,
        values,
        TRIGGER_FIELDS,
        REQUIRED_FIELDS,
        WIRE_NAMES,
        noun="achievements",
        new=creating or changed_trigger,
    )
    if problem is not None:
        raise AchievementInvalidError(problem)
    if creating or changed_trigger:
        achievement.key = achievement.metric = achievement.metric_value = None
        achievement.streak_length = achievement.anniversary_years = None
        achievement.event_attributes = []
    if (
        trigger == Trigger.ACHIEVEMENT
        and "achievement_ids" in values
        and not values["achievement_ids"]
    ):
        raise AchievementInvalidError("achievementIds: a composite needs at least one prerequisite")
    achievement.trigger = trigger
    for name in ("name", "description", "status", "badge_url"):
        if name in values:
            setattr(achievement, name, values[name])
    if "user_attributes" in values:
        achievement.user_attributes = attribute_refs_check(
            tenant, values["user_attributes"] or [], AttributeType.USER
        )
    if values.get("key") is not None:
        clash = Achievement.objects.filter(tenant=tenant, key=values["key"]).exclude(
            pk=achievement.pk
        )
        if clash.exists():
            raise AchievementInvalidError("Key already in use by another achievement")
        achievement.key = values["key"]
    if values.get("metric_id") is not None:
        metric = Metric.objects.filter(tenant=tenant, public_id=values["metric_id"]).first()
        if metric is None:
            raise AchievementInvalidError("metricId: Metric not found by ID")
        achievement.metric = metric
    if values.get("metric_value") is not None:
        achievement.metric_value = values["metric_value"]
    if "event_attributes" in values:
        achievement.event_attributes = attribute_refs_check(
            tenant, values["event_attributes"] or [], AttributeType.EVENT
        )
    for name in ("streak_length", "anniversary_years"):
        if values.get(name) is not None:
            setattr(achievement, name, values[name])
    return creating or changed_trigger or bool(QUALIFYING & set(values))


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


def achievement_create(
    tenant: Tenant, *, name: str, trigger: str, **settings: Unpack[AchievementSettings]
) -> Achievement:
    """A new achievement, inactive unless `status` says otherwise; an active one is backdated
    after commit."""
    arguments_check("achievement_create", settings, AchievementSettings)
    values = {"name": name, "trigger": trigger, **settings}
    return _save(tenant, Achievement(tenant=tenant), values, creating=True)


def achievement_update(
    tenant: Tenant, achievement: Achievement, **changes: Unpack[AchievementChanges]
) -> Achievement:
    """Change the given settings; the others are kept. Activating, or changing an active
    achievement's qualification, backdates it after commit."""
    arguments_check("achievement_update", changes, AchievementChanges)
    return _save(tenant, achievement, dict(changes), creating=False)


def _save(
    tenant: Tenant, target: Achievement, values: dict[str, Any], *, creating: bool
) -> Achievement:
    was_active = not creating and target.status == Status.ACTIVE
    qualification_changed = _apply(tenant, target, values, creating)
    target.save()
    if target.trigger == Trigger.ACHIEVEMENT and values.get("achievement_ids") is not None:
        _set_prerequisites(tenant, target, values["achievement_ids"])
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
