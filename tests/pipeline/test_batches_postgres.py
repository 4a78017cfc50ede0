"""Batches when things go wrong, on PostgreSQL: the broker is down, the worker's database
connection is killed mid-batch, batches for the same users arrive and run at once. Every
scenario ends with exact totals: nothing lost, nothing applied twice."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.utils import timezone
from kombu.exceptions import OperationalError
from rest_framework.test import APIClient

from apps.core.models import OutboxTask
from apps.core.outbox import outbox_run, outbox_sweep
from apps.core.tasks import outbox_run_task
from apps.metrics.models import MetricEvent, MetricTotal
from apps.pipeline.batches import queued_events_process
from apps.pipeline.models import QueuedEvent, QueuedEventStatus
from tests.concurrency import POSTGRES_ONLY, run_all
from tests.factories import MetricFactory, OrganizationWithKey

pytestmark = [
    *POSTGRES_ONLY,
    pytest.mark.django_db(transaction=True),
]

URL = "/admin/v1/metrics/events"
USERS = 10


def batch(events: int, start: int = 0) -> list[dict[str, Any]]:
    """Event i goes to user i % USERS with value i + 1: totals are easy to predict."""
    return [
        {"key": "words", "user": {"id": f"u{i % USERS}"}, "value": i + 1}
        for i in range(start, start + events)
    ]


def expected_totals(*batches: list[dict[str, Any]]) -> dict[str, Decimal]:
    totals: dict[str, Decimal] = {}
    for body in batches:
        for item in body:
            user = item["user"]["id"]
            totals[user] = totals.get(user, Decimal(0)) + Decimal(item["value"])
    return totals


def totals() -> dict[str, Decimal]:
    return {
        row.user.external_id: row.total for row in MetricTotal.objects.select_related("user").all()
    }


@pytest.fixture
def org() -> OrganizationWithKey:
    org = OrganizationWithKey("Batches")
    MetricFactory(tenant=org.tenant, key="words")
    return org


def client_for(org: OrganizationWithKey) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    return client


@pytest.fixture
def broker_down(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("Connection refused")

    monkeypatch.setattr(outbox_run_task, "apply_async", refuse)
    return monkeypatch


def sweep_later(minutes: int) -> int:
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=minutes)):
        return outbox_sweep(timezone.now())


def test_a_batch_sent_during_a_broker_outage_and_retried_is_applied_exactly_once(org, broker_down):
    """The measurement of the issue: 100 events sent twice after an outage applied 200. Now the
    first answer is 202 (nothing for an SDK to retry), and a retry with the batch's own
    Idempotency-Key stores nothing."""
    body = batch(100)
    client = client_for(org)
    headers = {"HTTP_IDEMPOTENCY_KEY": "nightly-import-1"}
    first = client.post(URL, body, format="json", **headers)
    retry = client.post(URL, body, format="json", **headers)
    assert (first.status_code, retry.status_code) == (202, 202)
    assert first.json() == retry.json() == {"accepted": 100}
    assert QueuedEvent.objects.count() == 100
    assert OutboxTask.objects.count() == 1
    assert sweep_later(2) == 1  # still down: kept
    assert not MetricEvent.objects.exists()

    broker_down.undo()
    assert sweep_later(5) == 1
    assert sweep_later(10) == 0
    assert MetricEvent.objects.count() == 100
    assert totals() == expected_totals(body)
    assert not OutboxTask.objects.exists()


def test_a_worker_whose_connection_is_killed_mid_batch_loses_and_doubles_nothing(
    org, broker_down, monkeypatch
):
    """The grouped way (a tenant that bulk does not take) applies a user's events in one
    transaction (users in the order of their first event: u0, u1, ...; ten events each).
    Killed in the middle of u3's group, it leaves u0, u1 and u2 done and all of u3's events
    pending, and the retry applies the rest once."""
    body = batch(100)
    assert client_for(org).post(URL, body, format="json").status_code == 202
    broker_down.undo()

    from apps.pipeline import batches, bulk

    monkeypatch.setattr(bulk, "bulk_ready", lambda tenant: False)

    real = batches.event_apply
    calls = {"n": 0}

    def killed_at_the_35th(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 35:
            with connection.cursor() as cursor:  # the server drops this worker's connection
                cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        return real(*args, **kwargs)

    monkeypatch.setattr(batches, "event_apply", killed_at_the_35th)
    row = OutboxTask.objects.get()
    assert outbox_run(row.pk) is False
    row.refresh_from_db()
    assert (row.attempts, row.locked_until) == (1, None)
    assert "OperationalError" in row.last_error or "InterfaceError" in row.last_error
    done = QueuedEvent.objects.filter(status=QueuedEventStatus.DONE)
    assert sorted(done.values_list("seq", flat=True)) == [i for i in range(100) if i % USERS < 3]
    assert MetricEvent.objects.count() == 30
    assert totals() == {u: t for u, t in expected_totals(body).items() if u in {"u0", "u1", "u2"}}

    assert sweep_later(5) == 1  # the retry picks up where the dead connection stopped
    assert MetricEvent.objects.count() == 100
    assert totals() == expected_totals(body)
    assert not OutboxTask.objects.exists()


def test_a_worker_killed_in_its_second_bulk_chunk_loses_and_doubles_nothing(
    org, broker_down, monkeypatch
):
    """In bulk, a batch goes in chunks of BULK_MAX_EVENTS events in seq order, one transaction
    each. Killed while writing the second chunk, the worker leaves the first done and every
    later event pending; the retry applies them once."""
    from apps.pipeline import bulk

    body = batch(100)
    assert client_for(org).post(URL, body, format="json").status_code == 202
    broker_down.undo()  # the same MonkeyPatch: patch after it
    monkeypatch.setattr(bulk, "BULK_MAX_EVENTS", 30)

    real = bulk._write
    calls = {"n": 0}

    def killed_in_the_second(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        real(*args, **kwargs)
        if calls["n"] == 2:
            with connection.cursor() as cursor:  # the server drops this worker's connection
                cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    monkeypatch.setattr(bulk, "_write", killed_in_the_second)
    row = OutboxTask.objects.get()
    assert outbox_run(row.pk) is False
    done = QueuedEvent.objects.filter(status=QueuedEventStatus.DONE)
    assert sorted(done.values_list("seq", flat=True)) == list(range(30))
    assert MetricEvent.objects.count() == 30
    assert totals() == expected_totals(body[:30])

    assert sweep_later(5) == 1  # the retry picks up where the dead connection stopped
    assert MetricEvent.objects.count() == 100
    assert totals() == expected_totals(body)
    assert calls["n"] == 5  # chunks 1, 2 (rolled back), then 2, 3 and 4 again
    assert not OutboxTask.objects.exists()


def test_concurrent_batches_for_the_same_users_sum_exactly(org, broker_down):
    """Four batches for the same ten users, accepted and then processed at the same moment
    (four workers), while two more workers run one of them a second time."""
    bodies = [batch(50, start=50 * i) for i in range(4)]
    accepted = run_all(
        [lambda body=body: client_for(org).post(URL, body, format="json") for body in bodies]
    )
    assert [response.status_code for response in accepted] == [202] * 4
    broker_down.undo()

    batch_ids = [str(b) for b in QueuedEvent.objects.values_list("batch_id", flat=True).distinct()]
    assert len(batch_ids) == 4
    results = run_all(
        [lambda batch_id=batch_id: queued_events_process(batch_id) for batch_id in batch_ids]
        + [lambda: queued_events_process(batch_ids[0]), lambda: queued_events_process(batch_ids[0])]
    )
    assert not any(isinstance(result, Exception) for result in results), results
    assert sum(results) == 200  # the repeated runs found nothing left to do
    assert MetricEvent.objects.count() == 200
    assert totals() == expected_totals(*bodies)
    # Each user's events were applied one after another: running totals are all distinct.
    for user in expected_totals(*bodies):
        running = list(
            MetricEvent.objects.filter(user__external_id=user).values_list("total_after", flat=True)
        )
        assert len(set(running)) == len(running) == 20


def test_two_runs_of_one_outbox_row_at_once_process_the_batch_once(org, broker_down):
    body = batch(60)
    assert client_for(org).post(URL, body, format="json").status_code == 202
    broker_down.undo()
    row = OutboxTask.objects.get()
    ran = run_all([lambda: outbox_run(row.pk), lambda: outbox_run(row.pk)])
    assert sorted(ran) == [False, True]  # one claimed it, the other found it held
    assert MetricEvent.objects.count() == 60
    assert totals() == expected_totals(body)
    assert not OutboxTask.objects.exists()


def test_workers_running_one_batch_at_once_apply_each_event_once_in_order(
    org, broker_down, monkeypatch
):
    """The worker applies a user's events in transactions of GROUP_MAX_EVENTS (lowered to 4
    here, so each user's ten events take three). Three workers run the same batch at once:
    whichever locks a group's rows applies them, the others wait and find them done; each
    event is applied once, points included, and each user's in the order sent."""
    from apps.pipeline import batches
    from apps.points.models import PointsAward, PointsTotal

    monkeypatch.setattr(batches, "GROUP_MAX_EVENTS", 4)
    client = client_for(org)
    system = client.post("/admin/v1/points", [{"name": "XP", "key": "xp"}], format="json")
    trigger = {"type": "metric", "points": 1, "metricThreshold": 1, "status": "active"}
    metric_id = client.get("/admin/v1/metrics").json()[0]["id"]
    response = client.post(
        f"/admin/v1/points/{system.json()['created'][0]['id']}/triggers",
        [trigger | {"metricId": metric_id}],
        format="json",
    )
    assert response.status_code == 201, response.content
    body = batch(100)
    assert client.post(URL, body, format="json").status_code == 202
    broker_down.undo()
    batch_id = str(QueuedEvent.objects.values_list("batch_id", flat=True).first())

    results = run_all([lambda: queued_events_process(batch_id)] * 3)

    assert not any(isinstance(result, Exception) for result in results), results
    assert sum(results) == 100
    assert MetricEvent.objects.count() == PointsAward.objects.count() == 100
    assert totals() == expected_totals(body)
    points = dict(PointsTotal.objects.values_list("user__external_id", "total"))
    assert points == {user: int(total) for user, total in expected_totals(body).items()}
    for n in range(USERS):
        running = MetricEvent.objects.filter(user__external_id=f"u{n}").order_by("id")
        sent = [item["value"] for item in body if item["user"]["id"] == f"u{n}"]
        assert list(running.values_list("total_after", flat=True)) == [
            sum(sent[: k + 1]) for k in range(len(sent))
        ]
