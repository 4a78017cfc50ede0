"""Analytics selectors against small hand-computed data, written straight into the rollups and
state tables the selectors read (the pipeline that fills them is tested in its own apps)."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement, AchievementCompletion
from apps.analytics import selectors
from apps.analytics.selectors import DateRange
from apps.leaderboards.models import Leaderboard, LeaderboardEntry
from apps.metrics.models import Metric, MetricDailyChange
from apps.points.models import PointsAward, PointsLevel, PointsSystem, PointsTotal, PointsTrigger
from apps.streaks import domain as streak_domain
from apps.streaks.models import StreakPeriod, StreakSettings, StreakState
from apps.users.models import EndUser
from tests.factories import EndUserFactory, MetricFactory, bump

D = dt.date


def at(day: str, hour: int = 12, minute: int = 0) -> dt.datetime:
    return dt.datetime.combine(D.fromisoformat(day), dt.time(hour, minute), dt.UTC)


def make_user(
    tenant: Tenant,
    created: dt.datetime | None = None,
    tz: str | None = None,
    control: bool = False,
) -> EndUser:
    user = EndUserFactory(tenant=tenant, tz=tz, control=control)
    if created is not None:
        # `created` is auto_now_add: set it after the insert.
        EndUser.objects.filter(pk=user.pk).update(created=created)
        user.created = created
    return user


def active(
    user: EndUser, metric: Metric, day: str, events: int = 1, change: Any = 1
) -> MetricDailyChange:
    return MetricDailyChange.objects.create(
        tenant=user.tenant,
        user=user,
        metric=metric,
        date=D.fromisoformat(day),
        events=events,
        change=Decimal(str(change)),
    )


def days(start: str, end: str) -> DateRange:
    return DateRange(D.fromisoformat(start), D.fromisoformat(end))


# --- active users ----------------------------------------------------------------------------


def brute_force_mau(pairs: set[tuple[int, dt.date]], day: dt.date) -> int:
    since = day - dt.timedelta(days=29)
    return len({user for user, active_on in pairs if since <= active_on <= day})


def test_dau_and_mau_count_distinct_users_over_the_rolling_30_days(
    tenant: Tenant, other_tenant: Tenant, metric: Metric
) -> None:
    steps = MetricFactory(tenant=tenant, key="steps")
    a, b, c, d = (make_user(tenant) for _ in range(4))
    active(a, metric, "2024-03-01")
    active(a, steps, "2024-03-01")  # two metrics, one active user
    active(a, metric, "2024-03-03")
    active(b, metric, "2024-01-15")  # too early for every MAU window of the range
    active(b, metric, "2024-03-05")
    active(c, metric, "2024-02-05")  # its 30 days end on 5 March (2024 is a leap year)
    active(d, metric, "2024-02-01")  # its 30 days end on 1 March
    stranger = make_user(other_tenant)
    active(stranger, MetricFactory(tenant=other_tenant, key="words"), "2024-03-02")

    series = selectors.active_users(tenant, days("2024-03-01", "2024-03-10"))

    assert [s.date for s in series] == list(days("2024-03-01", "2024-03-10").days())
    assert [s.dau for s in series] == [1, 0, 1, 0, 1, 0, 0, 0, 0, 0]
    assert [s.mau for s in series] == [3, 2, 2, 2, 3, 2, 2, 2, 2, 2]
    pairs = set(MetricDailyChange.objects.filter(tenant=tenant).values_list("user_id", "date"))
    assert [s.mau for s in series] == [brute_force_mau(pairs, s.date) for s in series]


def test_mau_matches_a_brute_force_count_on_irregular_activity(
    tenant: Tenant, metric: Metric
) -> None:
    users = [make_user(tenant) for _ in range(5)]
    offsets = {0: [0, 3, 40, 41, 75], 1: [10, 45], 2: [29, 30, 59, 60, 89], 3: [88], 4: []}
    start = D(2024, 1, 1)
    for index, user in enumerate(users):
        for offset in offsets[index]:
            active(user, metric, (start + dt.timedelta(days=offset)).isoformat())

    period = DateRange(start + dt.timedelta(days=20), start + dt.timedelta(days=95))
    series = selectors.active_users(tenant, period)

    pairs = set(MetricDailyChange.objects.filter(tenant=tenant).values_list("user_id", "date"))
    assert [s.mau for s in series] == [brute_force_mau(pairs, s.date) for s in series]
    assert sum(s.dau for s in series) == len([p for p in pairs if p[1] in period])


def test_new_users_are_counted_on_their_local_creation_date(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    make_user(tenant, at("2024-03-01", 23, 30), tz="Asia/Tokyo")  # 2 March in Tokyo
    make_user(tenant, at("2024-03-01", 10))  # no zone: UTC
    make_user(tenant, at("2024-03-01", 3), tz="America/New_York")  # still 29 February there
    make_user(tenant, at("2024-03-11", 2), tz="America/Los_Angeles")  # 10 March there
    make_user(tenant, at("2024-03-11", 2))  # 11 March: after the range
    make_user(other_tenant, at("2024-03-01", 10))

    series = selectors.new_users(tenant, days("2024-03-01", "2024-03-10"))

    counts = {s.date: s.count for s in series if s.count}
    assert counts == {D(2024, 3, 1): 1, D(2024, 3, 2): 1, D(2024, 3, 10): 1}
    assert len(series) == 10


# --- events ----------------------------------------------------------------------------------


def test_metric_series_sum_events_and_values_per_metric_and_day(
    tenant: Tenant, other_tenant: Tenant, metric: Metric
) -> None:
    alpha = MetricFactory(tenant=tenant, key="alpha", name="Alpha")
    idle = MetricFactory(tenant=tenant, key="zzz-idle", name="Idle")
    bump(tenant)
    u1, u2 = make_user(tenant), make_user(tenant)
    active(u1, metric, "2024-03-01", events=3, change="2.5")
    active(u2, metric, "2024-03-01", events=1, change="-1")
    active(u1, metric, "2024-03-02", events=2, change=10)
    active(u1, alpha, "2024-03-02", events=4, change="0.25")
    active(u1, metric, "2024-02-29", events=9, change=9)  # before the range
    theirs = MetricFactory(tenant=other_tenant, key="words")
    active(make_user(other_tenant), theirs, "2024-03-01", events=5, change=5)

    series = selectors.metric_series(tenant, days("2024-03-01", "2024-03-03"))

    assert [s.metric.key for s in series] == ["alpha", "words", "zzz-idle"]
    by_key = {s.metric.key: s for s in series}
    words = by_key["words"]
    assert [(d.events, d.change) for d in words.days] == [
        (4, Decimal("1.5")),
        (2, Decimal("10")),
        (0, Decimal("0")),
    ]
    assert (words.events, words.change) == (6, Decimal("11.5"))
    assert [(d.events, d.change) for d in by_key["alpha"].days] == [
        (0, 0),
        (4, Decimal("0.25")),
        (0, 0),
    ]
    assert by_key["zzz-idle"].events == 0
    assert idle.key == "zzz-idle"


# --- retention -------------------------------------------------------------------------------


def test_retention_by_weekly_cohort_counts_the_control_group_apart(
    tenant: Tenant, metric: Metric
) -> None:
    # The range is three whole weeks, Sunday 3 March to Saturday 23 March 2024.
    u1 = make_user(tenant, at("2024-03-04"))
    u2 = make_user(tenant, at("2024-03-06"))
    u3 = make_user(tenant, at("2024-03-05"), control=True)
    u4 = make_user(tenant, at("2024-03-11"))
    early = make_user(tenant, at("2024-02-20"))  # started before the range: no cohort
    for user, day in [
        (u1, "2024-03-05"),
        (u1, "2024-03-12"),
        (u1, "2024-03-13"),  # the same week twice counts once
        (u2, "2024-03-20"),
        (u3, "2024-03-05"),
        (u4, "2024-03-11"),
        (u4, "2024-03-18"),
        (early, "2024-03-05"),
    ]:
        active(user, metric, day)

    report = selectors.retention(tenant, days("2024-03-03", "2024-03-23"))

    assert report.weeks == 2
    assert [c.week for c in report.cohorts] == [D(2024, 3, 3), D(2024, 3, 10), D(2024, 3, 17)]
    first, second, third = report.cohorts
    assert (first.treatment.users, first.treatment.active) == (2, [1, 1, 1])
    assert (first.control.users, first.control.active) == (1, [1, 0, 0])
    assert (second.treatment.users, second.treatment.active) == (1, [1, 1])
    assert (second.control.users, second.control.active) == (0, [0, 0])
    assert (third.treatment.users, third.treatment.active) == (0, [0])
    # All cohorts together: each week offset over the cohorts that reached it.
    assert report.average(control=False) == [(2, 3), (2, 3), (1, 2)]
    assert report.average(control=True) == [(1, 1), (0, 1), (0, 1)]


def test_retention_reports_at_most_twelve_weeks_after_a_cohort(
    tenant: Tenant, metric: Metric
) -> None:
    user = make_user(tenant, at("2024-01-02"))
    active(user, metric, "2024-01-02")
    active(user, metric, "2024-03-28")  # 12 weeks later
    active(user, metric, "2024-04-04")  # 13 weeks later: beyond the table

    report = selectors.retention(tenant, days("2024-01-01", "2024-04-30"))

    assert report.weeks == 12
    first = report.cohorts[0]
    assert first.week == D(2023, 12, 31)
    assert first.treatment.active == [1] + [0] * 11 + [1]


# --- streaks ---------------------------------------------------------------------------------


def streak(
    user: EndUser,
    length: int,
    settled: str,
    frequency: str = "daily",
    freezes: int = 0,
    enabled: bool = True,
) -> StreakState:
    settled_through = D.fromisoformat(settled)
    return StreakState.objects.create(
        tenant=user.tenant,
        user=user,
        frequency=frequency,
        length=length,
        started=settled_through - dt.timedelta(days=length - 1),
        settled_through=settled_through,
        due_at=streak_domain.missed_at(settled_through, frequency, dt.UTC),
        freezes=freezes,
        enabled=enabled,
    )


def test_streak_lengths_bucket_live_streaks_settling_overdue_ones(tenant: Tenant) -> None:
    StreakSettings.objects.create(tenant=tenant, freezes_enabled=True, freeze_max_count=5)
    bump(tenant)
    now = at("2024-03-10", 12)
    streak(make_user(tenant), 1, "2024-03-10")
    streak(make_user(tenant), 5, "2024-03-09")
    streak(make_user(tenant), 10, "2024-03-07")  # missed 8 and 9 March, no freeze: lost
    streak(make_user(tenant), 3, "2024-03-08", freezes=2)  # 9 March frozen: still 3
    streak(make_user(tenant), 400, "2024-03-10")
    streak(make_user(tenant), 2, "2024-03-10", enabled=False)  # the user turned streaks off
    streak(make_user(tenant), 4, "2024-03-03", frequency="weekly")  # the old frequency
    make_user(tenant)

    report = selectors.streak_lengths(tenant, now)

    assert report.frequency == "daily"
    counts = {bucket.label: bucket.users for bucket in report.buckets}
    assert counts == {
        "1": 1,
        "2-3": 1,
        "4-7": 1,
        "8-14": 0,
        "15-30": 0,
        "31-60": 0,
        "61-90": 0,
        "91-180": 0,
        "181-365": 0,
        "366+": 1,
    }
    assert (report.with_streak, report.users) == (4, 8)


def period(
    user: EndUser, start: str, length: int, frequency: str = "daily", reset: bool = False
) -> StreakPeriod:
    first = D.fromisoformat(start)
    return StreakPeriod.objects.create(
        tenant=user.tenant,
        user=user,
        frequency=frequency,
        period_start=first,
        period_end=streak_domain.period_end(first, frequency),
        length=length,
        extended=length > 0,
        reset_at=at(start) if reset else None,
    )


def test_active_streaks_per_day_count_extended_and_kept_periods(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    u1, u2, u3 = make_user(tenant), make_user(tenant), make_user(tenant)
    period(u1, "2024-03-01", 1)
    period(u2, "2024-03-01", 3)
    period(u1, "2024-03-02", 2)
    period(u2, "2024-03-02", 0, reset=True)
    period(u3, "2024-02-29", 7)  # before the range
    period(u3, "2024-03-03", 1, frequency="weekly")  # another frequency
    period(make_user(other_tenant), "2024-03-01", 1)

    report = selectors.streak_activity(tenant, days("2024-03-01", "2024-03-03"))

    assert report.frequency == "daily"
    assert [(p.start, p.end, p.streaks) for p in report.periods] == [
        (D(2024, 3, 1), D(2024, 3, 1), 2),
        (D(2024, 3, 2), D(2024, 3, 2), 1),
        (D(2024, 3, 3), D(2024, 3, 3), 0),
    ]


def test_active_weekly_streaks_are_counted_per_week(tenant: Tenant) -> None:
    StreakSettings.objects.create(tenant=tenant, frequency="weekly")
    bump(tenant)
    u1, u2 = make_user(tenant), make_user(tenant)
    period(u1, "2024-02-25", 1, frequency="weekly")
    period(u1, "2024-03-03", 2, frequency="weekly")
    period(u2, "2024-03-03", 1, frequency="weekly")

    report = selectors.streak_activity(tenant, days("2024-03-01", "2024-03-10"))

    assert [(p.start, p.end, p.streaks) for p in report.periods] == [
        (D(2024, 2, 25), D(2024, 3, 2), 1),
        (D(2024, 3, 3), D(2024, 3, 9), 2),
        (D(2024, 3, 10), D(2024, 3, 16), 0),
    ]


# --- points ----------------------------------------------------------------------------------


def award(
    user: EndUser,
    system: PointsSystem,
    trigger: PointsTrigger | None,
    points: int,
    day: str,
    kind: str | None = None,
) -> PointsAward:
    return PointsAward.objects.create(
        tenant=user.tenant,
        user=user,
        system=system,
        trigger=trigger,
        trigger_snapshot={"type": kind or (trigger.type if trigger else "")},
        awarded=points,
        total_after=points,
        dedupe_key=f"{day}:{points}:{kind}:{trigger.pk if trigger else 0}",
        created=at(day),
        local_date=D.fromisoformat(day),
    )


def test_points_per_day_by_trigger_type_and_users_per_level(tenant: Tenant) -> None:
    xp = PointsSystem.objects.create(tenant=tenant, key="xp", name="XP")
    old = PointsSystem.objects.create(tenant=tenant, key="old", name="Old", status="archived")
    silver = PointsLevel.objects.create(system=xp, key="silver", name="Silver", points=100)
    PointsLevel.objects.create(system=xp, key="gold", name="Gold", points=500)
    on_metric = PointsTrigger.objects.create(system=xp, type="metric", points=10)
    on_streak = PointsTrigger.objects.create(system=xp, type="streak", points=5)
    bump(tenant)
    u1, u2, u3 = make_user(tenant), make_user(tenant), make_user(tenant)
    make_user(tenant)  # no points at all: below every level
    PointsTotal.objects.create(tenant=tenant, user=u1, system=xp, total=50)
    PointsTotal.objects.create(tenant=tenant, user=u2, system=xp, total=150, level=silver)
    PointsTotal.objects.create(tenant=tenant, user=u3, system=xp, total=700)
    award(u1, xp, on_metric, 10, "2024-03-01")
    award(u2, xp, on_metric, 20, "2024-03-01")
    award(u2, xp, on_streak, 5, "2024-03-01")
    award(u1, xp, on_metric, -3, "2024-03-02")
    award(u1, xp, None, 7, "2024-03-02", kind="achievement")  # its trigger was deleted
    award(u1, xp, on_metric, 99, "2024-02-29")  # before the range
    award(u1, old, None, 1, "2024-03-01", kind="metric")  # an archived system

    systems = selectors.points_summary(tenant, days("2024-03-01", "2024-03-03"))

    assert [s.system.key for s in systems] == ["xp"]
    (xp_points,) = systems
    assert xp_points.trigger_types == ["metric", "streak", "achievement"]
    assert [(d.date, d.by_trigger_type, d.points) for d in xp_points.days] == [
        (D(2024, 3, 1), {"metric": 30, "streak": 5, "achievement": 0}, 35),
        (D(2024, 3, 2), {"metric": -3, "streak": 0, "achievement": 7}, 4),
        (D(2024, 3, 3), {"metric": 0, "streak": 0, "achievement": 0}, 0),
    ]
    assert [(lv.key, lv.name, lv.users) for lv in xp_points.levels] == [
        (None, "No level", 2),
        ("silver", "Silver", 1),
        ("gold", "Gold", 1),
    ]
    assert old.status == "archived"


def test_a_system_without_levels_has_no_level_distribution(tenant: Tenant) -> None:
    PointsSystem.objects.create(tenant=tenant, key="coins", name="Coins")
    bump(tenant)
    make_user(tenant)

    (coins,) = selectors.points_summary(tenant, days("2024-03-01", "2024-03-01"))

    assert (coins.trigger_types, coins.levels) == ([], [])
    assert [d.points for d in coins.days] == [0]


# --- achievements ----------------------------------------------------------------------------


def test_achievement_completions_per_day_and_rarity(tenant: Tenant, other_tenant: Tenant) -> None:
    first = Achievement.objects.create(
        tenant=tenant, name="First", trigger="api", key="first", status="active"
    )
    second = Achievement.objects.create(
        tenant=tenant, name="Second", trigger="api", key="second", status="active"
    )
    Achievement.objects.create(tenant=tenant, name="Hidden", trigger="api", key="hidden")
    theirs = Achievement.objects.create(tenant=other_tenant, name="Theirs", trigger="api", key="t")
    bump(tenant)
    u1, u2, u3, _ = (make_user(tenant) for _ in range(4))

    def complete(achievement: Achievement, user: EndUser, when: dt.datetime, **kw: Any) -> None:
        AchievementCompletion.objects.create(
            tenant=user.tenant, achievement=achievement, user=user, completed_at=when, **kw
        )

    complete(first, u1, at("2024-03-01", 10))
    complete(first, u2, at("2024-03-01", 23, 59))
    complete(first, u3, at("2024-02-20"))  # before the range
    complete(second, u1, at("2024-03-02", 8), backdated=True)
    complete(theirs, make_user(other_tenant), at("2024-03-01"))

    summary = selectors.achievements_summary(tenant, days("2024-03-01", "2024-03-03"))

    assert summary.users == 4
    assert [(d.date, d.completions, d.backdated) for d in summary.days] == [
        (D(2024, 3, 1), 2, 0),
        (D(2024, 3, 2), 1, 1),
        (D(2024, 3, 3), 0, 0),
    ]
    assert [
        (a.achievement.key, a.completions, a.in_range, a.rarity) for a in summary.achievements
    ] == [("first", 3, 2, 75.0), ("second", 1, 1, 25.0), ("hidden", 0, 0, 0.0)]


# --- leaderboards ----------------------------------------------------------------------------


def board(tenant: Tenant, key: str, **fields: Any) -> Leaderboard:
    fields.setdefault("status", "active")
    return Leaderboard.objects.create(
        tenant=tenant, key=key, name=key.title(), rank_by="metric", **fields
    )


def entries(
    leaderboard: Leaderboard, run_start: str, users: list[EndUser], group: str = ""
) -> None:
    for user in users:
        LeaderboardEntry.objects.create(
            leaderboard=leaderboard,
            run_start=D.fromisoformat(run_start),
            group=group,
            user=user,
            value=1,
            reached_at=at(run_start),
        )


def test_leaderboard_participation_per_run(tenant: Tenant, other_tenant: Tenant) -> None:
    u1, u2, u3 = make_user(tenant), make_user(tenant), make_user(tenant)
    forever = board(tenant, "forever", start=D(2024, 1, 1))
    weekly = board(tenant, "weekly", start=D(2024, 2, 25), run_unit="day", run_interval=7)
    monthly = board(
        tenant,
        "monthly",
        start=D(2024, 1, 1),
        end=D(2024, 2, 29),
        run_unit="month",
        run_interval=1,
        status="finished",
    )
    board(tenant, "draft", start=D(2024, 5, 1), status="inactive")
    theirs = board(other_tenant, "forever", start=D(2024, 1, 1))
    bump(tenant)
    entries(forever, "2024-01-01", [u1, u2])
    entries(forever, "2024-01-01", [u3, u1], group="country=fr")  # u1 twice: one participant
    entries(weekly, "2024-02-25", [u1])
    entries(weekly, "2024-03-03", [u1, u2])
    entries(monthly, "2024-01-01", [u1, u2])
    entries(monthly, "2024-02-01", [u3])
    entries(theirs, "2024-01-01", [make_user(other_tenant)])

    boards = selectors.leaderboard_participation(
        tenant, days("2024-03-01", "2024-03-12"), D(2024, 3, 12)
    )

    summary = {
        b.board.key: (
            b.current and (b.current.start, b.current.end, b.current.participants),
            [(r.start, r.end, r.participants) for r in b.runs],
        )
        for b in boards
    }
    assert summary == {
        "forever": ((D(2024, 1, 1), None, 3), [(D(2024, 1, 1), None, 3)]),
        "weekly": (
            (D(2024, 3, 10), D(2024, 3, 16), 0),
            [(D(2024, 2, 25), D(2024, 3, 2), 1), (D(2024, 3, 3), D(2024, 3, 9), 2)],
        ),
        "monthly": ((D(2024, 2, 1), D(2024, 2, 29), 1), []),
        "draft": (None, []),
    }


# --- overview and ranges ---------------------------------------------------------------------


def test_overview_counts_users_active_users_and_events_of_the_last_week(
    tenant: Tenant, other_tenant: Tenant, metric: Metric
) -> None:
    u1, u2, u3 = make_user(tenant), make_user(tenant), make_user(tenant)
    make_user(tenant)
    active(u1, metric, "2024-03-10", events=3)
    active(u2, metric, "2024-03-04", events=2)
    active(u2, metric, "2024-03-03", events=50)  # eight days ago: outside the week
    active(u3, metric, "2024-02-10", events=1)  # the 30th day before today: in MAU
    active(make_user(other_tenant), MetricFactory(tenant=other_tenant), "2024-03-10", events=9)

    report = selectors.overview(tenant, D(2024, 3, 10))

    assert (report.users, report.dau, report.mau) == (4, 1, 3)
    assert [(d.date, d.count) for d in report.events] == [
        (D(2024, 3, 4), 2),
        (D(2024, 3, 5), 0),
        (D(2024, 3, 6), 0),
        (D(2024, 3, 7), 0),
        (D(2024, 3, 8), 0),
        (D(2024, 3, 9), 0),
        (D(2024, 3, 10), 3),
    ]


@pytest.mark.parametrize(
    ("name", "first"), [("7d", "2024-03-04"), ("30d", "2024-02-10"), ("90d", "2023-12-12")]
)
def test_named_ranges_end_today(tenant: Tenant, name: str, first: str) -> None:
    assert selectors.date_range_resolve(tenant, name, D(2024, 3, 10)) == days(first, "2024-03-10")


def test_the_whole_range_starts_at_the_first_data_or_the_tenant_creation(
    tenant: Tenant, metric: Metric
) -> None:
    Tenant.objects.filter(pk=tenant.pk).update(created=at("2024-02-01"))
    tenant.refresh_from_db()
    today = D(2024, 3, 10)
    assert selectors.date_range_resolve(tenant, "all", today) == days("2024-02-01", "2024-03-10")

    active(make_user(tenant), metric, "2024-01-15")  # an imported event from before
    assert selectors.date_range_resolve(tenant, "all", today).start == D(2024, 1, 15)

    active(make_user(tenant), metric, "2019-01-01")
    whole = selectors.date_range_resolve(tenant, "all", today)
    assert whole.length == selectors.MAX_RANGE_DAYS
    assert whole.end == today
