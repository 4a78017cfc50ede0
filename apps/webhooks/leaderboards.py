"""leaderboard.started, observed by a job (Trophy's timing, reference §4.7): at 10:00 UTC the
day before the board's UTC start, with the initial (empty) rankings, once per board. A board
made live after that moment (starting later today or tomorrow, or already started) is told at
the job's next run, within ten minutes: its customers learn of it when it goes live rather than
never. leaderboard.finished goes out with the lifecycle job's move to finished
(`webhooks_leaderboard_status`)."""

import datetime as dt

from django.db import IntegrityError, transaction

from apps.leaderboards.choices import Status
from apps.leaderboards.models import Leaderboard
from apps.webhooks import payloads
from apps.webhooks.boosts import STARTED_AT
from apps.webhooks.choices import EventType
from apps.webhooks.models import LeaderboardStartNotice
from apps.webhooks.selectors import endpoints_active
from apps.webhooks.services import event_publish


def start_notice_time(start: dt.date) -> dt.datetime:
    """When leaderboard.started is due for a board starting on `start` (a UTC date)."""
    return dt.datetime.combine(start - dt.timedelta(days=1), STARTED_AT, tzinfo=dt.UTC)


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
