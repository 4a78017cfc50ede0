"""The ledger's write assumes every award is new and lets the unique dedupe key decide
(apps/points/sql.py). An award paid before (its trigger's mark lost, as after a restore) is
not paid again, and what was written assuming it would be is set right: the total, the level,
the daily change, the running totals of the other awards and the response."""

import pytest

from apps.points.models import PointsAward, PointsDailyChange, PointsTotal, PointsTriggerMark
from tests.points.test_points_api import Admin, event

# `sql`: make unit runs these on PostgreSQL too, whose statements differ (apps/core/db.py).
pytestmark = [pytest.mark.django_db, pytest.mark.sql]


@pytest.fixture
def triggers(api_client, metric):
    admin = Admin(api_client)
    xp = admin.system("xp", name="XP")
    tens = admin.metric_trigger(xp, metric, 5, threshold=10)  # 5 at every 10 units
    admin.metric_trigger(xp, metric, 1)  # 1 a unit
    for key, points in (("bronze", 10), ("silver", 20)):
        admin.level(xp, key, points)
    return tens


def awards() -> list[tuple[int, int]]:
    return list(PointsAward.objects.order_by("id").values_list("awarded", "total_after"))


def test_an_award_paid_before_is_dropped_and_the_rest_set_right(api_client, triggers):
    first = event(api_client, value=10)["points"]["xp"]
    assert (first["added"], first["total"], first["level"]["key"]) == (15, 15, "bronze")
    # The mark of the 10-unit trigger is lost: it would pay the 10th unit again.
    PointsTriggerMark.objects.filter(trigger__public_id=triggers["id"]).delete()

    body = event(api_client, value=1)["points"]["xp"]

    assert (body["added"], body["total"]) == (1, 16)
    assert "level" not in body  # still bronze: 21 would have been silver
    assert [(a["awarded"], a["total"]) for a in body["awards"]] == [(1, 16)]
    assert awards() == [(5, 5), (10, 15), (1, 16)] or awards() == [(10, 10), (5, 15), (1, 16)]
    row = PointsTotal.objects.get()
    assert (row.total, row.level.key) == (16, "bronze")
    assert PointsDailyChange.objects.get().change == 16


def test_only_awards_paid_before_means_no_change(api_client, triggers, metric):
    event(api_client, value=10)
    PointsTriggerMark.objects.filter(trigger__public_id=triggers["id"]).delete()
    # A negative event pays nothing per unit; only the lost 10-unit mark "moves".
    event(api_client, value=-1)
    body = event(api_client, value=1)  # 10 again: the 10th unit was paid
    assert body["points"] == {}
    assert PointsTotal.objects.get().total == 15
    assert PointsDailyChange.objects.get().change == 15
    assert len(awards()) == 2
