"""Reads behind the dashboard's leaderboard pages: a board's runs and groups, a page of
rankings with the entries behind it, the evidence for why a ranking is empty, and what deleting
boards removes. Ranks and order are those of the application API (selectors.rankings_page)."""

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, QuerySet

from apps.accounts.models import Tenant
from apps.leaderboards import domain
from apps.leaderboards.choices import RankBy
from apps.leaderboards.domain import EXCLUDED_PREFIX
from apps.leaderboards.models import Leaderboard, LeaderboardEntry, LeaderboardSnapshot
from apps.leaderboards.selectors import BoardDef, group_of, rankings_page, run_entries
from apps.metrics.models import MetricEvent
from apps.points.models import PointsAward
from apps.users.domain import attributes_match, zone
from apps.users.models import EndUser
from apps.users.selectors import attributes_q


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
        .exclude(group__startswith=EXCLUDED_PREFIX)
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
