"""Pure rules of analytics: the Impact Score's statistics (no ORM, no clock).

The Impact Score compares two proportions, the day-14 retention of treated users and of the
control group (selectors/impact.py counts them). Its 95 % interval of the difference is
Newcombe's hybrid score interval (Newcombe 1998, method 10): each group's Wilson score
interval, combined. Unlike the textbook Wald interval (difference +- 1.96 standard errors) it
stays inside -100..100 points and stays honest for small groups and for rates of 0 % or 100 %,
where Wald's interval shrinks to nothing. On top of it, a difference is called significant only
when the interval leaves out 0 and each group has at least MIN_GROUP_USERS users: with fewer,
one user more or less swings the rate by whole tens of points, whatever an interval says."""

import math
from dataclasses import dataclass

from apps.analytics.choices import Verdict

# The two-sided 95 % quantile of the normal distribution.
Z95 = 1.959963984540054
MIN_GROUP_USERS = 10


@dataclass(frozen=True)
class Share:
    """`retained` of `users` users."""

    users: int
    retained: int

    @property
    def rate(self) -> float | None:
        return self.retained / self.users if self.users else None


def wilson_interval(share: Share, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (as fractions); needs at least one user."""
    n, p = share.users, share.retained / share.users
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Estimate:
    """Treated minus control, as fractions; None where a group is empty."""

    treated: Share
    control: Share
    difference: float | None
    low: float | None
    high: float | None
    verdict: Verdict

    @property
    def significant(self) -> bool:
        return self.verdict is Verdict.SIGNIFICANT


def difference_estimate(treated: Share, control: Share, z: float = Z95) -> Estimate:
    """Newcombe's hybrid score interval of treated.rate - control.rate, and the verdict."""
    if not treated.users or not control.users:
        nobody = not (treated.users or control.users)
        verdict = Verdict.NO_USERS if nobody else Verdict.TOO_FEW_USERS
        return Estimate(treated, control, None, None, None, verdict)
    p1, p2 = treated.retained / treated.users, control.retained / control.users
    (l1, u1), (l2, u2) = wilson_interval(treated, z), wilson_interval(control, z)
    difference = p1 - p2
    low = difference - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = difference + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    if min(treated.users, control.users) < MIN_GROUP_USERS:
        verdict = Verdict.TOO_FEW_USERS
    elif low <= 0 <= high:
        verdict = Verdict.NOT_SIGNIFICANT
    else:
        verdict = Verdict.SIGNIFICANT
    return Estimate(treated, control, difference, low, high, verdict)


def points(fraction: float) -> str:
    """A difference of fractions in signed percentage points, one decimal: "+12.5"."""
    value = round(100 * fraction, 1)
    return f"{value:+.1f}" if value else "0.0"


def estimate_summary(estimate: Estimate) -> str:
    """The line people read under the score: the finding, or why there is none yet."""
    treated, control = estimate.treated, estimate.control
    if estimate.verdict is Verdict.NO_USERS:
        return "No users who started in these weeks have reached day 14 yet."
    if not control.users:
        return (
            "Not yet significant: no control-group user has reached day 14 (the control "
            "ratio of the tenant's experimentation settings holds new users out)."
        )
    if not treated.users:
        return "Not yet significant: no treated user has reached day 14."
    assert estimate.difference is not None  # noqa: S101 - both groups have users
    assert estimate.low is not None  # noqa: S101 - idem
    assert estimate.high is not None  # noqa: S101 - idem
    interval = f"95 % interval {points(estimate.low)} to {points(estimate.high)} points"
    if estimate.verdict is Verdict.TOO_FEW_USERS:
        group, size = ("control group", control.users)
        if treated.users < control.users:
            group, size = ("treated group", treated.users)
        return (
            f"Not yet significant: the {group} has {size} user{'s' if size != 1 else ''}; "
            f"each group needs at least {MIN_GROUP_USERS} ({interval})."
        )
    if estimate.verdict is Verdict.NOT_SIGNIFICANT:
        return f"Not yet significant: the {interval} contains 0."
    higher = "higher" if estimate.difference > 0 else "lower"
    return (
        f"Treated users' day-14 retention is {abs(round(100 * estimate.difference, 1)):.1f} "
        f"points {higher} than the control group's ({interval})."
    )
