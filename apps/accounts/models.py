import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.accounts.choices import AggregationPeriod, ApiKeyKind, TenantStatus
from apps.core.models import TimestampedModel


class Organization(TimestampedModel):
    """One customer of gamify."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=255)
    # Dashboard users who may see and configure this organization's tenants (superusers see all).
    staff = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="organizations"
    )

    def __str__(self) -> str:
        return self.name


class Environment(TimestampedModel):
    """production, staging, development... API keys belong to exactly one environment."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="environments"
    )
    name = models.CharField(max_length=255)
    key = models.CharField(max_length=64)
    # Lower wins; production is 1 (reference §3.10).
    priority = models.PositiveIntegerField(default=1)
    # The tenant of requests without a Tenant-ID header (also marked Tenant.is_default). Kept
    # here too so authentication loads key, environment and tenant in one query.
    default_tenant = models.OneToOneField(
        "Tenant", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "key"], name="environment_key_unique"),
        ]
        ordering = ["priority", "id"]

    def __str__(self) -> str:
        return f"{self.organization.name} / {self.name}"

    @property
    def is_production(self) -> bool:
        """Production is the first environment (priority 1, reference §3.10)."""
        return self.priority <= 1


class Tenant(TimestampedModel):
    """The unit of isolation: every row of configuration and end-user data has a tenant.

    Each environment has one default tenant (no customer id), used when a request carries no
    Tenant-ID header; further tenants are addressed by the customer's own id.
    """

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    environment = models.ForeignKey(Environment, on_delete=models.CASCADE, related_name="tenants")
    customer_id = models.CharField(max_length=255, null=True, blank=True)
    name = models.CharField(max_length=255)
    status = models.CharField(
        max_length=16, choices=TenantStatus.choices, default=TenantStatus.ACTIVE
    )
    is_default = models.BooleanField(default=False)
    # Bumped by every configuration change; the pipeline's in-process configuration snapshot
    # is keyed by it, so a change made through any process invalidates every cache.
    config_version = models.PositiveBigIntegerField(default=1)

    # Settings (admin API GET/PATCH /settings).
    control_ratio = models.PositiveSmallIntegerField(default=0)
    user_activation_window = models.PositiveSmallIntegerField(default=14)
    aggregation_period = models.CharField(
        max_length=16, choices=AggregationPeriod.choices, default=AggregationPeriod.WEEKLY
    )
    branding = models.JSONField(default=dict, blank=True)
    # The zone in which the tenant's calendar is read: a league's week boundary.
    reporting_tz = models.CharField(max_length=64, default="UTC")

    class Meta:
        constraints = [
            # Archived tenants keep their data but free their customer id for reuse.
            models.UniqueConstraint(
                fields=["environment", "customer_id"],
                condition=Q(status=TenantStatus.ACTIVE) & Q(customer_id__isnull=False),
                name="tenant_customer_id_unique_active",
            ),
            models.UniqueConstraint(
                fields=["environment"],
                condition=Q(is_default=True),
                name="tenant_one_default_per_environment",
            ),
            models.CheckConstraint(
                condition=Q(control_ratio__lte=100), name="tenant_control_ratio_percent"
            ),
        ]

    def __str__(self) -> str:
        # Names first, keys second: how the dashboard names it in titles and pickers.
        return f"{self.name} ({self.customer_id or 'default tenant'})"


class ApiKey(TimestampedModel):
    """An API key. Only a hash of the secret is stored; the full key is shown once.

    The key on the wire is `{prefix}.{secret}`; the prefix is public and indexed for lookup.
    """

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    environment = models.ForeignKey(Environment, on_delete=models.CASCADE, related_name="api_keys")
    kind = models.CharField(max_length=16, choices=ApiKeyKind.choices)
    name = models.CharField(max_length=255, blank=True, default="")
    prefix = models.CharField(max_length=32, unique=True)
    secret_hash = models.CharField(max_length=64)
    # Application keys only: bound to one end-user id within one tenant.
    tenant = models.ForeignKey(
        Tenant, on_delete=models.CASCADE, null=True, blank=True, related_name="application_keys"
    )
    user_id = models.CharField(max_length=255, null=True, blank=True)
    is_active = models.BooleanField(default=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(kind=ApiKeyKind.ADMIN, tenant__isnull=True, user_id__isnull=True)
                    | Q(kind=ApiKeyKind.APPLICATION, tenant__isnull=False, user_id__isnull=False)
                ),
                name="api_key_binding_matches_kind",
            ),
        ]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.prefix} ({self.kind})"


class ConfigChange(models.Model):
    """One configuration object's change: who made it, when, and its state before and after
    (apps/accounts/history.py). A write that changes several objects (a delete that takes a
    trigger with it, a promote) leaves one row per object, sharing `group`."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="config_changes")
    group = models.UUIDField(db_index=True)
    at = models.DateTimeField()
    # Who: a staff member, an admin API key, or the server itself (a schedule, a seed).
    actor_kind = models.CharField(max_length=16)
    actor = models.CharField(max_length=255)
    staff = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    api_key = models.ForeignKey(
        ApiKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # How: the admin API, the dashboard, a promote, a configuration file, a revert, MCP, a job.
    source = models.CharField(max_length=16)
    note = models.CharField(max_length=255, blank=True, default="")
    kind = models.CharField(max_length=32)
    key = models.CharField(max_length=255)
    action = models.CharField(max_length=8)  # created, changed, deleted
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    # The change that undid this one (a revert), if any.
    reverted_by = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "-at", "-id"], name="config_change_tenant_idx"),
            models.Index(fields=["tenant", "kind", "key", "-id"], name="config_change_object_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.key} {self.action}"
