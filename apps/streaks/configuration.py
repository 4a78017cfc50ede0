"""Writes of streak configuration: the tenant's settings (PATCH /streaks/settings and the
settings page). Every change bumps the tenant's configuration version."""

from typing import Any

from django.utils import timezone

from apps.accounts.history import recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.declarations import given_values
from apps.metrics.selectors import metric_definitions
from apps.streaks import domain
from apps.streaks.domain import TenantStreakSettings
from apps.streaks.errors import StreakSettingsInvalidError
from apps.streaks.followers import streaks_restarted
from apps.streaks.models import StreakCondition, StreakSettings
from apps.streaks.selectors import streaking_users


@recorded("streak_settings")
def streak_settings_update(tenant: Tenant, changes: TenantStreakSettings) -> None:
    """PATCH /streaks/settings and the settings page: the given settings change, the others
    are kept (the first update makes the tenant's settings, with the model's defaults).
    Switching away from daily clears the days off. A change of frequency restarts every streak
    (selectors.state_of): the apps that show streak lengths (streak leaderboards) follow in this
    transaction (apps/streaks/followers.py)."""
    values = given_values(changes)
    definitions = metric_definitions(tenant)
    conditions_check(values.get("conditions", []), definitions)  # before anything is written
    settings, _ = StreakSettings.objects.get_or_create(tenant=tenant)
    old_frequency = settings.frequency
    new_frequency = values.get("frequency", settings.frequency)
    new_days_off = values.get(
        "days_off", settings.days_off if new_frequency == domain.DAILY else []
    )
    if new_frequency != domain.DAILY:
        if values.get("days_off"):
            raise StreakSettingsInvalidError(
                "{days_off} is only allowed with daily frequency",
                fields="days_off",
                code="not_allowed_for_kind",
            )
        new_days_off = []  # switching away from daily clears days off (reference §4.3)
    if "conditions" in values:
        customizable = values.get("customization_enabled", settings.customization_enabled)
        had = StreakCondition.objects.filter(tenant=tenant).exists()
        problem = had and domain.conditionless_problem(
            len(values["conditions"]), customizable, streaking_users(tenant)
        )
        if problem:
            raise problem
    settings.frequency = new_frequency
    settings.days_off = sorted(set(new_days_off))
    if "evaluation_mode" in values:
        settings.evaluation_mode = values["evaluation_mode"]
    if "customization_enabled" in values:
        settings.customization_enabled = values["customization_enabled"]
    if "freezes" in values:
        freezes = values["freezes"]
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
    if "conditions" in values:
        StreakCondition.objects.filter(tenant=tenant).delete()
        StreakCondition.objects.bulk_create(
            [
                StreakCondition(tenant=tenant, metric_id=definitions[key].pk, threshold=threshold)
                for key, threshold in values["conditions"]
            ]
        )
    tenant_config_changed(tenant)
    if new_frequency != old_frequency:
        streaks_restarted(tenant, timezone.now())


def conditions_check(conditions: list[tuple[str, Any]], definitions: dict[str, Any]) -> None:
    """Refuses conditions on metrics the tenant does not have (settings and preferences)."""
    unknown = sorted(key for key, _ in conditions if key not in definitions)
    if unknown:
        raise StreakSettingsInvalidError(
            f"{{conditions}}: unknown metric keys: {', '.join(unknown)}",
            fields="conditions",
            code="not_found",
        )
