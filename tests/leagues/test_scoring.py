"""What counts in a week: points leagues, batches, filters, inactive leagues."""

from decimal import Decimal
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.leagues.choices import ScoreBy, Status
from apps.leagues.configuration import league_update
from apps.leagues.domain import LeagueSettings
from apps.leagues.models import LeagueEntry
from apps.metrics.models import Metric
from apps.points.configuration import points_system_create
from apps.points.domain import PointsSystemSettings, PointsTriggerSettings
from tests.leagues.test_weeks_and_cohorts import MONDAY, league_of, send

pytestmark = pytest.mark.django_db


def scores() -> dict[str, Decimal]:
    return {e.user.external_id: e.score for e in LeagueEntry.objects.select_related("user")}


def test_a_points_league_scores_the_points_earned_and_ignores_events_that_earn_none(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    xp, _ = points_system_create(
        tenant,
        PointsSystemSettings(key="xp", name="XP"),
        triggers=[
            PointsTriggerSettings(
                type="metric",
                points=10,
                status="active",
                metric_id=str(metric.public_id),
                metric_threshold=5,
            )
        ],
    )
    league_of(
        tenant, metric, score_by=ScoreBy.POINTS, metric_id=None, points_system_id=str(xp.public_id)
    )
    with time_machine.travel(MONDAY, tick=True):
        send(api_client, metric, "a", 2)  # no points yet: not in the league
        assert scores() == {}
        send(api_client, metric, "a", 3)  # 5 words: 10 points
        send(api_client, metric, "a", 4)
        send(api_client, metric, "a", 1)  # 10 words: 10 more
    assert scores() == {"a": Decimal(20)}


def test_batched_events_count_as_events_sent_one_by_one(
    api_client: Any, tenant: Tenant, metric: Metric, django_capture_on_commit_callbacks: Any
) -> None:
    league_of(tenant, metric)
    body = [{"key": metric.key, "user": {"id": u}, "value": v} for u, v in (("a", 2), ("b", 3))]
    body.append({"key": metric.key, "user": {"id": "a"}, "value": 4})
    with time_machine.travel(MONDAY, tick=True), django_capture_on_commit_callbacks(execute=True):
        assert api_client.post("/admin/v1/metrics/events", body).status_code == 202
    assert scores() == {"a": Decimal(6), "b": Decimal(3)}


def test_only_users_who_pass_the_filters_and_only_active_leagues_count(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    from tests.factories import AttributeFactory, bump

    plan = AttributeFactory(tenant=tenant, key="plan")
    bump(tenant)
    league = league_of(
        tenant,
        metric,
        user_attributes=[{"attributeId": str(plan.public_id), "attributeValue": "pro"}],
    )
    with time_machine.travel(MONDAY, tick=True):
        for user, value in (("pro", "pro"), ("free", "free")):
            body = {"user": {"id": user, "attributes": {"plan": value}}, "value": 1}
            assert api_client.post(f"/v1/metrics/{metric.key}/event", body).status_code == 201
        league_update(tenant, league, LeagueSettings(status=Status.INACTIVE))
        send(api_client, metric, "pro", 5)
    assert scores() == {"pro": Decimal(1)}
