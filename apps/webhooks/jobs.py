"""Periodic webhook jobs: due deliveries and retries, stuck claims, and the log's retention."""

import datetime as dt

from django.conf import settings

from apps.core.periodic import periodic_job
from apps.webhooks.boosts import boost_notices_send
from apps.webhooks.delivery import deliveries_stuck_release
from apps.webhooks.leaderboards import leaderboard_start_notices_send
from apps.webhooks.models import WebhookEvent, WebhookThrottle
from apps.webhooks.tasks import webhooks_dispatch_task


@periodic_job("webhooks-dispatch", every=dt.timedelta(minutes=1))
def webhooks_dispatch(now: dt.datetime) -> int:
    """Retries whose time came, throttled events at their window's end, and anything whose
    after-commit enqueue was lost."""
    return webhooks_dispatch_task()


@periodic_job("webhooks-recover", every=dt.timedelta(minutes=5))
def webhooks_recover(now: dt.datetime) -> int:
    return deliveries_stuck_release(now)


@periodic_job("webhooks-purge", every=dt.timedelta(hours=6))
def webhooks_purge(now: dt.datetime) -> int:
    """Events (with their deliveries and attempts) are kept WEBHOOK_LOG_RETENTION_DAYS."""
    cutoff = now - dt.timedelta(days=settings.WEBHOOK_LOG_RETENTION_DAYS)
    WebhookThrottle.objects.filter(window_ends_at__lt=now - dt.timedelta(days=1)).delete()
    deleted, _ = WebhookEvent.objects.filter(created__lt=cutoff).delete()
    return deleted


@periodic_job("webhooks-boosts", every=dt.timedelta(minutes=10))
def webhooks_boosts(now: dt.datetime) -> int:
    """points.boost_started / boost_finished when their time comes."""
    return boost_notices_send(now)


@periodic_job("webhooks-leaderboards", every=dt.timedelta(minutes=10))
def webhooks_leaderboards(now: dt.datetime) -> int:
    """leaderboard.started at 10:00 UTC the day before a board starts."""
    return leaderboard_start_notices_send(now)
