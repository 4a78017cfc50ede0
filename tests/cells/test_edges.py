"""What enters a cell besides API keys: stream tokens, email links, beat's fan-out, and the
per-cell Celery queues."""

import datetime as dt
from typing import Any

from django.test import RequestFactory
from django.utils import timezone

from apps.accounts.models import Organization
from apps.cells.middleware import request_route
from apps.core import periodic
from apps.core.cells import cell_queue, current_cell, using_cell
from apps.core.stream_tokens import stream_token_cell, stream_token_mint
from apps.core.tasks import periodic_jobs_run_due_task
from apps.notifications.tokens import preferences_token, unsubscribe_token
from apps.users.models import EndUser
from tests.cells.conftest import CELL, needs_cell2
from tests.cells.test_routing import organization_in_cell2

pytestmark = needs_cell2


def test_a_stream_token_minted_in_cell2_opens_its_stream_in_cell2(cell2_ids):
    created = organization_in_cell2()
    with using_cell(CELL):
        token, _ = stream_token_mint(created.tenant.pk, "tenant", None, 60, timezone.now())
    default_token, _ = stream_token_mint(1, "tenant", None, 60, timezone.now())
    assert stream_token_cell(token) == CELL
    assert stream_token_cell(default_token) is None
    request = RequestFactory().get("/ext/v1/streams/tenant", {"token": token})
    route = request_route(request)
    assert route is not None
    assert route.cell == CELL


def test_email_links_open_their_pages_in_the_users_cell(cell2_ids, client):
    created = organization_in_cell2()
    with using_cell(CELL):
        user = EndUser.objects.create(tenant=created.tenant, external_id="ada", email="a@x.io")
    response = client.get(f"/notifications/preferences/{preferences_token(user)}")
    assert response.status_code == 200
    assert "This link is invalid" not in response.content.decode()
    response = client.get(f"/notifications/unsubscribe/{unsubscribe_token(user, 'recap')}")
    assert response.status_code in (200, 302)
    assert "This link is invalid" not in response.content.decode()


def test_beat_fans_out_one_run_per_cell(cell2_ids, monkeypatch):
    seen: list[tuple[str, int]] = []

    def job(now: dt.datetime) -> None:
        seen.append((current_cell(), Organization.objects.count()))

    monkeypatch.setattr(periodic, "_REGISTRY", {})
    periodic.periodic_job("cells-beat-probe", every=dt.timedelta(hours=1))(job)
    organization_in_cell2()
    periodic_jobs_run_due_task()
    assert seen == [("default", 0), (CELL, 1)]


def test_tasks_of_cell2_go_to_its_queues_when_asked(settings: Any):
    assert cell_queue("webhooks") == "webhooks"
    with using_cell(CELL):
        assert cell_queue("webhooks") == "webhooks"  # CELERY_QUEUES_PER_CELL is off
        settings.CELERY_QUEUES_PER_CELL = True
        assert cell_queue("webhooks") == "webhooks.cell2"
        assert cell_queue(None) == "celery.cell2"
    assert cell_queue("webhooks") == "webhooks"


def test_healthz_reports_each_cell(cell2_ids, client):
    body = client.get("/healthz").json()
    assert body["status"] == "ok"
    assert body["cells"] == {"default": True, CELL: True}


def test_a_live_stream_of_an_organization_in_cell2_reads_cell2(cell2_ids, settings):
    import uuid

    import pytest
    from asgiref.sync import async_to_sync

    from tests.conftest import RANKS_REDIS, redis_answers
    from tests.streams.test_streams import open_stream

    if not redis_answers():
        pytest.skip("needs Redis on 127.0.0.1:6379")
    settings.STREAMS_REDIS_URL = RANKS_REDIS
    settings.STREAMS_PREFIX = f"gamify-test-cells-{uuid.uuid4().hex[:8]}:"
    created = organization_in_cell2()
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_X_API_KEY=created.full_key)
    with using_cell(CELL):
        from apps.metrics.models import Metric

        metric = Metric.objects.get(key="words")
    board = {
        "name": "Top",
        "key": "top",
        "rankBy": "metric",
        "metricId": str(metric.public_id),
        "status": "active",
    }
    assert client.post("/admin/v1/leaderboards", [board], format="json").status_code == 201
    body = {"user": {"id": "ann"}, "value": 5}
    assert client.post("/v1/metrics/words/event", body, format="json").status_code == 201

    async def scenario() -> None:
        reader = await open_stream("/ext/v1/leaderboards/top/stream", X_API_KEY=created.full_key)
        first = await reader.next()
        assert first["event"] == "leaderboard.top"
        rankings = first["data"]["leaderboard"]["rankings"]
        assert [(r["userId"], r["value"]) for r in rankings] == [("ann", 5)]
        await reader.close()

    async_to_sync(scenario)()
