"""Dashboard pages for points: a system's page holds its settings and, as inline rows, its
triggers, levels and boosts, each written by the configuration function the admin API uses;
the award ledger and totals are read-only.

Other apps' configuration forms use the attribute filter fields here.
"""

from apps.points.admin import ledger, part_pages, parts, systems
from apps.points.admin.forms import (
    AttributePairsField,
    attribute_refs,
    attribute_values_rule,
    filter_pairs,
)

__all__ = [
    "AttributePairsField",
    "attribute_refs",
    "attribute_values_rule",
    "filter_pairs",
    "ledger",
    "part_pages",
    "parts",
    "systems",
]
