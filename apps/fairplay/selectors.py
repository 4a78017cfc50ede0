"""Reads of fair play: the tenant's anomaly rules (the configuration snapshot the event path
reads, apps/core/config_cache.py) and the flags they raised."""

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from apps.accounts.models import Tenant
from apps.core.api.params import is_uuid
from apps.core.config_cache import tenant_cached
from apps.fairplay.choices import FlagStatus, RuleKind, RuleStatus
from apps.fairplay.models import AnomalyRule, UserFlag


@dataclass(frozen=True)
class RuleDef:
    pk: int
    key: str
    name: str
    kind: str
    metric_pk: int | None
    system_pk: int | None
    threshold: Decimal
    window_minutes: int

    def counts(
        self, metric_pk: int | None, value: Decimal | None, points: dict[int, int]
    ) -> Decimal | None:
        """What an event adds to this rule's window (None: nothing, the rule is not moved)."""
        if self.kind == RuleKind.EVENTS:
            return Decimal(1) if metric_pk is not None else None
        if self.kind == RuleKind.METRIC:
            if metric_pk is not None and metric_pk == self.metric_pk and value is not None:
                return value
            return None
        added = points.get(self.system_pk or 0)
        return Decimal(added) if added else None


def anomaly_rules(tenant: Tenant) -> tuple[RuleDef, ...]:
    """The tenant's active rules, from the configuration snapshot: no statement per event, and
    none at all for a tenant without rules once cached."""

    def load() -> tuple[RuleDef, ...]:
        rules = AnomalyRule.objects.filter(tenant=tenant, status=RuleStatus.ACTIVE).order_by("pk")
        return tuple(
            RuleDef(
                r.pk,
                r.key,
                r.name,
                r.kind,
                r.metric_id,
                r.points_system_id,
                r.threshold,
                r.window_minutes,
            )
            for r in rules
        )

    return tenant_cached(tenant, "anomaly_rules", load)


def rules_list(tenant: Tenant, limit: int, skip: int) -> Sequence[AnomalyRule]:
    rules = AnomalyRule.objects.filter(tenant=tenant).select_related("metric", "points_system")
    return list(rules.order_by("created", "pk")[skip : skip + limit])


def rule_get(tenant: Tenant, public_id: str) -> AnomalyRule | None:
    if not is_uuid(public_id):
        return None
    rules = AnomalyRule.objects.filter(tenant=tenant).select_related("metric", "points_system")
    return rules.filter(public_id=public_id).first()


def flags_open(tenant: Tenant) -> Sequence[UserFlag]:
    return list(
        UserFlag.objects.filter(tenant=tenant, status=FlagStatus.OPEN)
        .select_related("rule", "user")
        .order_by("-flagged_at")
    )
