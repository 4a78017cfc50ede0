"""Writes of streak configuration: the tenant's settings (PATCH /streaks/settings) and a
user's streak preferences (the streak part of PATCH /users/{id}/preferences)."""

import datetime as dt
from decimal import Decimal
from typing import Any

from django.utils import timezone

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.metrics.selectors import metric_definitions
from apps.streaks import domain
from apps.streaks.errors import StreakCustomizationDisabledError, StreakSettingsInvalidError
from apps.streaks.models import StreakCondition, StreakSettings, StreakState
from apps.streaks.selectors import StreakConfig, streak_config
from apps.streaks.services.state import _locked_state, _save
from apps.users.models import EndUser


def streak_settings_update(tenant: Tenant, data: dict[str, Any]) -> None:
    """Apply a validated PATCH /streaks/settings body; omitted fields keep their values."""
    definitions = metric_definitions(tenant)
    unknown = sorted(
        item["key"] for item in data.get("metrics", []) if item["key"] not in definitions
    )
    if unknown:  # checked before anything is written
        raise StreakSettingsInvalidError(f"metrics: unknown metric keys: {', '.join(unknown)}")
    settings, _ = StreakSettings.objects.get_or_create(tenant=tenant)
    frequency = data.get("frequency", settings.frequency)
    days_off = data.get("daysOff", settings.days_off if frequency == domain.DAILY else [])
    if frequency != domain.DAILY:
        if data.get("daysOff"):
            raise StreakSettingsInvalidError("daysOff is only allowed with daily frequency")
        days_off = []  # switching away from daily clears days off (reference §4.3)
    settings.frequency = frequency
    settings.days_off = sorted(set(days_off))
    if "evaluationMode" in data:
        settings.evaluation_mode = data["evaluationMode"]
    if "customizationEnabled" in data:
        settings.customization_enabled = data["customizationEnabled"]
    if "freezes" in data:
        freezes = data["freezes"]
        settings.freezes_enabled = freezes is not None
        if freezes is not None:
            settings.freeze_start_count = freezes["startCount"]
            settings.freeze_max_count = freezes["maxCount"]
            settings.freeze_auto_earn_interval = freezes.get("autoEarnInterval")
            settings.freeze_auto_earn_amount = freezes.get("autoEarnAmount")
    settings.save()
    if "metrics" in data:
        StreakCondition.objects.filter(tenant=tenant).delete()
        StreakCondition.objects.bulk_create(
            [
                StreakCondition(
                    tenant=tenant,
                    metric_id=definitions[item["key"]].pk,
                    threshold=item["threshold"],
                )
                for item in data["metrics"]
            ]
        )
    tenant_config_changed(tenant)


def streak_preferences_update(
    tenant: Tenant, user: EndUser, data: dict[str, Any], now: dt.datetime | None = None
) -> None:
    """PATCH /users/{id}/preferences, streak part. `enabled` is always allowed; the rest only
    when the tenant enables customization."""
    now = now or timezone.now()
    config = streak_config(tenant)
    personal = {"evaluationMode", "metrics", "daysOff"} & set(data)
    if personal and not config.customization_enabled:
        raise StreakCustomizationDisabledError()
    if "daysOff" in data and data["daysOff"] and config.frequency != domain.DAILY:
        raise StreakSettingsInvalidError("streak.daysOff: only allowed with daily streaks")
    if "metrics" in data:
        definitions = metric_definitions(tenant)
        unknown = sorted(m["key"] for m in data["metrics"] if m["key"] not in definitions)
        if unknown:
            raise StreakSettingsInvalidError(
                f"streak.metrics: unknown metric keys: {', '.join(unknown)}"
            )
    row, _ = _locked_state(tenant, user, now)
    if "enabled" in data:
        row.enabled = data["enabled"]
        if not row.enabled:
            # A disabled streak stays 0 (reference §3.2); it starts afresh if re-enabled.
            row.length, row.started, row.settled_through, row.extended_at = 0, None, None, None
    if "evaluationMode" in data:
        row.pref_mode = data["evaluationMode"]
    if "metrics" in data:
        row.pref_thresholds = {m["key"]: str(m["threshold"]) for m in data["metrics"]}
    if "daysOff" in data:
        row.pref_days_off = sorted(set(data["daysOff"]))
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
