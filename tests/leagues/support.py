"""What the league tests share."""

from typing import Any

from apps.accounts.models import Tenant
from apps.leagues.choices import ScoreBy, Status
from apps.leagues.configuration import league_create
from apps.leagues.domain import LeagueSettings
from apps.leagues.models import League
from apps.metrics.models import Metric


def metric_league(tenant: Tenant, metric: Metric, **settings: Any) -> League:
    """An active league `weekly` scoring `metric`, with the ten default tiers unless
    `settings` say otherwise."""
    values: dict[str, Any] = {
        "name": "Weekly",
        "key": "weekly",
        "score_by": ScoreBy.METRIC,
        "metric_id": str(metric.public_id),
        "status": Status.ACTIVE,
        **settings,
    }
    return league_create(tenant, LeagueSettings(**values))
