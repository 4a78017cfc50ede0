"""What deleting a metric or archiving a points system does to leaderboards
(apps/core/guards.py).

A metric's leaderboards are deleted with it, rankings and all. A points system's are not: an
archived system pays no more points, so a live leaderboard that ranks by it would stay in the
application API, frozen, naming an archived system. Archiving is refused while one does, unless
the caller asks to deactivate it in the same step (inactive: out of the API, rankings kept)."""

from collections.abc import Iterable
from functools import partial

from apps.core.guards import Consequence, consequences_of
from apps.leaderboards.choices import Status
from apps.leaderboards.configuration import leaderboard_update
from apps.leaderboards.domain import LeaderboardSettings
from apps.leaderboards.models import Leaderboard
from apps.leaderboards.selectors import LIVE, board_loss, board_users
from apps.metrics.models import Metric
from apps.points.models import PointsSystem


@consequences_of("metric")
def metric_boards(metric: Metric) -> Iterable[Consequence]:
    boards = Leaderboard.objects.filter(tenant_id=metric.tenant_id, metric=metric)
    users = board_users(boards)
    return [board_loss(board, users.get(board.pk, 0)) for board in boards.order_by("name", "pk")]


@consequences_of("points system")
def points_system_boards(system: PointsSystem) -> Iterable[Consequence]:
    boards = Leaderboard.objects.filter(
        tenant_id=system.tenant_id, points_system=system, status__in=LIVE
    ).select_related("tenant")
    return [
        Consequence(
            f"the {board.status} leaderboard {board.name} ranks by it",
            blocks=True,
            resolution=f"the leaderboard {board.name} is deactivated (its rankings are kept)",
            resolve=partial(_deactivate, board),
        )
        for board in boards.order_by("name", "pk")
    ]


def _deactivate(board: Leaderboard) -> None:
    leaderboard_update(board.tenant, board, LeaderboardSettings(status=Status.INACTIVE))
