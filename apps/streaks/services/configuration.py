"""Writes of streak configuration: the tenant's settings (PATCH /streaks/settings and the
settings page) and a user's streak preferences (the streak part of PATCH
/users/{id}/preferences)."""

import datetime as dt
from decimal import Decimal
from typing import Any, TypedDict, Unpack

from django.utils import timezone

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.arguments import arguments_check
from apps.metrics.selectors import metric_definitions
from apps.streaks import domain
from apps.streaks.errors import StreakCustomizationDisabledError, StreakSettingsInvalidError
from apps.streaks.models import StreakCondition, StreakSettings, StreakState
from apps.streaks.selectors import StreakConfig, streak_config
from apps.streaks.services.state import _locked_state, _save
from apps.users.models import EndUser


class StreakSettingsChanges(TypedDict, total=False):
    frequency: str
    evaluation_mode: str
    customization_enabled: bool
    days_off: list[int]  # 0 is Sunday; daily streaks only
    conditions: list[tuple[str, int]]  # (metric key, change per period), one per metric
    freezes: domain.FreezeSettings | None  # None turns freezes off


def streak_settings_update(tenant: Tenant, **changes: Unpack[StreakSettingsChanges]) -> None:
    """PATCH /streaks/settings and the settings page: the given settings change, the others
    are kept. Switching away from daily clears the days off."""
    arguments_check("streak_settings_update", changes, StreakSettingsChanges)
    definitions = metric_definitions(tenant)
    conditions = changes.get("conditions", [])
    unknown = sorted(key for key, _ in conditions if key not in definitions)
    if unknown:  # checked before anything is written
        raise StreakSettingsInvalidError(f"metrics: unknown metric keys: {', '.join(unknown)}")
    settings, _ = StreakSettings.objects.get_or_create(tenant=tenant)
    frequency = changes.get("frequency", settings.frequency)
    days_off = changes.get("days_off", settings.days_off if frequency == domain.DAILY else [])
    if frequency != domain.DAILY:
        if changes.get("days_off"):
            raise StreakSettingsInvalidError("daysOff is only allowed with daily frequency")
        days_off = []  # switching away from daily clears days off (reference §4.3)
    settings.frequency = frequency
    settings.days_off = sorted(set(days_off))
    if "evaluation_mode" in changes:
        settings.evaluation_mode = changes["evaluation_mode"]
    if "customization_enabled" in changes:
        settings.customization_enabled = changes["customization_enabled"]
    if "freezes" in changes:
        freezes = changes["freezes"]
        settings.freezes_enabled = freezes is not None
        if freezes is not None:
            problem = domain.freezes_problem(freezes)
            if problem is not None:
                raise StreakSettingsInvalidError(f"freezes: {problem}")
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
                for key, threshold in conditions
            ]
        )
    tenant_config_changed(tenant)


class StreakPreferenceChanges(TypedDict, total=False):
    enabled: bool
    evaluation_mode: str
    conditions: list[tuple[str, Decimal]]  # (metric key, change per period)
    days_off: list[int]


def streak_preferences_update(
    tenant: Tenant,
    user: EndUser,
    *,
    now: dt.datetime | None = None,
    **changes: Unpack[StreakPreferenceChanges],
) -> None:
    """PATCH /users/{id}/preferences, streak part. `enabled` is always allowed; the rest only
    when the tenant enables customization."""
    arguments_check("streak_preferences_update", changes, StreakPreferenceChanges)
    now = now or timezone.now()
    config = streak_config(tenant)
    personal = {"evaluation_mode", "conditions", "days_off"} & set(changes)
    if personal and not config.customization_enabled:
        raise StreakCustomizationDisabledError()
    if changes.get("days_off") and config.frequency != domain.DAILY:
        raise StreakSettingsInvalidError("streak.daysOff: only allowed with daily streaks")
    if "conditions" in changes:
        definitions = metric_definitions(tenant)
        unknown = sorted(key for key, _ in changes["conditions"] if key not in definitions)
        if unknown:
            raise StreakSettingsInvalidError(
                f"streak.metrics: unknown metric keys: {', '.join(unknown)}"
            )
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
