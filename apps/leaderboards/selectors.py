"""Reads of leaderboards: configuration snapshot, ranks, rankings pages, history."""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import Q, QuerySet

from apps.accounts.models import Tenant
from apps.core.config_cache import tenant_cached
from apps.leaderboards import domain
from apps.leaderboards.models import Leaderboard, LeaderboardEntry, LeaderboardSnapshot
from apps.users.selectors import attribute_definitions, attribute_filters_resolve


@dataclass(frozen=True)
class BoardDef:
    pk: int
    public_id: str
    key: str
    name: str
    description: str | None
    rank_by: str
    status: str
    metric_pk: int | None
    metric_key: str | None
    metric_name: str | None
    points_pk: int | None
    points_key: str | None
    points_name: str | None
    max_participants: int
    start: dt.date
    end: dt.date | None
    start_time: dt.time | None
    end_time: dt.time | None
    run_unit: str | None
    run_interval: int | None
    breakdown_keys: tuple[str, ...] | None  # None: a breakdown attribute was deleted
    user_filters: dict[str, str] | None

    def run_for(self, day: dt.date) -> dt.date | None:
        if self.end is not None and day > self.end:
            return None
        return domain.run_for(day, self.start, self.run_unit, self.run_interval)

    def run_end(self, run_start: dt.date) -> dt.date | None:
        return domain.run_end(run_start, self.start, self.run_unit, self.run_interval, self.end)


def board_definitions(tenant: Tenant) -> dict[str, BoardDef]:
    def load() -> dict[str, BoardDef]:
        definitions = attribute_definitions(tenant)
        keys_by_id = {pid: key for (_, key), pid in definitions.ids_by_type_key.items()}
        boards = {}
        for b in (
            Leaderboard.objects.filter(tenant=tenant)
            .select_related("metric", "points_system")
            .order_by("created", "id")
        ):
            breakdown = tuple(keys_by_id.get(aid) for aid in b.breakdown_attributes)
            boards[b.key] = BoardDef(
                pk=b.pk,
                public_id=str(b.public_id),
                key=b.key,
                name=b.name,
                description=b.description,
                rank_by=b.rank_by,
                status=b.status,
                metric_pk=b.metric_id,
                metric_key=b.metric.key if b.metric else None,
                metric_name=b.metric.name if b.metric else None,
                points_pk=b.points_system_id,
                points_key=b.points_system.key if b.points_system else None,
                points_name=b.points_system.name if b.points_system else None,
                max_participants=b.max_participants,
                start=b.start,
                end=b.end,
                start_time=b.start_time,
                end_time=b.end_time,
                run_unit=b.run_unit,
                run_interval=b.run_interval,
                breakdown_keys=None if None in breakdown else tuple(k for k in breakdown if k),
                user_filters=attribute_filters_resolve(tenant, b.user_attributes),
            )
        return boards

    return tenant_cached(tenant, "leaderboards", load)


def group_of(board: BoardDef, attributes: dict[str, str]) -> str | None:
    """The breakdown group of a user ("" without breakdown); None when the user lacks one of
    the breakdown attributes (they do not take part)."""
    if not board.breakdown_keys:
        return "" if board.breakdown_keys is not None else None
    values = [attributes.get(key) for key in board.breakdown_keys]
    if any(v is None for v in values):
        return None
    return "|".join(f"{k}={v}" for k, v in zip(board.breakdown_keys, values, strict=True))


def _ahead_of(entry: LeaderboardEntry) -> Q:
    """Entries ranked before `entry`: a higher value, or the same value reached earlier
    (then the lower user id): ranks are 1..n without gaps or ties."""
    return (
        Q(value__gt=entry.value)
        | Q(value=entry.value, reached_at__lt=entry.reached_at)
        | Q(value=entry.value, reached_at=entry.reached_at, user_id__lt=entry.user_id)
    )


def run_entries(board_pk: int, run_start: dt.date, group: str) -> QuerySet[LeaderboardEntry]:
    return LeaderboardEntry.objects.filter(
        leaderboard_id=board_pk, run_start=run_start, group=group
    )


def rank_of(entry: LeaderboardEntry) -> int:
    return (
        run_entries(entry.leaderboard_id, entry.run_start, entry.group)
        .filter(_ahead_of(entry))
        .count()
        + 1
    )


def ordered(board_pk: int, run_start: dt.date, group: str) -> QuerySet[LeaderboardEntry]:
    return run_entries(board_pk, run_start, group).order_by("-value", "reached_at", "user_id")


def threshold(board: BoardDef, run_start: dt.date, group: str) -> Decimal:
    """The value a newcomer must exceed to enter: the lowest value when the board is full,
    else 0 (anyone who has a value enters)."""
    entries = run_entries(board.pk, run_start, group)
    if entries.count() < board.max_participants:
        return Decimal(0)
    lowest = entries.order_by("value", "-reached_at").values_list("value", flat=True).first()
    return lowest if lowest is not None else Decimal(0)


def history(
    board_pk: int, run_start: dt.date, user_pk: int, days: int
) -> list[LeaderboardSnapshot]:
    return list(
        LeaderboardSnapshot.objects.filter(
            leaderboard_id=board_pk, run_start=run_start, user_id=user_pk
        ).order_by("-date")[:days]
    )


def rankings_page(
    board: BoardDef, run: dt.date, group: str, offset: int, limit: int
) -> list[dict[str, Any]]:
    """A page of a run's rankings, best first, as the API renders them. A lowered
    maxParticipants shows only the top of the entries kept before."""
    limit = max(0, min(limit, board.max_participants - offset))
    rows = list(ordered(board.pk, run, group).select_related("user")[offset : offset + limit])
    return [
        {
            "userId": e.user.external_id,
            "userName": e.user.name,
            "rank": offset + i + 1,
            "value": int(e.value),
        }
        for i, e in enumerate(rows)
    ]
