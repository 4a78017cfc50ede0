"""Pure achievement rules: the settings of an achievement and which trigger each belongs to,
metric targets, composites, anniversaries, rarity. Who qualifies by attributes is a users rule
(`attributes_match`, apps/users/domain.py)."""

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from apps.achievements.choices import Status, Trigger
from apps.core import declarations as declare
from apps.core.arguments import Unset

MAX_STREAK_LENGTH = 100_000
MAX_ANNIVERSARY_YEARS = 200
MAX_PREREQUISITES = 100


@dataclass(frozen=True, kw_only=True)
class AchievementSettings:
    """An achievement's settings (apps/core/declarations.py), as achievement_create and
    achievement_update take them: the common ones, then those of one trigger only
    (TRIGGER_FIELDS), in the order the dashboard shows them."""

    name: str | Unset = declare.text("Name", max_length=255, required=True)
    trigger: str | Unset = declare.choice(
        "Kind",
        Trigger,
        required=True,
        help="What completes the achievement. Only the settings of this kind are saved.",
    )
    description: str | Unset | None = declare.text(
        "Description", max_length=2000, nullable=True, blank=True, multiline=True
    )
    status: str | Unset = declare.choice("Status", Status)
    # The API's badge is an object, {"url"} or null.
    badge_url: str | Unset | None = declare.url("Badge URL", nullable=True, wire="badge")
    # {"attributeId", "attributeValue"} references
    user_attributes: list[dict[str, str]] | Unset | None = declare.structure(
        "User attribute filters",
        nullable=True,
        help="Only users with all these attribute values can complete it. None: everyone.",
    )
    metric_id: str | Unset | None = declare.reference("Metric", nullable=True)  # a public id
    metric_value: Decimal | Unset | None = declare.decimal(
        "Metric threshold",
        min_value=1,
        nullable=True,
        help="Completed when the user's total of the metric reaches this value.",
    )
    event_attributes: list[dict[str, str]] | Unset | None = declare.structure(
        "Event attribute filters",
        nullable=True,
        help="Only events carrying all these values count towards the threshold. None: every "
        "event of the metric.",
    )
    streak_length: int | Unset | None = declare.integer(
        "Streak length",
        min_value=1,
        max_value=MAX_STREAK_LENGTH,
        nullable=True,
        help="Completed when a user's streak reaches this many {period} in a row (the streak "
        "frequency of the tenant's streak settings).",
    )
    anniversary_years: int | Unset | None = declare.integer(
        "Years since sign-up",
        min_value=1,
        max_value=MAX_ANNIVERSARY_YEARS,
        nullable=True,
        help="Completed on this anniversary of the user's sign-up date, in their time zone; "
        "users without a sign-up date never complete it.",
    )
    key: str | Unset | None = declare.key(
        nullable=True,
        help="Your backend completes the achievement with POST /achievements/{key}/complete.",
    )
    achievement_ids: list[str] | Unset | None = declare.references(
        "Prerequisites",
        nullable=True,
        max_length=MAX_PREREQUISITES,
        help="Completed as soon as a user has completed all of these.",
    )  # a composite's prerequisites, public ids


# Settings that belong to one trigger only (reference §3.5), and those each trigger needs (all
# of its own but a metric's event filters).
TRIGGER_FIELDS: dict[str, tuple[str, ...]] = {
    Trigger.API: ("key",),
    Trigger.METRIC: ("metric_id", "metric_value", "event_attributes"),
    Trigger.STREAK: ("streak_length",),
    Trigger.ANNIVERSARY: ("anniversary_years",),
    Trigger.ACHIEVEMENT: ("achievement_ids",),
}
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    **TRIGGER_FIELDS,
    Trigger.METRIC: ("metric_id", "metric_value"),
}


def metric_reached(total: Decimal, target: Decimal) -> bool:
    return total >= target


def anniversary_date(sign_up: dt.date, years: int) -> dt.date:
    """The date `years` after sign-up; 29 February falls on 28 February in common years."""
    try:
        return sign_up.replace(year=sign_up.year + years)
    except ValueError:
        return sign_up.replace(year=sign_up.year + years, day=28)


def anniversary_reached(sign_up: dt.date | None, years: int, today: dt.date) -> bool:
    return sign_up is not None and anniversary_date(sign_up, years) <= today


def composites_completed(
    completed: set[int], composites: Mapping[int, frozenset[int]]
) -> list[int]:
    """Composites whose prerequisites are all completed, including composites of composites,
    in the order they complete. `completed` is not changed."""
    done = set(completed)
    newly: list[int] = []
    progress = True
    while progress:
        progress = False
        for achievement, prerequisites in composites.items():
            if achievement not in done and prerequisites and prerequisites <= done:
                done.add(achievement)
                newly.append(achievement)
                progress = True
    return newly


def rarity(completions: int, users: int) -> float:
    """Percent of the tenant's users who completed it, to two decimals."""
    if users <= 0:
        return 0.0
    return round(completions * 100 / users, 2)
