"""The end-user list's level and streak columns, read for a page of users at once: the users app
lists them (apps/users/admin.py) but cannot read points or streaks, which the pipeline, above
every feature app, can."""

import datetime as dt
from collections.abc import Sequence

from apps.accounts.models import Tenant
from apps.core.wording import counted
from apps.points.selectors import points_config, points_totals_of
from apps.streaks.domain import unit_of
from apps.streaks.selectors import streak_config, streak_views_of, streaks_configured
from apps.users.end_user_page import EndUserColumn
from apps.users.models import EndUser

NO_LEVEL = "none yet"  # below the first level of a system


def levels(tenant: Tenant, users: Sequence[EndUser], now: dt.datetime) -> dict[int, str]:
    """Each user's level in every active points system that has levels, in the systems'
    order; the system's name only when there are several ("XP: Gold · Coins: Silver")."""
    systems = [system for system in points_config(tenant).values() if system.levels]
    if not systems or not users:
        return {}
    found = {
        (total.user_id, total.system_id): total.level.name
        for total in points_totals_of(users, [system.pk for system in systems])
        if total.level is not None
    }
    cells = {}
    for user in users:
        named = [(system.name, found.get((user.pk, system.pk), NO_LEVEL)) for system in systems]
        if len(named) == 1:
            cells[user.pk] = named[0][1]
        else:
            cells[user.pk] = " · ".join(f"{name}: {level}" for name, level in named)
    return cells


def streaks(tenant: Tenant, users: Sequence[EndUser], now: dt.datetime) -> dict[int, str]:
    """Each user's streak as the API shows it now (a missed period already counts as lost)."""
    if not streaks_configured(streak_config(tenant)):
        return {}
    return {
        pk: counted(view.length, unit_of(view.config.frequency))
        for pk, view in streak_views_of(tenant, users, now).items()
    }


COLUMNS = (EndUserColumn("Level", levels), EndUserColumn("Streak", streaks))
