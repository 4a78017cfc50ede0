"""Delivering webhooks at least once.

A delivery is claimed with a conditional update, sent with its signatures, and its outcome
recorded with one more: a worker that dies between sending and recording leaves a claim that
the recovery job releases, and the delivery goes out again with the same `webhook-id` (a
duplicate the receiver can recognize), never lost. Retries follow a schedule kept in the
database, not Celery countdowns.
"""

import datetime as dt
import logging
import uuid
from collections.abc import Sequence

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from apps.core import retries
from apps.core.dispatch import due_rows_enqueue
from apps.core.errors import ValidationError
from apps.webhooks.choices import DeliveryStatus, EndpointStatus
from apps.webhooks.configuration import webhook_endpoint_disable
from apps.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from apps.webhooks.services import endpoint_secrets
from apps.webhooks.signing import signature_headers
from apps.webhooks.transport import DeliveryResult, deliver

logger = logging.getLogger("gamify.webhooks")

# Trophy retries 3 times from 1 minute; gamify goes on for about a day before giving up.
RETRY_DELAYS = (*retries.BACKOFF, dt.timedelta(hours=12))
DISABLE_AFTER = dt.timedelta(days=5)  # an endpoint failing that long is disabled
STUCK_AFTER = dt.timedelta(minutes=10)  # far beyond the 60-second timeout
REENQUEUE_AFTER = dt.timedelta(minutes=5)
SEND_CHUNK = 20


def retry_at(attempts: int, now: dt.datetime, retry_after: float | None) -> dt.datetime | None:
    """After `attempts` failed attempts: when to try again (never before Retry-After), or None
    when the schedule is spent."""
    return retries.retry_at(RETRY_DELAYS, attempts, now, retry_after)


def deliveries_due_claim(now: dt.datetime, limit: int = 2000) -> list[list[int]]:
    """Mark due deliveries as handed to workers; chunks of ids for send tasks."""
    rows = due_rows_enqueue(
        WebhookDelivery,
        Q(status=DeliveryStatus.PENDING, next_attempt_at__lte=now),
        now,
        reenqueue_after=REENQUEUE_AFTER,
        order_by=("next_attempt_at", "id"),
        limit=limit,
    )
    ids = [pk for (pk,) in rows]
    return [ids[i : i + SEND_CHUNK] for i in range(0, len(ids), SEND_CHUNK)]


def deliveries_stuck_release(now: dt.datetime) -> int:
    return WebhookDelivery.objects.filter(
        status=DeliveryStatus.DELIVERING, claimed_at__lt=now - STUCK_AFTER
    ).update(status=DeliveryStatus.PENDING, next_attempt_at=now, enqueued_at=None, claim=None)


def _claim(ids: Sequence[int], now: dt.datetime) -> list[WebhookDelivery]:
    token = uuid.uuid4()
    WebhookDelivery.objects.filter(
        pk__in=list(ids), status=DeliveryStatus.PENDING, next_attempt_at__lte=now
    ).update(
        status=DeliveryStatus.DELIVERING,
        claimed_at=now,
        claim=token,
        attempts=F("attempts") + 1,
    )
    return list(
        WebhookDelivery.objects.filter(claim=token, status=DeliveryStatus.DELIVERING)
        .select_related("event", "endpoint", "tenant")
        .order_by("next_attempt_at", "pk")
    )


def deliveries_send(ids: Sequence[int], now: dt.datetime | None = None) -> dict[str, int]:
    counts: dict[str, int] = {}
    for delivery in _claim(ids, now or timezone.now()):
        status = _send_one(delivery, now or timezone.now())
        counts[status] = counts.get(status, 0) + 1
    return counts


def _send_one(delivery: WebhookDelivery, now: dt.datetime) -> str:
    endpoint = delivery.endpoint
    if endpoint.status != EndpointStatus.ACTIVE:
        return _finish(delivery, DeliveryStatus.FAILED, now, error="the endpoint is disabled")
    body = delivery.event.body.encode()
    headers = signature_headers(
        endpoint_secrets(endpoint, now),
        str(delivery.public_id),
        int(now.timestamp()),
        body,
        delivery.tenant.customer_id,
    )
    result = deliver(
        endpoint.url,
        body,
        headers,
        timeout=float(settings.WEBHOOK_TIMEOUT),
        allow_http=settings.WEBHOOK_ALLOW_HTTP,
        allowed_networks=settings.WEBHOOK_ALLOWED_NETWORKS,
    )
    WebhookAttempt.objects.create(
        delivery=delivery,
        created=now,
        status_code=result.status_code,
        duration_ms=result.duration_ms,
        response_excerpt=result.response_excerpt,
        error=result.error,
    )
    return _outcome(delivery, endpoint, result, now)


def _outcome(
    delivery: WebhookDelivery, endpoint: WebhookEndpoint, result: DeliveryResult, now: dt.datetime
) -> str:
    code = result.status_code
    if code is not None and 200 <= code < 300:
        if endpoint.failing_since is not None:
            WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failing_since=None)
        return _finish(delivery, DeliveryStatus.SUCCEEDED, now, code=code)
    error = result.error or f"HTTP {code}"
    if code == 410:
        webhook_endpoint_disable(endpoint, "The endpoint answered 410 Gone")
        return _finish(delivery, DeliveryStatus.FAILED, now, code=code, error=error)
    failing_since = endpoint.failing_since or now
    if endpoint.failing_since is None:
        WebhookEndpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=True).update(
            failing_since=now
        )
    if now - failing_since >= DISABLE_AFTER:
        webhook_endpoint_disable(
            endpoint, f"Every delivery failed for {DISABLE_AFTER.days} days (last: {error})"
        )
    retry = retry_at(delivery.attempts, now, result.retry_after)
    if retry is None:
        return _finish(delivery, DeliveryStatus.FAILED, now, code=code, error=error)
    return _finish(delivery, DeliveryStatus.PENDING, now, code=code, error=error, retry=retry)


def _finish(
    delivery: WebhookDelivery,
    status: str,
    now: dt.datetime,
    *,
    code: int | None = None,
    error: str = "",
    retry: dt.datetime | None = None,
) -> str:
    fields: dict[str, object] = {
        "status": status,
        "claim": None,
        "claimed_at": None,
        "last_status_code": code,
        "last_error": error[:2000],
    }
    if status == DeliveryStatus.SUCCEEDED:
        fields["delivered_at"] = now
    if retry is not None:
        fields.update(next_attempt_at=retry, enqueued_at=None)
    WebhookDelivery.objects.filter(
        pk=delivery.pk, status=DeliveryStatus.DELIVERING, claim=delivery.claim
    ).update(**fields)
    if status == DeliveryStatus.FAILED:
        logger.warning("webhook delivery=%s failed: %s", delivery.public_id, error)
    return status


def _redeliverable(endpoint: WebhookEndpoint) -> None:
    # A disabled endpoint is sent nothing: its redeliveries would fail at once, unsent.
    if endpoint.status != EndpointStatus.ACTIVE:
        raise ValidationError("The endpoint is disabled: enable it before redelivering")


def delivery_redeliver(delivery: WebhookDelivery, now: dt.datetime | None = None) -> None:
    """Send a delivery again, with its webhook-id (receivers that saw it can tell)."""
    _redeliverable(delivery.endpoint)
    WebhookDelivery.objects.filter(pk=delivery.pk).exclude(status=DeliveryStatus.DELIVERING).update(
        status=DeliveryStatus.PENDING, next_attempt_at=now or timezone.now(), enqueued_at=None
    )


def deliveries_redeliver_failed(endpoint: WebhookEndpoint, since: dt.datetime) -> int:
    """Every failed delivery of the endpoint created since `since` goes out again."""
    _redeliverable(endpoint)
    return WebhookDelivery.objects.filter(
        endpoint=endpoint, status=DeliveryStatus.FAILED, created__gte=since
    ).update(status=DeliveryStatus.PENDING, next_attempt_at=timezone.now(), enqueued_at=None)
