"""Fair play's pure rules: an anomaly rule's settings (its declaration) and its windows."""

import dataclasses
import datetime as dt
from decimal import Decimal

from apps.core import declarations as declare
from apps.core.arguments import Unset
from apps.fairplay.choices import RuleKind, RuleStatus

MAX_WINDOW_MINUTES = 7 * 24 * 60
MAX_THRESHOLD = 10**15
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@dataclasses.dataclass(frozen=True, kw_only=True)
class AnomalyRuleSettings:
    """An anomaly rule's settings (apps/core/declarations.py): a user who gets more than
    `threshold` (points of `points_system_id`, value of `metric_id`, or events of any metric)
    within one window of `window_minutes` is flagged."""

    name: str | Unset = declare.text("Name", max_length=255, required=True)
    key: str | Unset = declare.key(required=True)
    kind: str | Unset = declare.choice(
        "Counts", RuleKind, required=True, help="What the rule adds up in a window."
    )
    metric_id: str | Unset | None = declare.reference(
        "Metric", nullable=True, help="The metric whose values a metric rule adds up."
    )
    points_system_id: str | Unset | None = declare.reference(
        "Points system", nullable=True, help="The system whose points a points rule adds up."
    )
    threshold: Decimal | Unset = declare.decimal(
        "More than",
        min_value=0,
        max_value=MAX_THRESHOLD,
        required=True,
        help="The user is flagged once their total in a window passes it (equal is not more).",
    )
    window_minutes: int | Unset = declare.integer(
        "Window (minutes)",
        min_value=1,
        max_value=MAX_WINDOW_MINUTES,
        required=True,
        help="Windows follow each other from midnight UTC, each this many minutes long.",
    )
    status: str | Unset = declare.choice("Status", RuleStatus)


def window_of(moment: dt.datetime, minutes: int) -> tuple[dt.datetime, dt.datetime]:
    """The window holding `moment`: [start, end), windows of `minutes` laid end to end from the
    Unix epoch (so from midnight UTC for a divisor of a day)."""
    size = dt.timedelta(minutes=minutes)
    start = _EPOCH + ((moment - _EPOCH) // size) * size
    return start, start + size


def passed(before: Decimal, after: Decimal, threshold: Decimal) -> bool:
    """Whether this addition took the window's total past the threshold (once a window)."""
    return before <= threshold < after
