import uuid

from django.db import models

from apps.accounts.models import Tenant
from apps.core.models import TimestampedModel
from apps.users.choices import AttributeType


class EndUser(TimestampedModel):
    """An end-user of a customer's application, identified by the customer's own id.

    Its row is the pipeline's lock point: every event of one user takes this row's lock first.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="end_users")
    external_id = models.CharField(max_length=255)
    # Names the user in links sent to them (notification preferences, unsubscribe): random,
    # so a link reveals no primary key and no customer id, and a user re-created with the
    # same external id is not the one an old link named.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=255, null=True, blank=True)
    email = models.CharField(max_length=254, null=True, blank=True)
    tz = models.CharField(max_length=64, null=True, blank=True)
    subscribe_to_emails = models.BooleanField(default=True)
    device_tokens = models.JSONField(default=list, blank=True)
    attributes = models.JSONField(default=dict, blank=True)
    sign_up_date = models.DateField(null=True, blank=True)
    control = models.BooleanField(default=False)
    # {notification type: [channels]}; a type absent means the user never set it.
    notification_preferences = models.JSONField(default=dict, blank=True)
    # The user's last event, and its local date in the zone notifications are scheduled in:
    # reactivation and recap sweeps select users by this date (see apps/notifications).
    last_active_at = models.DateTimeField(null=True, blank=True)
    last_active_on = models.DateField(null=True, blank=True)
    # Fair play (apps/fairplay): an excluded user is left out of every ranking of the tenant
    # (leaderboards, league cohorts, achievements' rarity) while their events still count.
    # On the row the event path locks anyway, so a tenant without exclusions pays nothing.
    excluded_at = models.DateTimeField(null=True, blank=True)
    # Database defaults too: rows written in SQL (bench seeding, bulk inserts) name no column of it.
    excluded_reason = models.CharField(max_length=500, blank=True, default="", db_default="")
    excluded_by = models.CharField(max_length=255, blank=True, default="", db_default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "external_id"], name="end_user_id_unique"),
        ]
        indexes = [
            models.Index(fields=["tenant", "email"], name="end_user_email_idx"),
            models.Index(
                fields=["tenant", "last_active_on", "tz"], name="end_user_last_active_idx"
            ),
            # New users per day and retention cohorts (dashboard analytics).
            models.Index(fields=["tenant", "created"], name="end_user_tenant_created_idx"),
        ]
        verbose_name = "end-user"

    def __str__(self) -> str:
        return self.external_id


class Attribute(TimestampedModel):
    """A custom attribute definition: values are accepted only for defined keys."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="attributes")
    name = models.CharField(max_length=255)
    key = models.CharField(max_length=100)
    type = models.CharField(max_length=8, choices=AttributeType.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "type", "key"], name="attribute_key_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.type})"
