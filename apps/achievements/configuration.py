"""Configuration of achievements from the admin API and the dashboard: the fields of each
trigger, prerequisites without cycles, and backdating enqueued when qualification changes."""

from typing import Any

from apps.accounts.history import ALL, recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.achievements.choices import Status, Trigger
from apps.achievements.domain import REQUIRED_FIELDS, TRIGGER_FIELDS, AchievementSettings
from apps.achievements.errors import AchievementInvalidError
from apps.achievements.models import Achievement, AchievementPrerequisite
from apps.achievements.selectors import achievement_deletion_impact
from apps.core.arguments import kind_problem
from apps.core.declarations import given_values, required_check
from apps.core.outbox import outbox_enqueue
from apps.metrics.models import Metric
from apps.users.choices import AttributeType
from apps.users.configuration import attribute_refs_check

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
        noun="achievements",
        new=creating or changed_trigger,
        error=AchievementInvalidError,
    )
    if problem is not None:
        raise problem
    if creating or changed_trigger:
        achievement.key = achievement.metric = achievement.metric_value = None
        achievement.streak_length = achievement.anniversary_years = None
        achievement.event_attributes = []
    if (
        trigger == Trigger.ACHIEVEMENT
        and "achievement_ids" in values
        and not values["achievement_ids"]
    ):
        raise AchievementInvalidError(
            "{achievement_ids}: a composite needs at least one prerequisite",
            fields="achievement_ids",
            code="required",
        )
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
            raise AchievementInvalidError(
                "Key already in use by another achievement", fields="key", code="unique"
            )
        achievement.key = values["key"]
    if values.get("metric_id") is not None:
        metric = Metric.objects.filter(tenant=tenant, public_id=values["metric_id"]).first()
        if metric is None:
            raise AchievementInvalidError(
                "{metric_id}: Metric not found by ID", fields="metric_id", code="not_found"
            )
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
        raise AchievementInvalidError(
            "{achievement_ids}: Achievement not found by ID",
            fields="achievement_ids",
            code="not_found",
        )
    if any(p.pk == achievement.pk for p in prerequisites):
        raise AchievementInvalidError(
            "{achievement_ids}: an achievement cannot require itself",
            fields="achievement_ids",
            code="invalid",
        )
    # Refuse cycles: no prerequisite may (transitively) require this achievement.
    frontier = {p.pk for p in prerequisites}
    seen: set[int] = set()
    while frontier:
        if achievement.pk in frontier:
            raise AchievementInvalidError(
                "{achievement_ids}: prerequisites would form a cycle",
                fields="achievement_ids",
                code="invalid",
            )
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


@recorded("achievement")
def achievement_create(tenant: Tenant, settings: AchievementSettings) -> Achievement:
    """A new achievement, inactive unless `status` says otherwise; an active one is backdated
    after commit."""
    required_check(settings, AchievementInvalidError)
    return _save(tenant, Achievement(tenant=tenant), given_values(settings), creating=True)


@recorded("achievement")
def achievement_update(
    tenant: Tenant, achievement: Achievement, changes: AchievementSettings
) -> Achievement:
    """Change the given settings; the others are kept. Activating, or changing an active
    achievement's qualification, backdates it after commit."""
    return _save(tenant, achievement, given_values(changes), creating=False)


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


@recorded(ALL)
def achievement_delete(tenant: Tenant, achievement: Achievement, *, confirm: str = "") -> None:
    """Deletes the achievement and its completions. One that users completed needs its key (or
    its name, without a key) as `confirm` (achievement_deletion_impact); locking it instead
    keeps what they earned."""
    if achievement.required_by.exists():
        raise AchievementInvalidError(
            "Other achievements require this one; remove it from their {achievement_ids} first",
            fields="achievement_ids",
            code="in_use",
        )
    achievement_deletion_impact(tenant, achievement).check(confirm=confirm)
    achievement.delete()
    tenant_config_changed(tenant)
