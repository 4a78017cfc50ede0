"""A finished week: placements, zones, tiers, idle and absent users, ties, and rewards paid
exactly once (the job run twice, or after a run that died half-way)."""

import datetime as dt
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.achievements.configuration import achievement_create
from apps.achievements.domain import AchievementSettings
from apps.achievements.models import AchievementCompletion
from apps.leagues.choices import Absent, Idle, Zone
from apps.leagues.models import LeagueEntry
from apps.leagues.services import cohorts_finish
from apps.metrics.models import Metric
from apps.pipeline.leagues import leagues_week_end
from apps.points.configuration import points_system_create
from apps.points.domain import PointsSystemSettings
from apps.points.ledger import Ledger
from apps.points.models import PointsAward, PointsSystem, PointsTotal
from apps.points.selectors import points_config
from apps.users.models import EndUser
from tests.leagues.test_weeks_and_cohorts import MONDAY, league_of, send

pytestmark = pytest.mark.django_db

WEEK_END = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)


def week_of_events(api_client: Any, metric: Metric, values: dict[str, Any]) -> None:
    with time_machine.travel(MONDAY, tick=True):
        for user, value in values.items():
            send(api_client, metric, user, value)


def results() -> dict[str, tuple[int | None, str | None, int | None, bool]]:
    return {
        e.user.external_id: (e.placement, e.zone, e.next_tier, e.left)
        for e in LeagueEntry.objects.filter(week_start=WEEK_END - dt.timedelta(days=7))
    }


def test_ties_go_to_whoever_reached_the_score_first(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league_of(tenant, metric)
    week_of_events(api_client, metric, {"late": 5, "early": 5, "low": 1})
    with time_machine.travel(MONDAY + dt.timedelta(hours=1), tick=False):
        send(api_client, metric, "late", 5)  # late reaches 10 first
        send(api_client, metric, "early", 5)
    cohorts_finish(WEEK_END)
    # Both have 10; "late" reached 10 first (its second event came first).
    assert results()["late"][0] == 1
    assert results()["early"][0] == 2


def test_users_who_scored_nothing_demote_or_leave_as_configured(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league_of(tenant, metric, idle=Idle.LEAVE)
    week_of_events(api_client, metric, {"a": 9, "b": 0, "c": 3})
    cohorts_finish(WEEK_END)
    assert results() == {
        "a": (1, Zone.PROMOTION, 1, False),
        "c": (2, Zone.PROMOTION, 1, False),
        "b": (3, Zone.SAFE, 0, True),  # the lowest tier: nothing lower, but they left
    }


def test_an_absent_user_comes_back_one_tier_lower_when_the_league_says_so(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league_of(tenant, metric, absent=Absent.DEMOTE)
    week_of_events(api_client, metric, {"a": 9, "b": 5, "c": 1})
    cohorts_finish(WEEK_END)
    assert results()["a"][2] == 1
    two_weeks_later = WEEK_END + dt.timedelta(days=7, hours=3)
    with time_machine.travel(two_weeks_later, tick=False):
        send(api_client, metric, "a", 1)  # skipped a week: back to tier 0
        send(api_client, metric, "b", 1)
    back = LeagueEntry.objects.filter(week_start=WEEK_END + dt.timedelta(days=7))
    assert {e.user.external_id: e.tier for e in back} == {"a": 0, "b": 0}


def test_a_late_event_of_a_finished_week_changes_nothing(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league_of(tenant, metric)
    week_of_events(api_client, metric, {"a": 9, "b": 5})
    cohorts_finish(WEEK_END)
    before = results()
    with time_machine.travel(WEEK_END + dt.timedelta(minutes=5), tick=False):
        send(api_client, metric, "b", 100)  # counts in the new week, not the finished one
    assert results() == before
    assert LeagueEntry.objects.get(user__external_id="b", week_start=WEEK_END).score == 100


@pytest.fixture
def xp(tenant: Tenant) -> PointsSystem:
    system, _ = points_system_create(tenant, PointsSystemSettings(key="xp", name="XP"))
    return system


def rewarded_league(tenant: Tenant, metric: Metric, xp: PointsSystem) -> None:
    badge = achievement_create(
        tenant, AchievementSettings(name="Champion", key="champion", trigger="api", status="active")
    )
    league_of(
        tenant,
        metric,
        rewards=[
            {"from_place": 1, "to_place": 1, "achievement_id": str(badge.public_id)},
            {"from_place": 1, "to_place": 2, "points": 50, "points_system_id": str(xp.public_id)},
            {"from_place": 3, "tier": "Gold", "points": 5, "points_system_id": str(xp.public_id)},
        ],
    )


def xp_of(user: str) -> int:
    total = PointsTotal.objects.filter(user__external_id=user).first()
    return total.total if total else 0


def test_rewards_are_paid_once_when_the_job_runs_twice(
    api_client: Any, tenant: Tenant, metric: Metric, xp: PointsSystem
) -> None:
    rewarded_league(tenant, metric, xp)
    week_of_events(api_client, metric, {"a": 9, "b": 5, "c": 1})
    assert leagues_week_end(WEEK_END) == (1, 2)
    assert leagues_week_end(WEEK_END) == (0, 0)
    assert (xp_of("a"), xp_of("b"), xp_of("c")) == (50, 50, 0)  # Gold's reward: not Bronze's
    assert AchievementCompletion.objects.filter(user__external_id="a").count() == 1
    award = PointsAward.objects.filter(user__external_id="a").get()
    assert award.trigger_id is None
    assert not LeagueEntry.objects.filter(rewards_due=True).exists()


def test_a_run_that_died_after_paying_does_not_pay_again(
    api_client: Any, tenant: Tenant, metric: Metric, xp: PointsSystem
) -> None:
    rewarded_league(tenant, metric, xp)
    week_of_events(api_client, metric, {"a": 9, "b": 5})
    cohorts_finish(WEEK_END)
    # What a run that died before marking the entry paid had already written: b's points.
    entry = LeagueEntry.objects.get(user__external_id="b")
    ledger = Ledger(tenant, EndUser.objects.get(external_id="b"), WEEK_END)
    system = points_config(tenant)["xp"]
    ledger.load([system])
    ledger.award(system, None, 50, f"league:{entry.pk}:0")  # its one reward
    ledger.flush()
    assert entry.rewards_due
    assert leagues_week_end(WEEK_END) == (0, 2)
    assert (xp_of("a"), xp_of("b")) == (50, 50)


def test_reward_points_show_in_the_points_history_without_a_trigger(
    api_client: Any, tenant: Tenant, metric: Metric, xp: PointsSystem
) -> None:
    rewarded_league(tenant, metric, xp)
    week_of_events(api_client, metric, {"a": 9})
    leagues_week_end(WEEK_END)
    response = api_client.get("/v1/users/a/points/xp")
    assert response.status_code == 200, response.content
    [award] = response.json()["awards"]
    assert award["awarded"] == 50
    assert "trigger" not in award


def test_the_results_of_another_tenant_are_apart(
    api_client: Any, other_tenant_client: Any, tenant: Tenant, other_tenant: Tenant, metric: Metric
) -> None:
    from tests.factories import MetricFactory, bump

    theirs = MetricFactory(tenant=other_tenant, key=metric.key)
    bump(other_tenant)
    league_of(tenant, metric)
    league_of(other_tenant, theirs)
    week_of_events(api_client, metric, {"a": 9, "b": 5})
    with time_machine.travel(MONDAY, tick=False):
        send(other_tenant_client, theirs, "a", 1)
    cohorts_finish(WEEK_END)
    ours = LeagueEntry.objects.filter(league__tenant=tenant)
    assert sorted(e.placement for e in ours) == [1, 2]
    [alone] = LeagueEntry.objects.filter(league__tenant=other_tenant)
    assert (alone.placement, alone.cohort.members) == (1, 1)
    assert {e.cohort_id for e in ours}.isdisjoint({alone.cohort_id})
