"""user.excluded and user.reinstated, delivered and signed like every webhook."""

import datetime as dt
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.metrics.models import Metric
from tests.webhooks.test_webhooks import committed, endpoint, run, verify

pytestmark = pytest.mark.django_db

WHEN = dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC)


def test_exclusion_and_reinstatement_are_announced(
    api_client: Any, tenant: Tenant, metric: Metric, receiver: Any
) -> None:
    created = endpoint(api_client, receiver.url, events=["user.excluded", "user.reinstated"])
    with time_machine.travel(WHEN, tick=False), committed():
        body = {"user": {"id": "ada"}, "value": 1}
        assert api_client.post("/v1/metrics/words/event", body).status_code == 201
        path = "/admin/ext/v1/users/ada/exclusion"
        assert api_client.post(path, {"reason": "scripted events"}).status_code == 200
        assert api_client.post(path, {"reason": "again"}).status_code == 200  # no change: silent
    later = WHEN + dt.timedelta(hours=1)
    with time_machine.travel(later, tick=False), committed():
        assert api_client.delete(path).status_code == 200
        assert api_client.delete(path).status_code == 200  # no change: silent
    run(later)
    requests = receiver.wait_for(2)
    bodies = [r.json for r in requests]
    assert [(b["type"], b["user"]["id"]) for b in bodies] == [
        ("user.excluded", "ada"),
        ("user.reinstated", "ada"),
    ]
    excluded, reinstated = bodies
    assert excluded["reason"] == "scripted events"
    assert excluded["excludedAt"] == "2026-03-10T12:00:00Z"
    assert excluded["by"].startswith("api_key:")
    assert reinstated["reinstatedAt"] == "2026-03-10T13:00:00Z"
    for request in requests:
        verify(created["secret"], request)
