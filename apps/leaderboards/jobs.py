"""Leaderboard jobs: lifecycle (scheduled -> active -> finished, ~12 h after the UTC end so
every time zone completes), daily rank snapshots, and streak boards following streaks that
broke without a new event. All idempotent: a repeated run rewrites the same values."""

import datetime as dt
from collections.abc import Callable
from decimal import Decimal

from django.db import transaction
from django.db.models import Q

from apps.accounts import history
from apps.accounts.services import tenant_config_changed
from apps.core.periodic import periodic_job
from apps.leaderboards import domain, ranks
from apps.leaderboards.choices import RankBy, Status
from apps.leaderboards.models import Leaderboard, LeaderboardEntry
from apps.leaderboards.selectors import board_definitions
from apps.leaderboards.sql import snapshot_run
from apps.streaks.selectors import streak_state_get, streak_view

# Told of each status change a run of the lifecycle job makes, in the change's transaction
# (apps.pipeline.jobs registers the job and hands the changes to webhooks).
React = Callable[[Leaderboard, str], None]


def leaderboards_lifecycle(now: dt.datetime, react: React | None = None) -> int:
    changed = 0
    for board in Leaderboard.objects.filter(
        Q(status=Status.SCHEDULED, start__lte=now.date())
        | Q(status=Status.ACTIVE, end__isnull=False)
    ).select_related("tenant"):
        if board.status == Status.SCHEDULED:
            new = Status.ACTIVE
        elif domain.finished(board.end, now):
            new = Status.FINISHED
        else:
            continue
        # Conditional update: two schedulers never both move it.
        # The schedule's move enters the change history as the server's (source "schedule").
        with history.how("schedule"), history.recording(board.tenant, ("leaderboard",)):
            if Leaderboard.objects.filter(pk=board.pk, status=board.status).update(status=new):
                tenant_config_changed(board.tenant)
                changed += 1
                if react is not None:
                    react(board, new)
    return changed


@periodic_job("leaderboards-snapshots", every=dt.timedelta(hours=1))
def leaderboards_snapshots(now: dt.datetime) -> int:
    """Each participant's rank and value for today (UTC date), per active board's current
    run; rewritten every hour, so the last run of the day is the day's snapshot."""
    written = 0
    today = now.date()
    for board in Leaderboard.objects.filter(status=Status.ACTIVE).select_related("tenant"):
        definition = board_definitions(board.tenant).get(board.key)
        run = definition.run_for(today) if definition else None
        if run is None:
            continue
        # One statement per board, whatever its size (a million participants are a million
        # snapshot rows, not a million model instances).
        with transaction.atomic():
            written += snapshot_run(board.pk, run, today)
        # Once a day, a fresh copy of the ranks in Redis, should a lost change have left one
        # stale (a set is built beside the old one: twice its memory for a moment).
        if now.hour == 0:
            ranks_rebuild_run(board.pk, run)
    return written


def ranks_rebuild_run(board_pk: int, run: dt.date) -> int:
    """Rebuild the Redis sets of every group of a run from PostgreSQL; how many were."""
    groups = (
        LeaderboardEntry.objects.filter(leaderboard_id=board_pk, run_start=run)
        .values_list("group", flat=True)
        .distinct()
    )
    return sum(ranks.rebuild(ranks.RunKey(board_pk, run, group), force=True) for group in groups)


def ranks_rebuild_active(today: dt.date) -> int:
    """Rebuild the sets of every active board's current run (`manage.py
    leaderboard_ranks_rebuild`: after restoring the database, or to warm a new Redis)."""
    rebuilt = 0
    for board in Leaderboard.objects.filter(status=Status.ACTIVE).select_related("tenant"):
        definition = board_definitions(board.tenant).get(board.key)
        run = definition.run_for(today) if definition else None
        if run is not None:
            rebuilt += ranks_rebuild_run(board.pk, run)
    return rebuilt


@periodic_job("leaderboards-streaks", every=dt.timedelta(minutes=10))
def leaderboards_streaks_follow(now: dt.datetime) -> int:
    """Streak boards show current streak lengths: a streak lost without a new event (a
    missed day) must drop on the board too."""
    updated = 0
    for board in Leaderboard.objects.filter(
        status=Status.ACTIVE, rank_by=RankBy.STREAK
    ).select_related("tenant"):
        for entry in LeaderboardEntry.objects.filter(leaderboard=board).select_related("user"):
            view = streak_view(board.tenant, entry.user, streak_state_get(entry.user), now)
            if Decimal(view.length) != entry.value:
                with transaction.atomic():
                    changed = LeaderboardEntry.objects.filter(
                        pk=entry.pk, value=entry.value
                    ).update(value=Decimal(view.length), reached_at=now)
                    if changed:
                        run = ranks.RunKey(board.pk, entry.run_start, entry.group)
                        ranks.change(run, [(entry.user_id, (Decimal(view.length), now))])
                updated += changed
    return updated
