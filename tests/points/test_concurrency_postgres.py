"""Points under concurrency on PostgreSQL, where row locks are real (SQLite serializes every
write transaction, so these races cannot happen there): parallel events for one user, the
maxPoints cap, blockIfOutOfPoints, and the time job run twice at once."""

import datetime as dt
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connections
from django.db.models import Sum
from rest_framework.test import APIClient

from apps.accounts import history
from apps.accounts.services import tenant_config_changed
from apps.metrics.models import MetricEvent
from apps.points.jobs import points_time_triggers
from apps.points.models import PointsAward, PointsDailyChange, PointsTotal
from apps.users.models import EndUser
from tests.concurrency import POSTGRES_ONLY, run_all
from tests.factories import MetricFactory, OrganizationWithKey, bump

pytestmark = [
    *POSTGRES_ONLY,
]

THREADS = 20


def _client(api_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=api_key)
    return client


def _send(api_key: str, metric: str, user: str, value: Any, key: str | None = None):
    def send() -> int:
        headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
        response = _client(api_key).post(
            f"/v1/metrics/{metric}/event",
            {"user": {"id": user}, "value": value},
            format="json",
            **headers,
        )
        return response.status_code

    return send


def _admin(org: OrganizationWithKey, path: str, items: list[dict[str, Any]]) -> list[dict]:
    response = _client(org.admin_key).post(f"/admin/v1/{path}", items, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["issues"] == [], response.content
    return response.json()["created"]


def _system(org: OrganizationWithKey, key: str = "xp", **item: Any) -> dict[str, Any]:
    return _admin(org, "points", [{"name": key.upper(), "key": key, **item}])[0]


def _trigger(org: OrganizationWithKey, system: dict[str, Any], **item: Any) -> dict[str, Any]:
    return _admin(org, f"points/{system['id']}/triggers", [{"status": "active", **item}])[0]


def _metric_trigger(org, system, metric, points, threshold=1, **item):
    return _trigger(
        org,
        system,
        type="metric",
        points=points,
        metricId=str(metric.public_id),
        metricThreshold=threshold,
        **item,
    )


def _assert_ledger_consistent(user: str, system: str = "xp") -> list[PointsAward]:
    """The ledger replays exactly: each award's running total is the previous one plus the
    award, and the stored balance and daily changes agree with it."""
    awards = list(
        PointsAward.objects.filter(user__external_id=user, system__key=system).order_by("id")
    )
    running = 0
    for award in awards:
        running += award.awarded
        assert award.total_after == running, [(a.awarded, a.total_after) for a in awards]
    total = PointsTotal.objects.get(user__external_id=user, system__key=system).total
    assert total == running
    daily = PointsDailyChange.objects.filter(user__external_id=user, system__key=system)
    assert daily.aggregate(s=Sum("change"))["s"] == running
    return awards


@pytest.mark.django_db(transaction=True)
def test_parallel_events_for_one_user_yield_exactly_the_expected_ledger():
    org = OrganizationWithKey("Race")
    metric = MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    xp = _system(org, "xp")
    coins = _system(org, "coins")
    _trigger(org, xp, type="user_creation", points=100)
    _metric_trigger(org, xp, metric, 10, threshold=1)
    _metric_trigger(org, xp, metric, 7, threshold=3)
    _metric_trigger(org, coins, metric, 1, threshold=2)
    # 20 requests for a user who does not exist yet: 15 distinct keys, 5 of them sent twice.
    keys = [f"k{i}" for i in range(15)] + [f"k{i}" for i in range(5)]
    jobs = [_send(org.admin_key, "words", "racer", 1, key) for key in keys]

    results = run_all(jobs)

    assert Counter(results) == {201: 15, 202: 5}, results
    assert EndUser.objects.filter(external_id="racer").count() == 1
    assert MetricEvent.objects.count() == 15
    awards = _assert_ledger_consistent("racer", "xp")
    # Once for creation; 10 for each of 15 words; 7 for each of the 5 multiples of 3.
    assert sorted(a.awarded for a in awards) == sorted([100] + [10] * 15 + [7] * 5)
    assert awards[-1].total_after == 100 + 150 + 35
    assert len({a.dedupe_key for a in awards}) == len(awards)
    coins_awards = _assert_ledger_consistent("racer", "coins")
    assert [a.awarded for a in coins_awards] == [1] * 7
    # Every award of a metric trigger is for a multiple of its own, never paid twice.
    by_trigger = Counter(a.trigger_id for a in awards)
    assert sorted(by_trigger.values()) == [1, 5, 15]


@pytest.mark.django_db(transaction=True)
def test_max_points_holds_under_concurrency():
    org = OrganizationWithKey("Cap")
    metric = MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    xp = _system(org, "xp", maxPoints=55)
    _metric_trigger(org, xp, metric, 10)

    results = run_all([_send(org.admin_key, "words", "racer", 1) for _ in range(THREADS)])

    assert results == [201] * THREADS, results
    awards = _assert_ledger_consistent("racer")
    assert sorted(a.awarded for a in awards) == [5, 10, 10, 10, 10, 10]
    assert max(a.total_after for a in awards) == 55
    assert PointsTotal.objects.get().total == 55


@pytest.mark.django_db(transaction=True)
def test_block_if_out_of_points_holds_under_concurrency():
    org = OrganizationWithKey("Shop")
    words = MetricFactory(tenant=org.tenant, key="words")
    spend = MetricFactory(tenant=org.tenant, key="spend")
    bump(org.tenant)
    xp = _system(org, "xp")
    _metric_trigger(org, xp, words, 10)
    _metric_trigger(org, xp, spend, -10, blockIfOutOfPoints=True)
    assert _send(org.admin_key, "words", "buyer", 5)() == 201  # a balance of 50

    results = run_all([_send(org.admin_key, "spend", "buyer", 1) for _ in range(THREADS)])

    assert Counter(results) == {201: 5, 422: THREADS - 5}, results
    awards = _assert_ledger_consistent("buyer")
    assert [a.awarded for a in awards] == [50] + [-10] * 5
    assert min(a.total_after for a in awards) == 0
    assert PointsTotal.objects.get().total == 0
    # Refused events wrote nothing: only the accepted purchases were recorded.
    assert MetricEvent.objects.filter(metric=spend).count() == 5


@pytest.mark.django_db(transaction=True)
def test_earning_and_spending_in_parallel_never_goes_below_zero():
    org = OrganizationWithKey("Mixed")
    words = MetricFactory(tenant=org.tenant, key="words")
    spend = MetricFactory(tenant=org.tenant, key="spend")
    bump(org.tenant)
    xp = _system(org, "xp")
    _metric_trigger(org, xp, words, 10)
    _metric_trigger(org, xp, spend, -10, blockIfOutOfPoints=True)
    jobs = [_send(org.admin_key, "words", "u", 1) for _ in range(10)]
    jobs += [_send(org.admin_key, "spend", "u", 1) for _ in range(10)]

    results = run_all(jobs)

    assert results[:10] == [201] * 10, results
    spent = results[10:].count(201)
    assert set(results[10:]) <= {201, 422}
    awards = _assert_ledger_consistent("u")
    assert all(a.total_after >= 0 for a in awards)
    assert PointsTotal.objects.get().total == 100 - 10 * spent
    assert MetricEvent.objects.filter(metric=spend).count() == spent


@pytest.mark.django_db(transaction=True)
def test_time_job_run_twice_at_once_awards_once():
    org = OrganizationWithKey("Clock")
    MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    xp = _system(org, "xp")
    _trigger(org, xp, type="time", points=5, timeUnit="hours", timeInterval=1)
    users = [f"user-{i}" for i in range(12)]
    for user in users:
        assert _send(org.admin_key, "words", user, 1)() == 201
    created = EndUser.objects.order_by("created").first().created
    now = max(EndUser.objects.values_list("created", flat=True)) + dt.timedelta(hours=3)
    expected_intervals = {
        u.external_id: int((now - u.created) // dt.timedelta(hours=1))
        for u in EndUser.objects.all()
    }
    assert created <= now

    results = run_all([lambda: points_time_triggers(now) for _ in range(4)])

    assert not [r for r in results if isinstance(r, Exception)], results
    # Each user was paid by at most one of the runs (one award for all intervals due)...
    for user in users:
        paid = list(
            PointsAward.objects.filter(user__external_id=user).values_list("awarded", flat=True)
        )
        assert paid in ([], [5 * expected_intervals[user]]), (user, paid)
    # ...and a user a parallel run skipped is paid by a later run, once.
    points_time_triggers(now)
    points_time_triggers(now)
    for user in users:
        awards = _assert_ledger_consistent(user)
        assert [a.awarded for a in awards] == [5 * expected_intervals[user]], user


@pytest.mark.django_db(transaction=True)
def test_time_job_skips_only_busy_users_not_a_whole_tenant():
    """The job skips a user whose row is locked (an event in flight) and pays them on the next
    run. A configuration write of the same tenant is not a reason to skip everybody: it locks
    the tenant row, not the users."""
    org = OrganizationWithKey("Config")
    MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    xp = _system(org, "xp")
    _trigger(org, xp, type="time", points=5, timeUnit="hours", timeInterval=1)
    for i in range(3):
        assert _send(org.admin_key, "words", f"user-{i}", 1)() == 201
    now = max(EndUser.objects.values_list("created", flat=True)) + dt.timedelta(hours=2)
    locked, release = threading.Event(), threading.Event()

    def admin_write_in_flight() -> None:
        try:
            with history.recording(org.tenant, ()):
                tenant_config_changed(org.tenant)  # what every admin write does
                locked.set()
                release.wait(timeout=30)
        finally:
            connections.close_all()

    writer = threading.Thread(target=admin_write_in_flight)
    writer.start()
    assert locked.wait(timeout=30)
    try:
        paid = points_time_triggers(now)
    finally:
        release.set()
        writer.join(timeout=30)

    assert paid == 3
    assert PointsAward.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_time_job_alongside_events_for_the_same_users():
    org = OrganizationWithKey("Busy")
    words = MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    xp = _system(org, "xp")
    _trigger(org, xp, type="time", points=5, timeUnit="hours", timeInterval=1)
    _metric_trigger(org, xp, words, 1)
    users = [f"user-{i}" for i in range(5)]
    for user in users:
        assert _send(org.admin_key, "words", user, 1)() == 201
    now = max(EndUser.objects.values_list("created", flat=True)) + dt.timedelta(hours=2)
    jobs: list[Callable[[], Any]] = [lambda: points_time_triggers(now) for _ in range(2)]
    jobs += [_send(org.admin_key, "words", user, 1) for user in users for _ in range(3)]

    results = run_all(jobs)

    assert not [r for r in results if isinstance(r, Exception)], results
    assert results[2:] == [201] * 15
    points_time_triggers(now)  # pays anyone a run skipped while an event held the lock
    for user in EndUser.objects.all():
        intervals = int((now - user.created) // dt.timedelta(hours=1))
        awards = _assert_ledger_consistent(user.external_id)
        time_points = sum(a.awarded for a in awards if a.dedupe_key.startswith("time:"))
        assert time_points == 5 * intervals
        assert sum(a.awarded for a in awards if a.dedupe_key.startswith("metric:")) == 4
