"""Dashboard pages for points: a system's page holds its settings and, as inline rows, its
triggers, levels and boosts, each written by the configuration function the admin API uses;
the award ledger and totals are read-only."""

from apps.points.admin import ledger, part_pages, parts, systems

# The attribute filter field of the triggers' and boosts' rows lives with the attributes
# (apps/users/forms.py); tests/dashboard looks for it here, among the points pages' fields.
from apps.users.forms import AttributePairsField

__all__ = [
    "AttributePairsField",
    "ledger",
    "part_pages",
    "parts",
    "systems",
]
