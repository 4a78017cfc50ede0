"""A user's streak preferences: the streak part of GET and PATCH /users/{id}/preferences, kept
on the user's streak state row."""

import datetime as dt
from decimal import Decimal
from typing import Any

from django.utils import timezone

from apps.accounts.models import Tenant
from apps.core.arguments import UNSET, Unset, given
from apps.metrics.selectors import metric_definitions
from apps.streaks import domain
from apps.streaks.configuration import conditions_check
from apps.streaks.errors import StreakCustomizationDisabledError, StreakSettingsInvalidError
from apps.streaks.models import StreakState
from apps.streaks.selectors import StreakConfig, streak_config
from apps.streaks.services.state import _locked_state, _save
from apps.users.models import EndUser


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
        conditions_check(changes["conditions"], metric_definitions(tenant))
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
