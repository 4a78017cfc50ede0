import uuid

from django.db import models
from django.db.models import Q

from apps.accounts.models import Tenant
from apps.core.models import TimestampedModel
from apps.notifications.choices import (
    Channel,
    MessageStatus,
    NotificationType,
    PushChannelStatus,
    PushKind,
    TemplateMode,
    TemplateStatus,
)
from apps.users.models import EndUser


class NotificationSettings(models.Model):
    """Per-tenant notification bookkeeping. Its row records that the built-in default templates
    were given to the tenant once, so a default the tenant deleted does not come back."""

    tenant = models.OneToOneField(
        Tenant, on_delete=models.CASCADE, related_name="notification_settings"
    )
    defaults_seeded_at = models.DateTimeField(null=True, blank=True)
    push_defaults_seeded_at = models.DateTimeField(null=True, blank=True)
    # The league types came later: a tenant seeded before them gets theirs once too.
    league_defaults_seeded_at = models.DateTimeField(null=True, blank=True)
    league_push_defaults_seeded_at = models.DateTimeField(null=True, blank=True)
    # ... and so did the quest types.
    quest_defaults_seeded_at = models.DateTimeField(null=True, blank=True)
    quest_push_defaults_seeded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "notification settings"

    def __str__(self) -> str:
        return str(self.tenant)


class EmailTemplate(TimestampedModel):
    """A tenant's email template for one notification type. Several may be active for one
    type: the highest priority whose user-attribute filters match the user wins."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="email_templates")
    type = models.CharField(max_length=32, choices=NotificationType.choices)
    name = models.CharField(max_length=255)
    status = models.CharField(
        max_length=16, choices=TemplateStatus.choices, default=TemplateStatus.INACTIVE
    )
    subject = models.CharField(max_length=1000)
    html = models.TextField()
    # Empty: the text part is derived from the rendered HTML.
    text = models.TextField(blank=True, default="")
    # Blocks mode: `blocks` (apps/notifications/rendering/blocks.py) are what staff write, and
    # `html` and `text` the templates generated from them; advanced mode: raw Jinja2.
    mode = models.CharField(
        max_length=16, choices=TemplateMode.choices, default=TemplateMode.ADVANCED
    )
    blocks = models.JSONField(null=True, blank=True)
    # [{"attributeId": uuid, "attributeValue": str}]: all must match the user's attributes.
    user_attributes = models.JSONField(default=list, blank=True)
    priority = models.IntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["tenant", "type", "status"], name="email_template_idx")]

    def __str__(self) -> str:
        return f"{self.name} ({self.type})"


class PushChannel(TimestampedModel):
    """A tenant's connection to one push provider. Credentials are a secret: stored encrypted
    (apps.notifications.push.secrets), never rendered back."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="push_channels")
    kind = models.CharField(max_length=8, choices=PushKind.choices)
    status = models.CharField(
        max_length=16, choices=PushChannelStatus.choices, default=PushChannelStatus.ACTIVE
    )
    # Settings that are not secret (APNs: teamId, keyId, bundleId, sandbox; FCM: projectId).
    settings = models.JSONField(default=dict, blank=True)
    # Encrypted JSON of the secrets (APNs signingKey, FCM serviceAccount, Expo accessToken).
    credentials = models.TextField(blank=True, default="")
    # Set when most of a batch came back as bad tokens: pruning stops until staff look.
    flagged_at = models.DateTimeField(null=True, blank=True)
    flag_reason = models.TextField(blank=True, default="")

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.tenant})"


class PushTemplate(TimestampedModel):
    """A tenant's push template for one notification type (same rules as email templates)."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="push_templates")
    type = models.CharField(max_length=32, choices=NotificationType.choices)
    name = models.CharField(max_length=255)
    status = models.CharField(
        max_length=16, choices=TemplateStatus.choices, default=TemplateStatus.INACTIVE
    )
    title = models.CharField(max_length=1000)
    body = models.TextField()
    url = models.CharField(max_length=2000, blank=True, default="")  # deep link
    data = models.JSONField(default=dict, blank=True)  # {str: str}, values are templates
    user_attributes = models.JSONField(default=list, blank=True)
    priority = models.IntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["tenant", "type", "status"], name="push_template_idx")]

    def __str__(self) -> str:
        return f"{self.name} ({self.type})"


class Message(models.Model):
    """One notification to one user over one channel: the unit of scheduling, delivery and the
    delivery log. `dedupe_key` names the thing notified about (the completion, the streak
    period, the recap period, the inactivity spell and message number); its uniqueness per user
    and channel is what makes a second job run, a late run or a racing worker harmless."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="messages")
    type = models.CharField(max_length=32, choices=NotificationType.choices)
    channel = models.CharField(max_length=8, choices=Channel.choices, default=Channel.EMAIL)
    dedupe_key = models.CharField(max_length=200)
    # What the message is about, to render it at send time: ids, periods, numbers.
    payload = models.JSONField(default=dict, blank=True)
    template = models.ForeignKey(
        EmailTemplate, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    push_template = models.ForeignKey(
        PushTemplate, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    status = models.CharField(
        max_length=16, choices=MessageStatus.choices, default=MessageStatus.QUEUED
    )
    # Not before: the send window's start, then the next retry.
    send_at = models.DateTimeField()
    # When a dispatcher last handed it to a worker: it is not handed over again for a while.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    # When a worker claimed it (status sending): a claim that grows old lost its worker. The
    # token names the claim, so that a worker finishes only the messages it claimed itself.
    claimed_at = models.DateTimeField(null=True, blank=True)
    claim = models.UUIDField(null=True, blank=True, editable=False)
    attempts = models.PositiveSmallIntegerField(default=0)
    sent_at = models.DateTimeField(null=True, blank=True)
    recipient = models.CharField(max_length=320, blank=True, default="")
    subject = models.CharField(max_length=1000, blank=True, default="")
    error = models.TextField(blank=True, default="")
    created = models.DateTimeField(auto_now_add=True, db_index=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "channel", "dedupe_key"], name="message_once_per_thing"
            ),
        ]
        verbose_name = "message"
        verbose_name_plural = "delivery log"
        indexes = [
            # The dispatcher's query: what is due and not yet sent.
            models.Index(
                fields=["send_at"],
                condition=Q(status__in=["queued", "retrying"]),
                name="message_due_idx",
            ),
            # The stuck-claim sweep, and a worker loading what it claimed.
            models.Index(
                fields=["claimed_at"], condition=Q(status="sending"), name="message_claimed_idx"
            ),
            models.Index(
                fields=["claim"], condition=Q(claim__isnull=False), name="message_claim_idx"
            ),
            models.Index(fields=["tenant", "created"], name="message_tenant_log_idx"),
            models.Index(fields=["user", "created"], name="message_user_log_idx"),
        ]

    def __str__(self) -> str:
        # Titles and log entries name the end-user by their id in the customer's app (the
        # delivery log loads the user with the message).
        return f"{self.type} to {self.user.external_id} ({self.status})"


class SlotRun(models.Model):
    """A scheduled sweep (recap, reactivation) done for one send slot: the instant at which the
    users of every zone with one UTC offset reach the send time (17:00 local, Monday 09:00...).
    Each slot is swept once, when it comes, instead of every user being re-read on every run;
    about forty slots a day, whatever the number of users."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    type = models.CharField(max_length=32, choices=NotificationType.choices)
    slot_at = models.DateTimeField()
    done_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "type", "slot_at"], name="slot_run_once"),
        ]

    def __str__(self) -> str:
        return f"{self.type}@{self.slot_at:%Y-%m-%d %H:%M}"


class PushAttempt(models.Model):
    """One delivery attempt of a push message to one device token: the push delivery log."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="push_attempts")
    channel = models.ForeignKey(
        PushChannel, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    provider = models.CharField(max_length=8, choices=PushKind.choices)
    token_hash = models.CharField(max_length=16)  # the token itself is not logged
    ok = models.BooleanField(default=False)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    reason = models.CharField(max_length=255, blank=True, default="")
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.provider} {self.token_hash}: {self.status_code} {self.reason}"


class ExpoTicket(models.Model):
    """An Expo push ticket whose receipt is fetched at least 15 minutes later: a token can turn
    out dead only then (DeviceNotRegistered in the receipt)."""

    channel = models.ForeignKey(PushChannel, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    message = models.ForeignKey(Message, on_delete=models.SET_NULL, null=True, related_name="+")
    ticket_id = models.CharField(max_length=64)
    token = models.CharField(max_length=255)
    created = models.DateTimeField()
    checked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["created"], condition=Q(checked_at__isnull=True), name="expo_ticket_due_idx"
            ),
        ]

    def __str__(self) -> str:
        return self.ticket_id
