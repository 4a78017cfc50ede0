"""The quests' pure rules: periods in the user's calendar (time zones, DST, each cadence), what
an event adds to each goal kind, and the pools' choice (deterministic on every process, stable
within a period, varied across periods, weighted, without repeats where the pool allows)."""

import collections
import datetime as dt
import itertools
import json
import subprocess
import sys
from decimal import Decimal
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.quests import domain
from apps.quests.domain import Candidate, Goal, Happened

# --- periods ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cadence", "today", "first", "last"),
    [
        ("daily", "2026-11-24", "2026-11-24", "2026-11-24"),
        ("weekly", "2026-11-24", "2026-11-22", "2026-11-28"),  # Sunday to Saturday
        ("weekly", "2026-11-22", "2026-11-22", "2026-11-28"),
        ("monthly", "2026-02-14", "2026-02-01", "2026-02-28"),
        ("monthly", "2028-02-29", "2028-02-01", "2028-02-29"),
    ],
)
def test_periods_are_the_streaks_periods(cadence: str, today: str, first: str, last: str):
    period = domain.period_of(cadence, dt.date.fromisoformat(today), "UTC")
    assert period is not None
    assert (period.first.isoformat(), period.last.isoformat()) == (first, last)


def test_a_day_ends_at_the_users_own_midnight():
    tokyo = domain.period_of("daily", dt.date(2026, 11, 24), "Asia/Tokyo")
    la = domain.period_of("daily", dt.date(2026, 11, 24), "America/Los_Angeles")
    assert tokyo is not None
    assert la is not None
    assert tokyo.start == dt.datetime(2026, 11, 23, 15, tzinfo=dt.UTC)
    assert tokyo.end == dt.datetime(2026, 11, 24, 15, tzinfo=dt.UTC)
    assert la.start == dt.datetime(2026, 11, 24, 8, tzinfo=dt.UTC)
    assert la.end == dt.datetime(2026, 11, 25, 8, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("cadence", "today", "hours"),
    [
        # New York springs forward on Sunday 8 March 2026, falls back on 1 November.
        ("daily", "2026-03-08", 23),
        ("daily", "2026-11-01", 25),
        ("weekly", "2026-03-08", 7 * 24 - 1),
        ("weekly", "2026-11-01", 7 * 24 + 1),
        ("monthly", "2026-03-20", 31 * 24 - 1),
        ("monthly", "2026-11-20", 30 * 24 + 1),
    ],
)
def test_periods_across_dst_are_as_long_as_the_users_calendar_says(
    cadence: str, today: str, hours: int
):
    period = domain.period_of(cadence, dt.date.fromisoformat(today), "America/New_York")
    assert period is not None
    assert period.end - period.start == dt.timedelta(hours=hours)


def test_a_day_that_starts_in_a_dst_gap_starts_at_its_first_moment():
    # Santiago springs forward at midnight: 6 September 2026 has no 00:00, it starts at 01:00.
    period = domain.period_of("daily", dt.date(2026, 9, 6), "America/Santiago")
    assert period is not None
    assert period.start == dt.datetime(2026, 9, 6, 4, tzinfo=dt.UTC)  # 01:00 at -03
    assert period.end - period.start == dt.timedelta(hours=23)


def test_a_once_quest_runs_between_its_dates_in_the_users_calendar():
    first, last = dt.date(2026, 12, 1), dt.date(2026, 12, 7)
    assert domain.period_of("once", dt.date(2026, 11, 30), "UTC", first, last) is None
    assert domain.period_of("once", dt.date(2026, 12, 8), "UTC", first, last) is None
    period = domain.period_of("once", dt.date(2026, 12, 3), "Europe/Paris", first, last)
    assert period is not None
    assert (period.first, period.last) == (first, last)
    assert period.start == dt.datetime(2026, 11, 30, 23, tzinfo=dt.UTC)
    assert period.end == dt.datetime(2026, 12, 7, 23, tzinfo=dt.UTC)


def test_period_numbers_follow_each_other():
    day = dt.date(2026, 12, 31)
    assert (
        domain.period_index(dt.date(2027, 1, 1), "daily") == domain.period_index(day, "daily") + 1
    )
    sunday = dt.date(2026, 11, 22)
    assert (
        domain.period_index(sunday + dt.timedelta(days=7), "weekly")
        == domain.period_index(sunday, "weekly") + 1
    )
    assert (
        domain.period_index(dt.date(2027, 1, 1), "monthly")
        == domain.period_index(dt.date(2026, 12, 1), "monthly") + 1
    )


# --- goals ------------------------------------------------------------------------------------

DAY = dt.date(2026, 11, 24)


def happened(**fields: object) -> Happened:
    values: dict[str, object] = {
        "day": DAY,
        "metric_pk": 1,
        "value": Decimal(1),
        "streak_extended": False,
        "points_added": {},
        "achievement_pks": frozenset(),
    }
    values.update(fields)
    return Happened(**values)  # type: ignore[arg-type]


def test_a_metric_goal_sums_its_metric_only():
    goal = Goal("metric", Decimal(10), metric_pk=1)
    state = domain.goal_advance(goal, {}, happened(value=Decimal("2.5")))
    state = domain.goal_advance(goal, state, happened(metric_pk=2, value=Decimal(100)))
    assert state == {"value": "2.5"}
    state = domain.goal_advance(goal, state, happened(value=Decimal("7.5")))
    assert state == {"value": 10}
    assert domain.goal_met(goal, state)


def test_an_active_days_goal_counts_distinct_local_days():
    goal = Goal("active_days", Decimal(2))
    state = domain.goal_advance(goal, {}, happened())
    state = domain.goal_advance(goal, state, happened(metric_pk=9))
    assert state == {"value": 1, "last": "2026-11-24"}
    assert not domain.goal_met(goal, state)
    state = domain.goal_advance(goal, state, happened(day=DAY + dt.timedelta(days=1)))
    assert domain.goal_met(goal, state)


def test_a_streak_goal_counts_extensions():
    goal = Goal("streak", Decimal(1))
    state = domain.goal_advance(goal, {}, happened())
    assert not domain.goal_met(goal, state)
    assert domain.goal_met(goal, domain.goal_advance(goal, state, happened(streak_extended=True)))


def test_a_points_goal_counts_points_gained_in_its_system():
    goal = Goal("points", Decimal(30), system_pk=7)
    state = domain.goal_advance(goal, {}, happened(points_added={7: 20, 8: 100}))
    state = domain.goal_advance(goal, state, happened(points_added={7: -50}))  # spent: no gain
    assert state == {"value": 20}
    state = domain.goal_advance(goal, state, happened(points_added={7: 10}))
    assert domain.goal_met(goal, state)


def test_an_achievement_goal_is_met_by_its_completion():
    goal = Goal("achievement", Decimal(1), achievement_pk=3)
    state = domain.goal_advance(goal, {}, happened(achievement_pks=frozenset({4})))
    assert not domain.goal_met(goal, state)
    state = domain.goal_advance(goal, state, happened(achievement_pks=frozenset({3})))
    assert domain.goal_met(goal, state)


def test_a_quest_of_several_goals_needs_them_all():
    goals = [Goal("metric", Decimal(5), metric_pk=1), Goal("streak", Decimal(1))]
    progress = domain.goals_advance(goals, [], happened(value=Decimal(5)))
    assert not domain.all_met(goals, progress)
    progress = domain.goals_advance(
        goals, progress, happened(value=Decimal(0), streak_extended=True)
    )
    assert domain.all_met(goals, progress)


# --- pools ------------------------------------------------------------------------------------

SEEDS = {"tenant_key": "1", "pool_key": "daily"}


def twelve(weights: dict[str, int] | None = None) -> list[Candidate]:
    return [Candidate(f"q{i:02d}", (weights or {}).get(f"q{i:02d}", 1)) for i in range(12)]


def test_the_choice_is_the_same_on_every_process():
    here = [domain.pool_choice(twelve(), 3, **SEEDS, user_id="ann", index=i) for i in range(5)]
    script = (
        "import json; from apps.quests import domain;"
        "c=[domain.Candidate(f'q{i:02d}',1) for i in range(12)];"
        "print(json.dumps([domain.pool_choice(c,3,tenant_key='1',pool_key='daily',"
        "user_id='ann',index=i) for i in range(5)]))"
    )
    # A new interpreter, with another hash seed: nothing depends on Python's hash().
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
        cwd=str(__import__("pathlib").Path(__file__).parents[2]),
    )
    assert json.loads(out.stdout) == here


def test_the_choice_varies_across_users_and_periods():
    sets = {
        tuple(sorted(domain.pool_choice(twelve(), 3, **SEEDS, user_id=u, index=i)))
        for u in ("ann", "bob", "cy")
        for i in range(10)
    }
    assert len(sets) > 20


@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_no_quest_repeats_the_previous_period_when_the_pool_holds_three_sets(size: int):
    for user in ("ann", "bob", "cy", "dee"):
        sets = [
            set(domain.pool_choice(twelve(), size, **SEEDS, user_id=user, index=i))
            for i in range(-30, 30)
        ]
        assert all(len(s) == size for s in sets)
        for before, after in itertools.pairwise(sets):
            assert not before & after


def test_a_pool_of_twice_its_size_avoids_at_least_every_other_repeat():
    candidates = [Candidate(f"q{i}", 1) for i in range(4)]
    sets = [
        set(domain.pool_choice(candidates, 2, **SEEDS, user_id="ann", index=i)) for i in range(40)
    ]
    # Each odd period avoids the even one before it, whatever the draws.
    for i in range(1, 40, 2):
        assert not sets[i] & sets[i - 1]


def test_a_small_pool_repeats_what_it_must():
    candidates = [Candidate("a", 1), Candidate("b", 1)]
    for i in range(6):
        assert sorted(domain.pool_choice(candidates, 2, **SEEDS, user_id="ann", index=i)) == [
            "a",
            "b",
        ]


def test_weights_make_a_quest_likelier():
    counts: collections.Counter[str] = collections.Counter()
    heavy = twelve({"q00": 10})
    for user in range(400):
        counts.update(domain.pool_choice(heavy, 1, **SEEDS, user_id=f"u{user}", index=0))
    # Weight 10 of a total 21: about 190 of 400; each weight-1 quest about 19.
    assert counts["q00"] > 120
    assert max(v for k, v in counts.items() if k != "q00") < 45


def test_a_quest_added_or_activated_after_the_period_began_waits_for_the_next():
    start = dt.datetime(2026, 11, 24, 5, tzinfo=dt.UTC)
    before, after = "2026-11-24T04:00:00+00:00", "2026-11-24T06:00:00+00:00"
    quests = {
        "a": SimpleNamespace(key="a", activated_at=start - dt.timedelta(days=1)),
        "b": SimpleNamespace(key="b", activated_at=start - dt.timedelta(days=1)),
        "c": SimpleNamespace(key="c", activated_at=start + dt.timedelta(hours=1)),
    }
    members = [
        {"quest_id": "a", "weight": 1, "added_at": before},
        {"quest_id": "b", "weight": 3, "added_at": after},  # added later
        {"quest_id": "c", "weight": 1, "added_at": before},  # activated later
        {"quest_id": "gone", "weight": 1, "added_at": before},  # archived: not given
    ]
    assert domain.candidates_at(members, start, quests) == [Candidate("a", 1)]
    tomorrow = start + dt.timedelta(days=1)
    assert domain.candidates_at(members, tomorrow, quests) == [
        Candidate("a", 1),
        Candidate("b", 3),
        Candidate("c", 1),
    ]


@given(
    size=st.integers(min_value=1, max_value=5),
    extra=st.integers(min_value=0, max_value=10),
    weights=st.lists(st.integers(min_value=1, max_value=1000), min_size=25, max_size=25),
    user=st.text(min_size=1, max_size=12),
    start=st.integers(min_value=-1000, max_value=1000),
)
def test_any_pool_of_three_sets_never_repeats_the_previous_period(
    size: int, extra: int, weights: list[int], user: str, start: int
):
    candidates = [Candidate(f"q{i}", weights[i]) for i in range(3 * size + extra)]
    sets = [
        domain.pool_choice(candidates, size, **SEEDS, user_id=user, index=i)
        for i in range(start, start + 6)
    ]
    for chosen in sets:
        assert len(chosen) == len(set(chosen)) == size
    for before, after in itertools.pairwise(sets):
        assert not set(before) & set(after)
    # The same on a second computation: nothing is stored, nothing drifts.
    assert sets[0] == domain.pool_choice(candidates, size, **SEEDS, user_id=user, index=start)
