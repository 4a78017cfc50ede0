"""Writes of anomaly rules, for the admin API and the dashboard alike. Every change bumps the
tenant's configuration version (the event path's snapshot of the rules)."""

from typing import Any

from apps.accounts.history import ALL, recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.declarations import given_values, required_check
from apps.core.errors import ValidationError
from apps.fairplay.choices import RuleKind
from apps.fairplay.domain import AnomalyRuleSettings
from apps.fairplay.models import AnomalyRule
from apps.metrics.models import Metric
from apps.points.models import PointsSystem

_PLAIN = ("name", "kind", "threshold", "window_minutes", "status")


@recorded("anomaly_rule")
def anomaly_rule_create(tenant: Tenant, settings: AnomalyRuleSettings) -> AnomalyRule:
    required_check(settings)
    return _save(tenant, AnomalyRule(tenant=tenant), given_values(settings))


@recorded("anomaly_rule")
def anomaly_rule_update(
    tenant: Tenant, rule: AnomalyRule, changes: AnomalyRuleSettings
) -> AnomalyRule:
    """Change the given settings; the others are kept. Windows already counted keep their
    totals; a changed window length starts counting in windows of the new length."""
    return _save(tenant, rule, given_values(changes))


@recorded(ALL)
def anomaly_rule_delete(tenant: Tenant, rule: AnomalyRule) -> None:
    """The rule goes, with its counts and the flags it raised."""
    rule.delete()
    tenant_config_changed(tenant)


def _save(tenant: Tenant, rule: AnomalyRule, values: dict[str, Any]) -> AnomalyRule:
    if "key" in values:
        taken = AnomalyRule.objects.filter(tenant=tenant, key=values["key"]).exclude(pk=rule.pk)
        if taken.exists():
            raise ValidationError(
                "Key already in use by another anomaly rule", fields="key", code="unique"
            )
        rule.key = values["key"]
    for name in _PLAIN:
        if name in values:
            setattr(rule, name, values[name])
    if "metric_id" in values:
        rule.metric = None
        if values["metric_id"] is not None:
            rule.metric = Metric.objects.filter(
                tenant=tenant, public_id=values["metric_id"]
            ).first()
            if rule.metric is None:
                raise ValidationError("{metric_id}: metric not found", fields="metric_id")
    if "points_system_id" in values:
        rule.points_system = None
        if values["points_system_id"] is not None:
            rule.points_system = PointsSystem.objects.filter(
                tenant=tenant, public_id=values["points_system_id"]
            ).first()
            if rule.points_system is None:
                raise ValidationError(
                    "{points_system_id}: points system not found", fields="points_system_id"
                )
    # What each kind counts, and nothing else.
    if rule.kind == RuleKind.METRIC and rule.metric is None:
        raise ValidationError("{metric_id}: required by a metric rule", fields="metric_id")
    if rule.kind == RuleKind.POINTS and rule.points_system is None:
        raise ValidationError(
            "{points_system_id}: required by a points rule", fields="points_system_id"
        )
    if rule.kind != RuleKind.METRIC:
        rule.metric = None
    if rule.kind != RuleKind.POINTS:
        rule.points_system = None
    rule.save()
    tenant_config_changed(tenant)
    return rule
