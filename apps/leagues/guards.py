"""What deleting a metric or archiving a points system does to leagues (apps/core/guards.py).

A league keeps what it scores by (the foreign keys RESTRICT): deleting its metric is refused,
in words that say which league and what to do. An archived points system pays no more points,
so a league that scores by it would go on with weeks nobody can score in: archiving is refused
while one is not archived itself, unless the caller asks to archive it in the same step (its
history is kept)."""

from collections.abc import Iterable
from functools import partial

from apps.core.guards import Consequence, consequences_of
from apps.leagues.choices import Status
from apps.leagues.configuration import league_update
from apps.leagues.domain import LeagueSettings
from apps.leagues.models import League
from apps.leagues.selectors import league_has_history
from apps.metrics.models import Metric
from apps.points.models import PointsSystem


@consequences_of("metric")
def metric_leagues(metric: Metric) -> Iterable[Consequence]:
    leagues = League.objects.filter(tenant_id=metric.tenant_id, metric=metric).select_related(
        "tenant"
    )
    found = []
    for league in leagues.order_by("name", "pk"):
        then = (
            "its weeks keep the metric they were scored by"
            if league_has_history(league.tenant, league.pk)
            else "delete the league first"
        )
        found.append(Consequence(f"the league {league.name} scores by it ({then})", blocks=True))
    return found


@consequences_of("points system")
def points_system_leagues(system: PointsSystem) -> Iterable[Consequence]:
    leagues = (
        League.objects.filter(tenant_id=system.tenant_id, points_system=system)
        .exclude(status=Status.ARCHIVED)
        .select_related("tenant")
    )
    return [
        Consequence(
            f"the {league.status} league {league.name} scores by it",
            blocks=True,
            resolution=f"the league {league.name} is archived (its history is kept)",
            resolve=partial(_archive, league),
        )
        for league in leagues.order_by("name", "pk")
    ]


def _archive(league: League) -> None:
    league_update(league.tenant, league, LeagueSettings(status=Status.ARCHIVED))
