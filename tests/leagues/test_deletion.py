"""What a league keeps: its metric or points system, until the league goes."""

from typing import Any

import pytest

from apps.accounts.models import Tenant
from apps.leagues.models import League
from apps.metrics.models import Metric
from tests.leagues.test_weeks_and_cohorts import league_of

pytestmark = pytest.mark.django_db


def test_a_metric_a_league_scores_cannot_be_deleted(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league_of(tenant, metric)
    response = api_client.delete(f"/admin/v1/metrics?ids={metric.public_id}")
    assert response.status_code == 200, response.content
    [issue] = response.json()["issues"]
    assert issue["message"] == (
        "The metric words cannot be deleted: the league Weekly scores by it (delete the league "
        "first)"
    )
    assert Metric.objects.filter(pk=metric.pk).exists()


def test_once_the_league_is_deleted_its_metric_can_be(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    from apps.leagues.configuration import league_delete

    league_delete(tenant, league_of(tenant, metric))
    response = api_client.delete(f"/admin/v1/metrics?ids={metric.public_id}")
    assert response.json()["issues"] == []
    assert not Metric.objects.filter(pk=metric.pk).exists()
    assert not League.objects.exists()
