"""Writes of streak configuration: the tenant's settings (PATCH /streaks/settings and the
settings page). Every change bumps the tenant's configuration version."""

from typing import Any

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.arguments import UNSET, Unset, given
from apps.metrics.selectors import metric_definitions
from apps.streaks import domain
from apps.streaks.errors import StreakSettingsInvalidError
from apps.streaks.models import StreakCondition, StreakSettings


def streak_settings_update(
    tenant: Tenant,
    *,
    frequency: str | Unset = UNSET,
    evaluation_mode: str | Unset = UNSET,
    customization_enabled: bool | Unset = UNSET,
    days_off: list[int] | Unset = UNSET,  # 0 is Sunday; daily streaks only
    # (metric key, change per period), one per metric
    conditions: list[tuple[str, int]] | Unset = UNSET,
    freezes: domain.FreezeSettings | Unset | None = UNSET,  # None turns freezes off
) -> None:
    """PATCH /streaks/settings and the settings page: the given settings change, the others
    are kept. Switching away from daily clears the days off."""
    changes = given(
        frequency=frequency,
        evaluation_mode=evaluation_mode,
        customization_enabled=customization_enabled,
        days_off=days_off,
        conditions=conditions,
        freezes=freezes,
    )
    definitions = metric_definitions(tenant)
    conditions_check(changes.get("conditions", []), definitions)  # before anything is written
    settings, _ = StreakSettings.objects.get_or_create(tenant=tenant)
    new_frequency = changes.get("frequency", settings.frequency)
    new_days_off = changes.get(
        "days_off", settings.days_off if new_frequency == domain.DAILY else []
    )
    if new_frequency != domain.DAILY:
        if changes.get("days_off"):
            raise StreakSettingsInvalidError(
                "{days_off} is only allowed with daily frequency",
                fields="days_off",
                code="not_allowed_for_kind",
            )
        new_days_off = []  # switching away from daily clears days off (reference §4.3)
    settings.frequency = new_frequency
    settings.days_off = sorted(set(new_days_off))
    if "evaluation_mode" in changes:
        settings.evaluation_mode = changes["evaluation_mode"]
    if "customization_enabled" in changes:
        settings.customization_enabled = changes["customization_enabled"]
    if not isinstance(freezes, Unset):
        settings.freezes_enabled = freezes is not None
        if freezes is not None:
            problem = domain.freezes_problem(freezes)
            if problem is not None:
                # Its fields are those of FreezeSettings, told as parts of `freezes`.
                raise StreakSettingsInvalidError(
                    "{freezes}: " + problem.template,
                    fields=("freezes", *problem.fields),
                    code=problem.code,
                )
            settings.freeze_start_count = freezes.start_count
            settings.freeze_max_count = freezes.max_count
            settings.freeze_auto_earn_interval = freezes.auto_earn_interval
            settings.freeze_auto_earn_amount = freezes.auto_earn_amount
    settings.save()
    if "conditions" in changes:
        StreakCondition.objects.filter(tenant=tenant).delete()
        StreakCondition.objects.bulk_create(
            [
                StreakCondition(tenant=tenant, metric_id=definitions[key].pk, threshold=threshold)
                for key, threshold in changes["conditions"]
            ]
        )
    tenant_config_changed(tenant)


def conditions_check(conditions: list[tuple[str, Any]], definitions: dict[str, Any]) -> None:
    """Refuses conditions on metrics the tenant does not have (settings and preferences)."""
    unknown = sorted(key for key, _ in conditions if key not in definitions)
    if unknown:
        raise StreakSettingsInvalidError(
            f"{{conditions}}: unknown metric keys: {', '.join(unknown)}",
            fields="conditions",
            code="not_found",
        )
