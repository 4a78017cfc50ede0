"""What the neighbours and friends tests share: boards written straight into the tables, with
ties of every kind, so that each rank is known before any route answers."""

import datetime as dt
import random
from decimal import Decimal
from typing import Any

from apps.accounts.models import Tenant
from apps.leaderboards.models import Leaderboard, LeaderboardEntry
from apps.points.models import PointsSystem
from apps.users.models import EndUser
from tests.factories import MetricFactory, bump

RUN = dt.date(2026, 3, 1)
AT = dt.datetime(2026, 3, 1, 9, tzinfo=dt.UTC)


def later(seconds: float) -> dt.datetime:
    return AT + dt.timedelta(seconds=seconds)


def board_of(tenant: Tenant, key: str = "top", **fields: Any) -> Leaderboard:
    values: dict[str, Any] = {
        "name": key.title(),
        "rank_by": "metric",
        "status": "active",
        "start": RUN,
        **fields,
    }
    if values["rank_by"] == "metric" and "metric" not in values:
        values["metric"] = MetricFactory(tenant=tenant, key=f"{key}-metric")
    if values["rank_by"] == "points":
        values["points_system"] = PointsSystem.objects.create(
            tenant=tenant, key=f"{key}-points", name="XP"
        )
    board = Leaderboard.objects.create(tenant=tenant, key=key, **values)
    bump(tenant)
    return board


def users(tenant: Tenant, count: int, prefix: str = "u") -> list[EndUser]:
    return [
        EndUser.objects.create(tenant=tenant, external_id=f"{prefix}{n}", name=f"Name {n}")
        for n in range(count)
    ]


def tied_places(count: int, seed: int = 7) -> list[tuple[Decimal, dt.datetime]]:
    """(value, reached_at) for `count` entries: few values and few moments, so that many tie on
    the value, and some on the moment too (the user id decides)."""
    rng = random.Random(seed)
    return [
        (Decimal(rng.choice([0, 5, 5, 10, 10, 10, 25, -3])), later(rng.choice([0, 0, 1, 7])))
        for _ in range(count)
    ]


def fill(
    board: Leaderboard,
    who: list[EndUser],
    places: list[tuple[Decimal, dt.datetime]],
    *,
    run: dt.date = RUN,
    group: str = "",
) -> None:
    rows = list(zip(who, places, strict=True))
    random.Random(3).shuffle(rows)  # no answer from insertion order
    LeaderboardEntry.objects.bulk_create(
        LeaderboardEntry(
            leaderboard=board, run_start=run, group=group, user=u, value=v, reached_at=at
        )
        for u, (v, at) in rows
    )
