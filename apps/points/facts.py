"""The points' facts (apps/core/facts.py): what the ledger did to one system of a user (the
system's definition, the awards it wrote, the total after them)."""

from dataclasses import dataclass

from apps.core.facts import Fact
from apps.points.ledger import SystemChange


@dataclass(frozen=True)
class PointsChanged(Fact):
    change: SystemChange
