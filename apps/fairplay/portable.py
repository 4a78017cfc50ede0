"""The anomaly rules as portable configuration (apps/core/portable.py)."""

from apps.core.portable import CollectionKind, register
from apps.fairplay.models import AnomalyRule
from apps.fairplay.views import AnomalyRuleCollection

register(
    CollectionKind(
        "anomaly_rule",
        "anomaly rule",
        95,
        AnomalyRuleCollection(),
        model=AnomalyRule,
        archived={"status": "inactive"},
    )
)
