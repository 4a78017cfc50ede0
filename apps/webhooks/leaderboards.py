"""leaderboard.started, observed by a job (Trophy's timing, reference §4.7): at 10:00 UTC the
day before the board's UTC start, with the initial (empty) rankings, once per board. A board
made live after that moment (starting later today or tomorrow, or already started) is told at
the job's next run, within ten minutes: its customers learn of it when it goes live rather than
never. leaderboard.finished is written when the lifecycle job moves a board to finished (12 h
after its end date's UTC midnight, when every zone has ended) and delivered at 13:00 UTC that
day, Trophy's timing for it (`webhooks_leaderboard_status`), as for boosts."""

import datetime as dt

from django.db import IntegrityError, transaction

from apps.leaderboards.choices import Status
from apps.leaderboards.models import Leaderboard
from apps.webhooks import payloads
from apps.webhooks.boosts import FINISHED_AT, STARTED_AT
from apps.webhooks.choices import EventType
from apps.webhooks.models import LeaderboardStartNotice
from apps.webhooks.selectors import endpoints_active
from apps.webhooks.services import event_publish


def start_notice_time(start: dt.date) -> dt.datetime:
    """When leaderboard.started is due for a board starting on `start` (a UTC date)."""
    return dt.datetime.combine(start - dt.timedelta(days=1), STARTED_AT, tzinfo=dt.UTC)


def finish_notice_time(end: dt.date) -> dt.datetime:
    """When leaderboard.finished is delivered for a board ending on `end` (a UTC date)."""
    return dt.datetime.combine(end + dt.timedelta(days=1), FINISHED_AT, tzinfo=dt.UTC)


def webhooks_leaderboard_status(board: Leaderboard, status: str, now: dt.datetime) -> None:
    """A board finished, as the lifecycle job observed it: its final top 10 is written now and
    delivered at 13:00 UTC the day after its end (at once when the job ran later than that).
    Going live tells nothing here: leaderboard.started goes out the day before the start."""
    tenant = board.tenant
    if status != Status.FINISHED or board.end is None or not endpoints_active(tenant):
        return
    body = payloads.leaderboard_with_rankings(tenant, board.key, status, now)
    if body is not None:
        due_at = max(now, finish_notice_time(board.end))
        event_publish(tenant, EventType.LEADERBOARD_FINISHED, body, now, due_at=due_at)


def leaderboard_start_notices_send(now: dt.datetime) -> int:
    """Tell every scheduled or live board whose notice time has come and that was not told yet;
    how many were told."""
    # start_notice_time(start) <= now, as a bound on the start date.
    latest_start = (now - dt.timedelta(hours=STARTED_AT.hour)).date() + dt.timedelta(days=1)
    boards = (
        Leaderboard.objects.filter(
            status__in=(Status.SCHEDULED, Status.ACTIVE), start__lte=latest_start
        )
        .exclude(pk__in=LeaderboardStartNotice.objects.values("board_id"))
        .select_related("tenant")
        .order_by("pk")
    )
    return sum(_send_once(board, now) for board in boards)


def _send_once(board: Leaderboard, now: dt.datetime) -> int:
    tenant = board.tenant
    try:
        with transaction.atomic():
            LeaderboardStartNotice.objects.create(board=board, sent_at=now)
            if endpoints_active(tenant):
                body = payloads.leaderboard_with_rankings(tenant, board.key, Status.ACTIVE, now)
                if body is not None:
                    event_publish(tenant, EventType.LEADERBOARD_STARTED, body, now)
    except IntegrityError:
        return 0  # told already (by a concurrent run)
    return 1
