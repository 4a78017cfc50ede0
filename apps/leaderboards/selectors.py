"""Reads of leaderboards: configuration snapshot, ranks, rankings pages, history."""

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, QuerySet

from apps.accounts.models import Tenant
from apps.core.config_cache import tenant_cached
from apps.leaderboards import domain, ranks
from apps.leaderboards.choices import RankBy
from apps.leaderboards.models import Leaderboard, LeaderboardEntry, LeaderboardSnapshot
from apps.metrics.models import MetricEvent
from apps.points.models import PointsAward
from apps.users.domain import attributes_match, zone
from apps.users.models import EndUser
from apps.users.selectors import attribute_definitions, attribute_filters_resolve, attributes_q


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


def run_entries(board_pk: int, run_start: dt.date, group: str) -> QuerySet[LeaderboardEntry]:
    return LeaderboardEntry.objects.filter(
        leaderboard_id=board_pk, run_start=run_start, group=group
    )


def rank_of(entry: LeaderboardEntry) -> int:
    run = ranks.RunKey(entry.leaderboard_id, entry.run_start, entry.group)
    return ranks.rank(run, entry.user_id, (entry.value, entry.reached_at))


def ordered(board_pk: int, run_start: dt.date, group: str) -> QuerySet[LeaderboardEntry]:
    return run_entries(board_pk, run_start, group).order_by("-value", "reached_at", "user_id")


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
    if offset >= DEEP_PAGE:
        members = ranks.page(ranks.RunKey(board.pk, run, group), offset, limit)
        if members is not None:
            return _rankings_from_members(members, offset)
    # Three columns, not two model instances per row: at 100 rows the instances cost more than
    # the query.
    rows = ordered(board.pk, run, group).values_list("user__external_id", "user__name", "value")
    return [
        {"userId": external_id, "userName": name, "rank": offset + i + 1, "value": int(value)}
        for i, (external_id, name, value) in enumerate(rows[offset : offset + limit])
    ]


# From this offset on, a page comes from Redis when it holds the ranks: PostgreSQL would walk
# every entry before the page.
DEEP_PAGE = 1000


def _rankings_from_members(members: list[str], offset: int) -> list[dict[str, Any]]:
    users = {
        pk: (external_id, name)
        for pk, external_id, name in EndUser.objects.filter(
            pk__in=[ranks.member_user(m) for m in members]
        ).values_list("pk", "external_id", "name")
    }
    return [
        {
            "userId": users[user][0],
            "userName": users[user][1],
            "rank": offset + i + 1,
            "value": int(ranks.member_value(m)),
        }
        for i, m in enumerate(members)
        if (user := ranks.member_user(m)) in users
    ]


# --- dashboard reads: runs, groups and why a ranking is empty --------------------------------


def run_current(board: BoardDef, today: dt.date) -> dt.date:
    """The run the API shows when no `run` is asked for: the one holding today (UTC date), a
    finished board's last run, the board's start before it begins."""
    day = today if board.end is None or today <= board.end else board.end
    return board.run_for(day) or board.start


def board_runs(board: BoardDef) -> list[dt.date]:
    """Starts of the runs that kept entries or daily snapshots, newest first."""
    entries = LeaderboardEntry.objects.filter(leaderboard_id=board.pk)
    snapshots = LeaderboardSnapshot.objects.filter(leaderboard_id=board.pk)
    starts = set(entries.values_list("run_start", flat=True).distinct())
    starts |= set(snapshots.values_list("run_start", flat=True).distinct())
    return sorted(starts, reverse=True)


def run_groups(board: BoardDef, run: dt.date) -> dict[str, int]:
    """The breakdown groups of a run that have entries ("" without breakdown), each with the
    number of participants the API ranks (a lowered maxParticipants shows only the top)."""
    rows = (
        LeaderboardEntry.objects.filter(leaderboard_id=board.pk, run_start=run)
        .values("group")
        .annotate(count=Count("pk"))
        .order_by("group")
    )
    return {row["group"]: min(row["count"], board.max_participants) for row in rows}


@dataclass(frozen=True)
class RankedEntry:
    rank: int
    entry: LeaderboardEntry


def rankings_page_entries(
    board: BoardDef, run: dt.date, group: str, offset: int, limit: int
) -> list[RankedEntry]:
    """rankings_page with the entries behind it (exact values, user rows, when each value was
    reached) for the dashboard: ranks and order are the API's, computed by rankings_page."""
    page = rankings_page(board, run, group, offset, limit)
    entries = {
        entry.user.external_id: entry
        for entry in run_entries(board.pk, run, group)
        .filter(user__external_id__in=[row["userId"] for row in page])
        .select_related("user")
    }
    # An entry displaced between the two reads is left out rather than shown without a value.
    return [
        RankedEntry(row["rank"], entries[row["userId"]]) for row in page if row["userId"] in entries
    ]


# How many of the latest events (or awards) since a board went live the dashboard examines
# one by one to tell why none counted: enough to see a pattern, few enough for a page view.
RECENT_ACTIVITY = 200


@dataclass(frozen=True)
class BoardActivity:
    """What could have entered end-users in one run of a board: the evidence behind the
    dashboard's explanation of an empty ranking."""

    in_run: bool  # events (points awards on points boards) dated inside the run
    since_live: bool  # ... of which some came after the board went live
    users: int  # end-users of the tenant
    eligible: int  # ... matching the participation filters, with every breakdown attribute
    recent: int  # the latest events since the board went live, examined one by one
    recent_taking_part: int  # ... by an end-user who takes part
    recent_in_window: int  # ... of those, inside the daily window in the user's time


def _activity_rows(tenant: Tenant, board: BoardDef, run: dt.date) -> tuple[QuerySet[Any], str]:
    """The rows that feed the board within the run's dates, and their time field."""
    end = board.run_end(run)
    dates: dict[str, Any] = {"local_date__gte": run}
    if end is not None:
        dates["local_date__lte"] = end
    if board.rank_by == RankBy.POINTS:
        awards = PointsAward.objects.filter(tenant=tenant, **dates, system_id=board.points_pk or 0)
        return awards, "created"
    if board.rank_by == RankBy.METRIC:
        events = MetricEvent.objects.filter(tenant=tenant, **dates, metric_id=board.metric_pk or 0)
        return events, "occurred_at"
    # A streak grows on any event that meets the streak conditions.
    return MetricEvent.objects.filter(tenant=tenant, **dates), "occurred_at"


def board_activity(
    tenant: Tenant, board: BoardDef, run: dt.date, live_since: dt.datetime
) -> BoardActivity:
    """Existence checks and a bounded sample rather than counts: this runs on a page view,
    over the event table."""
    rows, moment = _activity_rows(tenant, board, run)
    in_run = rows.exists()
    since = rows.filter(**{f"{moment}__gte": live_since})
    recent = (
        list(since.select_related("user").order_by(f"-{moment}")[:RECENT_ACTIVITY])
        if in_run
        else []
    )
    # The pipeline's own tests (leaderboards_apply_event), applied to each sampled row.
    taking_part = [
        row
        for row in recent
        if attributes_match(board.user_filters, row.user.attributes)
        and group_of(board, row.user.attributes) is not None
    ]
    in_window = [
        row
        for row in taking_part
        if domain.in_window(
            getattr(row, moment).astimezone(zone(row.user.tz)).time(),
            board.start_time,
            board.end_time,
        )
    ]
    users = EndUser.objects.filter(tenant=tenant)
    eligible = users.filter(attributes_q(board.user_filters or {}))
    for key in board.breakdown_keys or ():
        eligible = eligible.filter(attributes__has_key=key)
    # A filter or breakdown attribute that names a deleted attribute matches no one.
    unresolved = board.user_filters is None or board.breakdown_keys is None
    return BoardActivity(
        in_run=in_run,
        since_live=bool(recent),
        users=users.count(),
        eligible=0 if unresolved else eligible.count(),
        recent=len(recent),
        recent_taking_part=len(taking_part),
        recent_in_window=len(in_window),
    )


def board_record_counts(boards: list[Leaderboard]) -> dict[str, int]:
    """What deleting boards removes with them: entries, daily snapshots and the runs they
    belong to (a run is a board's start date plus its interval; it has no row of its own)."""
    entries = LeaderboardEntry.objects.filter(leaderboard__in=boards)
    snapshots = LeaderboardSnapshot.objects.filter(leaderboard__in=boards)
    runs = set(entries.values_list("leaderboard_id", "run_start").distinct())
    runs |= set(snapshots.values_list("leaderboard_id", "run_start").distinct())
    return {"entries": entries.count(), "snapshots": snapshots.count(), "runs": len(runs)}
