import uuid

from django.db import models
from django.db.models import Q

from apps.accounts.models import Tenant
from apps.core.models import TimestampedModel
from apps.webhooks.choices import DeliveryStatus, EndpointStatus


class WebhookEndpoint(TimestampedModel):
    """Where a tenant receives webhooks. The signing secret is stored encrypted
    (apps.core.secrets); after a rotation the previous secret signs too until it expires."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.CharField(max_length=2000)
    description = models.CharField(max_length=1000, blank=True, default="")
    events = models.JSONField(default=list, blank=True)  # event types; [] = all
    status = models.CharField(
        max_length=16, choices=EndpointStatus.choices, default=EndpointStatus.ACTIVE
    )
    disabled_reason = models.TextField(blank=True, default="")
    secret = models.TextField()  # encrypted
    previous_secret = models.TextField(blank=True, default="")  # encrypted
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    # Since when every delivery has failed (None after any success): 5 days disable it.
    failing_since = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.url

    def subscribed(self, type: str) -> bool:
        return not self.events or type in self.events


class WebhookEvent(models.Model):
    """The outbox: one row per event, written in the transaction of the change that caused
    it (a rolled-back change leaves no event). `body` is Trophy's payload serialized once: the
    bytes signed are the bytes sent, on every attempt."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    type = models.CharField(max_length=40)
    body = models.TextField()
    created = models.DateTimeField(db_index=True)
    # When its deliveries go out: now, or the end of a throttle window.
    due_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.type} {self.public_id}"


class WebhookDelivery(models.Model):
    """One event to one endpoint. Its public id is the `webhook-id` header: the same on every
    attempt, so that receivers can deduplicate."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    next_attempt_at = models.DateTimeField()
    attempts = models.PositiveSmallIntegerField(default=0)
    # The worker's claim, as for notification messages: an old claim lost its worker.
    claimed_at = models.DateTimeField(null=True, blank=True)
    claim = models.UUIDField(null=True, blank=True, editable=False)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    delivered_at = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(db_index=True)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                condition=Q(status="pending"),
                name="webhook_delivery_due_idx",
            ),
            models.Index(
                fields=["claimed_at"],
                condition=Q(status="delivering"),
                name="webhook_delivery_claimed_idx",
            ),
            models.Index(fields=["endpoint", "created"], name="webhook_delivery_log_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.event_id} -> {self.endpoint_id} ({self.status})"


class WebhookAttempt(models.Model):
    """One HTTP attempt of a delivery: the delivery log staff read."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="log")
    created = models.DateTimeField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    response_excerpt = models.TextField(blank=True, default="")  # the first 4 KB
    error = models.TextField(blank=True, default="")

    def __str__(self) -> str:
        return f"{self.delivery_id}: {self.status_code or self.error}"


class WebhookThrottle(models.Model):
    """Throttled types (points.changed, leaderboard.changed, leaderboard.rank_changed): at
    most one delivery per key per window; a change inside the window replaces the pending
    event's payload with the latest state."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=300)
    window_ends_at = models.DateTimeField()
    # The event still waiting to go out at the window's end, if a change came inside it.
    pending_event = models.ForeignKey(
        WebhookEvent, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="webhook_throttle_key_unique")
        ]

    def __str__(self) -> str:
        return self.key


class BoostNotice(models.Model):
    """points.boost_started / boost_finished told once per boost: the unique pair is what
    makes a repeated or concurrent job run harmless."""

    boost = models.ForeignKey("points.PointsBoost", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=8)  # "started" or "finished"
    sent_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["boost", "kind"], name="boost_notice_once"),
        ]

    def __str__(self) -> str:
        return f"{self.boost_id} {self.kind}"


class LeaderboardStartNotice(models.Model):
    """leaderboard.started told once per board (10:00 UTC the day before its start, or when it
    goes live after that moment): the unique board is what makes a repeated or concurrent job
    run harmless."""

    board = models.OneToOneField(
        "leaderboards.Leaderboard", on_delete=models.CASCADE, related_name="+"
    )
    sent_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.board_id} started"


class WebhookOnce(models.Model):
    """Events told once per thing (a due notification per user and key): the unique key makes
    a repeated or racing job run harmless."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=300)
    created = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="webhook_once_unique"),
        ]

    def __str__(self) -> str:
        return self.key
