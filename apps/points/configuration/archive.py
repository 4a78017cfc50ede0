"""The archived-system rule: deleting a system archives it, and an archived system is kept
read-only for its ledger. Every write of this package asks `system_writable` first, for the
admin API and the dashboard alike; the reads leave archived systems out
(selectors.points_systems_active), so the admin API cannot even name one."""

from apps.accounts.history import recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.points.choices import SystemStatus
from apps.points.errors import PointsConfigInvalidError
from apps.points.models import PointsSystem
from apps.points.selectors import points_system_archive_impact


def system_writable(system: PointsSystem) -> None:
    """Refuse a change to an archived system or to its levels, boosts and triggers."""
    if system.status == SystemStatus.ARCHIVED:
        raise PointsConfigInvalidError(f"Points system {system.key} is archived")


@recorded("points_system", "points_trigger", "points_boost")
def points_system_archive(
    tenant: Tenant, system: PointsSystem, *, confirm: str = "", deactivate_dependants: bool = False
) -> None:
    """Deleting a system archives it: its ledger is kept (points are often currency) but it
    no longer awards and the application API no longer shows it. Archiving it again changes
    nothing. Users' points leaving the APIs need the system's key as `confirm`; a live
    leaderboard or a league that ranks by it refuses it, unless `deactivate_dependants`
    deactivates them in the same step (points_system_archive_impact)."""
    if system.status == SystemStatus.ARCHIVED:
        return
    points_system_archive_impact(tenant, system).check(
        confirm=confirm, resolve=deactivate_dependants
    )
    system.status = SystemStatus.ARCHIVED
    system.save(update_fields=["status", "updated"])
    tenant_config_changed(tenant)
