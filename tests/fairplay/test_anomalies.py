"""Anomaly rules (apps/fairplay): a user whose total in one of a rule's windows passes its
threshold is flagged, with the evidence, once per rule and window, announced by user.flagged;
the rules are an admin Collection, recorded in the change history; tenants without rules pay
nothing per event."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import ConfigChange, Tenant
from apps.fairplay.choices import FlagStatus
from apps.fairplay.domain import window_of
from apps.fairplay.models import AnomalyCount, UserFlag
from apps.fairplay.services import flag_resolve
from apps.metrics.models import Metric
from apps.users.models import EndUser
from tests.webhooks.test_webhooks import committed, endpoint, run

pytestmark = pytest.mark.django_db

RULES = "/admin/ext/v1/anomaly-rules"
# 12:00 UTC is the start of a 30-minute window (windows run from midnight UTC).
NOON = dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC)


def rule(client: Any, **fields: Any) -> dict[str, Any]:
    item = {"name": "Too much", "key": "too-much", "windowMinutes": 30, **fields}
    response = client.post(RULES, [item])
    assert response.status_code == 201, response.content
    assert response.json()["issues"] == []
    return dict(response.json()["created"][0])


def send(client: Any, at: dt.datetime, value: Any = 1, user: str = "ada") -> None:
    with time_machine.travel(at, tick=False):
        body = {"user": {"id": user}, "value": value}
        response = client.post("/v1/metrics/words/event", body)
    assert response.status_code == 201, response.content


def flags(user: str = "ada") -> list[tuple[dt.datetime, Decimal]]:
    rows = UserFlag.objects.filter(user__external_id=user).order_by("window_start")
    return [(f.window_start, f.observed) for f in rows]


def test_windows_are_laid_end_to_end_from_midnight_utc() -> None:
    assert window_of(NOON, 30) == (NOON, NOON + dt.timedelta(minutes=30))
    just_before = NOON - dt.timedelta(microseconds=1)
    assert window_of(just_before, 30) == (NOON - dt.timedelta(minutes=30), NOON)
    assert window_of(NOON + dt.timedelta(minutes=29, seconds=59), 30)[0] == NOON


def test_a_metric_rule_flags_more_than_n_not_n(api_client: Any, metric: Metric) -> None:
    rule(api_client, kind="metric", metricId=str(metric.public_id), threshold=10)
    send(api_client, NOON, 4)
    send(api_client, NOON + dt.timedelta(minutes=10), 6)  # exactly 10: not more
    assert flags() == []
    send(api_client, NOON + dt.timedelta(minutes=29, seconds=59), 0.5)  # 10.5, same window
    assert flags() == [(NOON, Decimal("10.5"))]
    flag = UserFlag.objects.get()
    assert (flag.window_end, flag.threshold, flag.status) == (
        NOON + dt.timedelta(minutes=30),
        10,
        FlagStatus.OPEN,
    )
    send(api_client, NOON + dt.timedelta(minutes=29, seconds=59), 100)  # no second flag
    assert len(flags()) == 1
    # The next window starts at 12:30 exactly: counted from 0 again.
    send(api_client, NOON + dt.timedelta(minutes=30), 10)
    assert len(flags()) == 1
    send(api_client, NOON + dt.timedelta(minutes=59), 1)
    assert flags()[1] == (NOON + dt.timedelta(minutes=30), Decimal(11))


def test_an_events_rule_counts_events_of_any_metric(api_client: Any, metric: Metric) -> None:
    rule(api_client, kind="events", threshold=3, windowMinutes=1)
    for second in (0, 20, 40):
        send(api_client, NOON + dt.timedelta(seconds=second), 0)
    assert flags() == []  # 3 events: not more than 3
    send(api_client, NOON + dt.timedelta(minutes=1), 0)  # the next minute
    assert flags() == []
    send(api_client, NOON + dt.timedelta(seconds=59), 0)  # late, but in the first minute
    assert flags() == [(NOON, Decimal(4))]


def test_a_points_rule_counts_the_points_the_event_paid(api_client: Any, metric: Metric) -> None:
    system = api_client.post("/admin/v1/points", [{"name": "XP", "key": "xp"}]).json()
    system = system["created"][0]
    trigger = {
        "type": "metric",
        "metricId": str(metric.public_id),
        "points": 5,
        "metricThreshold": 1,
        "status": "active",
    }
    response = api_client.post(f"/admin/v1/points/{system['id']}/triggers", [trigger])
    assert response.status_code == 201, response.content
    rule(api_client, kind="points", pointsSystemId=system["id"], threshold=10)
    send(api_client, NOON, 1)
    send(api_client, NOON + dt.timedelta(minutes=1), 1)  # 10 points: not more
    assert flags() == []
    send(api_client, NOON + dt.timedelta(minutes=2), 1)
    assert flags() == [(NOON, Decimal(15))]


def test_flagging_is_told_to_webhooks_and_closed_by_dismissing_or_excluding(
    api_client: Any, metric: Metric, receiver: Any, tenant: Tenant
) -> None:
    endpoint(api_client, receiver.url, events=["user.flagged"])
    rule(api_client, kind="metric", metricId=str(metric.public_id), threshold=1)
    with committed():
        send(api_client, NOON, 2)
        send(api_client, NOON, 2, user="bob")
    run(NOON)
    bodies = sorted((r.json for r in receiver.wait_for(2)), key=lambda b: b["user"]["id"])
    first = bodies[0]
    assert first["type"] == "user.flagged"
    assert first["user"]["id"] == "ada"
    assert first["rule"] == {"key": "too-much", "name": "Too much"}
    assert first["window"] == {"start": "2026-03-10T12:00:00Z", "end": "2026-03-10T12:30:00Z"}
    assert (first["observed"], first["threshold"]) == (2, 1)
    ada, bob = UserFlag.objects.order_by("user__external_id")
    assert flag_resolve(tenant, ada.pk, exclude=False).status == FlagStatus.DISMISSED
    assert flag_resolve(tenant, bob.pk, exclude=True).status == FlagStatus.EXCLUDED
    bob_user = EndUser.objects.get(external_id="bob")
    assert bob_user.excluded_at is not None
    assert bob_user.excluded_reason.startswith("Flagged by Too much: 2 in the window")
    assert EndUser.objects.get(external_id="ada").excluded_at is None


def test_rules_are_a_recorded_collection_with_clear_refusals(
    api_client: Any, metric: Metric, tenant: Tenant
) -> None:
    created = rule(api_client, kind="metric", metricId=str(metric.public_id), threshold=10)
    assert created["threshold"] == 10
    assert created["status"] == "active"
    assert ConfigChange.objects.filter(tenant=tenant, kind="anomaly_rule").count() == 1
    response = api_client.patch(RULES, [{"id": created["id"], "threshold": 12}])
    assert response.json()["updated"][0]["threshold"] == 12
    assert api_client.get(f"{RULES}/{created['id']}").json()["threshold"] == 12
    bad = [
        ({"kind": "metric", "threshold": 1}, "metricId"),
        ({"kind": "points", "threshold": 1}, "pointsSystemId"),
        ({"kind": "events", "threshold": -1}, "threshold"),
        ({"kind": "events", "threshold": 1, "windowMinutes": 0}, "windowMinutes"),
        ({"kind": "events", "threshold": 1, "windowMinutes": 10081}, "windowMinutes"),
        ({"kind": "nope", "threshold": 1}, "kind"),
        ({"kind": "events", "threshold": "x"}, "threshold"),
    ]
    for fields, named in bad:
        item = {"name": "R", "key": "r", "windowMinutes": 5, **fields}
        response = api_client.post(RULES, [item])
        assert response.status_code == 200, response.content
        [issue] = response.json()["issues"]
        assert named in issue["message"], (fields, issue)
    assert api_client.post(RULES, {"not": "a list"}).status_code in (400, 422)
    response = api_client.delete(f"{RULES}?ids={created['id']}")
    assert response.status_code == 200
    assert ConfigChange.objects.filter(tenant=tenant, kind="anomaly_rule").count() == 3


def test_no_statement_without_rules_and_one_a_rule_with_them(
    api_client: Any, metric: Metric
) -> None:
    send(api_client, NOON, 1)

    def statements(at: dt.datetime) -> list[str]:
        with CaptureQueriesContext(connection) as queries:
            send(api_client, at, 1)
        return [q["sql"] for q in queries.captured_queries]

    without = statements(NOON + dt.timedelta(seconds=1))
    assert not [s for s in without if "fairplay" in s]
    rule(api_client, kind="metric", metricId=str(metric.public_id), threshold=100)
    statements(NOON + dt.timedelta(seconds=2))  # the configuration is read once, then cached
    with_rule = statements(NOON + dt.timedelta(seconds=3))
    assert len(with_rule) == len(without) + 1
    assert len([s for s in with_rule if "fairplay_anomalycount" in s]) == 1
    assert AnomalyCount.objects.get().total == 2  # the events since the rule


def test_tenant_isolation(api_client: Any, metric: Metric) -> None:
    from tests.conftest import Client
    from tests.factories import OrganizationWithKey

    created = rule(api_client, kind="events", threshold=1)
    other = Client()
    other.credentials(HTTP_X_API_KEY=OrganizationWithKey("other").admin_key)
    assert other.get(RULES).json() == []
    assert other.get(f"{RULES}/{created['id']}").status_code == 404
    response = other.patch(RULES, [{"id": created["id"], "threshold": 5}])
    assert response.json()["updated"] == []


def test_ended_windows_counts_are_pruned_and_a_restarted_window_flags_no_one_twice(
    api_client: Any, metric: Metric
) -> None:
    from apps.fairplay.jobs import GRACE, anomaly_counts_prune

    rule(api_client, kind="metric", metricId=str(metric.public_id), threshold=1)
    send(api_client, NOON, 2)
    assert len(flags()) == 1
    end = NOON + dt.timedelta(minutes=30)
    assert anomaly_counts_prune(end + GRACE) == 0  # ended, but within the grace
    assert anomaly_counts_prune(end + GRACE + dt.timedelta(seconds=1)) == 1
    send(api_client, NOON + dt.timedelta(minutes=5), 2)  # a late event of that window
    assert len(flags()) == 1
