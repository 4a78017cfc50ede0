"""Writes of streak configuration: the tenant's settings (PATCH /streaks/settings and the
settings page) and a user's streak preferences (the streak part of PATCH
/users/{id}/preferences)."""

import datetime as dt
from decimal import Decimal
from typing import Any

from django.utils import timezone

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.arguments import UNSET, Unset, given
from apps.metrics.selectors import metric_definitions
from apps.streaks import domain
from apps.streaks.errors import StreakCustomizationDisabledError, StreakSettingsInvalidError
from apps.streaks.models import StreakCondition, StreakSettings, StreakState
from apps.streaks.selectors import StreakConfig, streak_config
from apps.streaks.services.state import _locked_state, _save
from apps.users.models import EndUser


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
    _conditions_check(changes.get("conditions", []), definitions)  # before anything is written
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


def _conditions_check(conditions: list[tuple[str, Any]], definitions: dict[str, Any]) -> None:
    unknown = sorted(key for key, _ in conditions if key not in definitions)
    if unknown:
        raise StreakSettingsInvalidError(
            f"{{conditions}}: unknown metric keys: {', '.join(unknown)}",
            fields="conditions",
            code="not_found",
        )


def streak_preferences_update(
    tenant: Tenant,
    user: EndUser,
    *,
    now: dt.datetime | None = None,
    enabled: bool | Unset = UNSET,
    evaluation_mode: str | Unset = UNSET,
    conditions: list[tuple[str, Decimal]] | Unset = UNSET,  # (metric key, change per period)
    days_off: list[int] | Unset = UNSET,
) -> None:
    """PATCH /users/{id}/preferences, streak part. `enabled` is always allowed; the rest only
    when the tenant enables customization."""
    changes = given(
        enabled=enabled, evaluation_mode=evaluation_mode, conditions=conditions, days_off=days_off
    )
    now = now or timezone.now()
    config = streak_config(tenant)
    personal = {"evaluation_mode", "conditions", "days_off"} & set(changes)
    if personal and not config.customization_enabled:
        raise StreakCustomizationDisabledError()
    if changes.get("days_off") and config.frequency != domain.DAILY:
        raise StreakSettingsInvalidError(
            "{days_off}: only allowed with daily streaks",
            fields="days_off",
            code="not_allowed_for_kind",
        )
    if "conditions" in changes:
        _conditions_check(changes["conditions"], metric_definitions(tenant))
    row, _ = _locked_state(tenant, user, now)
    if "enabled" in changes:
        row.enabled = changes["enabled"]
        if not row.enabled:
            # A disabled streak stays 0 (reference §3.2); it starts afresh if re-enabled.
            row.length, row.started, row.settled_through, row.extended_at = 0, None, None, None
    if "evaluation_mode" in changes:
        row.pref_mode = changes["evaluation_mode"]
    if "conditions" in changes:
        row.pref_thresholds = {key: str(threshold) for key, threshold in changes["conditions"]}
    if "days_off" in changes:
        row.pref_days_off = sorted(set(changes["days_off"]))
    _save(row, user)


def streak_preferences_of(config: StreakConfig, row: StreakState | None) -> dict[str, Any] | None:
    """The streak part of GET /users/{id}/preferences: present when customization is enabled
    or the user turned streaks off."""
    enabled = row.enabled if row is not None else True
    if not config.customization_enabled and enabled:
        return None
    prefs: dict[str, Any] = {"enabled": enabled}
    if row is not None and config.customization_enabled:
        if row.pref_mode:
            prefs["evaluationMode"] = row.pref_mode
        if row.pref_thresholds is not None:
            prefs["metrics"] = [
                {"key": k, "threshold": Decimal(v)} for k, v in row.pref_thresholds.items()
            ]
        if row.pref_days_off is not None:
            prefs["daysOff"] = row.pref_days_off
    return prefs
