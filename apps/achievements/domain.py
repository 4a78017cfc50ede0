"""Pure achievement rules: metric targets, composites, anniversaries, rarity. Who qualifies by
attributes is a users rule (`attributes_match`, apps/users/domain.py)."""

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal


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
