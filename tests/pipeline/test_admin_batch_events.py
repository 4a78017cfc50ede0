"""Admin API: POST /admin/v1/metrics/events, the batch of up to 1,000 events (reference §2.2 A6,
§3.3 BatchMetricEvent, §4.1). Accepted batches are queued and processed after commit."""

import threading
from decimal import Decimal
from typing import Any

import pytest

from apps.metrics.models import MetricEvent, MetricTotal
from apps.pipeline.batches import queued_events_process
from apps.pipeline.models import QueuedEvent, QueuedEventStatus
from apps.users.models import EndUser
from tests.factories import AttributeFactory, MetricFactory, bump

URL = "/admin/v1/metrics/events"


def ev(user_id: str, value: Any = 1, key: str = "words", **extra: Any) -> dict[str, Any]:
    return {"key": key, "user": {"id": user_id}, "value": value, **extra}


def total(client: Any, user_id: str, key: str = "words") -> Any:
    response = client.get(f"/v1/users/{user_id}/metrics/{key}")
    assert response.status_code == 200, response.content
    return response.json()["current"]


@pytest.fixture
def post_batch(api_client, django_capture_on_commit_callbacks):
    """POST a batch and run what it queued after commit, as the inline worker would."""

    def post(body: Any, client: Any = None) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return (client or api_client).post(URL, body)

    return post


@pytest.fixture
def device(tenant):
    attribute = AttributeFactory(tenant=tenant, key="device", name="Device", type="event")
    bump(tenant)
    return attribute


def assert_rejected(response: Any, status: int) -> str:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}
    assert not QueuedEvent.objects.exists()
    assert not MetricEvent.objects.exists()
    return body["error"]


# --- accepted batches ------------------------------------------------------------------------


def test_admin_batch_answers_202_with_the_accepted_count(post_batch, metric):
    response = post_batch([ev("u1", 2), ev("u2", 3)])

    assert response.status_code == 202
    assert response.json() == {"accepted": 2}


def test_admin_batch_events_are_processed_into_totals(api_client, post_batch, metric):
    post_batch([ev("u1", 5), ev("u2", 1), ev("u1", -2), ev("u1", Decimal("10.5"))])

    assert total(api_client, "u1") == 13.5
    assert total(api_client, "u2") == 1
    assert api_client.get("/v1/users/u1/metrics/words").json() == {
        "id": str(metric.public_id),
        "key": "words",
        "name": "Words",
        "status": "active",
        "current": 13.5,
        "achievements": [],
    }
    assert MetricEvent.objects.count() == 4
    assert set(QueuedEvent.objects.values_list("status", flat=True)) == {QueuedEventStatus.DONE}


def test_admin_batch_keeps_decimal_values_exact(api_client, post_batch, metric):
    post_batch([ev("u1", Decimal("0.1")), ev("u1", Decimal("0.2"))])

    assert MetricTotal.objects.get().total == Decimal("0.3")
    assert total(api_client, "u1") == 0.3


def test_admin_batch_processes_a_users_events_in_order(post_batch, metric):
    post_batch([ev("u1", 1), ev("u1", 2), ev("u1", 3)])

    totals = list(MetricEvent.objects.order_by("id").values_list("total_after", flat=True))
    assert totals == [Decimal(1), Decimal(3), Decimal(6)]


def test_admin_batch_spans_several_metrics(api_client, post_batch, tenant, metric):
    MetricFactory(tenant=tenant, key="minutes")
    bump(tenant)

    post_batch([ev("u1", 4), ev("u1", 30, key="minutes")])

    assert total(api_client, "u1") == 4
    assert total(api_client, "u1", "minutes") == 30


def test_admin_batch_identifies_users_inline(api_client, post_batch, metric):
    body = [
        {
            "key": "words",
            "user": {"id": "new", "name": "Ada", "tz": "Europe/Paris", "email": "a@example.com"},
            "value": 1,
        }
    ]

    post_batch(body)

    user = api_client.get("/v1/users/new").json()
    assert (user["name"], user["tz"], user["email"]) == ("Ada", "Europe/Paris", "a@example.com")


def test_admin_batch_stores_defined_event_attributes(post_batch, metric, device):
    post_batch([ev("u1", 1, attributes={"device": "ios"})])

    assert MetricEvent.objects.get().attributes == {"device": "ios"}


def test_admin_batch_is_queued_before_it_is_processed(api_client, metric):
    # Without running the after-commit callbacks nothing has been processed yet.
    response = api_client.post(URL, [ev("u1", 2), ev("u1", 3)])

    assert response.status_code == 202
    rows = list(QueuedEvent.objects.order_by("seq"))
    assert [row.seq for row in rows] == [0, 1]
    assert {row.status for row in rows} == {QueuedEventStatus.PENDING}
    assert len({row.batch_id for row in rows}) == 1
    assert not MetricEvent.objects.exists()


def test_admin_batch_processing_twice_applies_once(api_client, post_batch, metric):
    post_batch([ev("u1", 2), ev("u1", 3)])
    batch_id = QueuedEvent.objects.values_list("batch_id", flat=True).first()

    assert queued_events_process(str(batch_id)) == 0

    assert total(api_client, "u1") == 5
    assert MetricEvent.objects.count() == 2


def test_admin_batch_accepts_exactly_1000_events(api_client, metric):
    response = api_client.post(URL, [ev(f"u{n % 7}", 1) for n in range(1000)])

    assert response.status_code == 202
    assert response.json() == {"accepted": 1000}
    assert QueuedEvent.objects.count() == 1000


# --- idempotency -----------------------------------------------------------------------------


def test_admin_batch_duplicate_idempotency_keys_apply_once(api_client, post_batch, metric):
    response = post_batch(
        [
            ev("u1", 5, idempotencyKey="k1"),
            ev("u1", 5, idempotencyKey="k1"),
            ev("u1", 1, idempotencyKey="k2"),
        ]
    )

    assert response.json() == {"accepted": 3}
    assert total(api_client, "u1") == 6
    assert MetricEvent.objects.count() == 2


def test_admin_batch_idempotency_keys_hold_across_batches(api_client, post_batch, metric):
    post_batch([ev("u1", 5, idempotencyKey="k1")])
    post_batch([ev("u1", 5, idempotencyKey="k1"), ev("u1", 2)])

    assert total(api_client, "u1") == 7
    assert MetricEvent.objects.count() == 2


def test_admin_batch_idempotency_key_is_shared_with_the_single_event_endpoint(
    api_client, post_batch, metric
):
    single = api_client.post(
        "/v1/metrics/words/event",
        {"user": {"id": "u1"}, "value": 5},
        HTTP_IDEMPOTENCY_KEY="k1",
    )
    assert single.status_code == 201

    post_batch([ev("u1", 5, idempotencyKey="k1")])

    assert total(api_client, "u1") == 5


def test_admin_batch_idempotency_is_scoped_to_user_and_metric(
    api_client, post_batch, tenant, metric
):
    MetricFactory(tenant=tenant, key="minutes")
    bump(tenant)

    post_batch(
        [
            ev("u1", 5, idempotencyKey="k1"),
            ev("u2", 5, idempotencyKey="k1"),
            ev("u1", 7, key="minutes", idempotencyKey="k1"),
        ]
    )

    assert total(api_client, "u1") == 5
    assert total(api_client, "u2") == 5
    assert total(api_client, "u1", "minutes") == 7


# --- rejected batches: nothing is queued -----------------------------------------------------


def test_admin_batch_with_an_unknown_metric_is_404_and_queues_nothing(api_client, metric):
    response = api_client.post(URL, [ev("u1", 1), ev("u1", 1, key="nope")])

    message = assert_rejected(response, 404)
    assert message == '[1] Metric not found: "nope"'


def test_admin_batch_metric_of_another_tenant_is_404(other_tenant_client, metric):
    assert_rejected(other_tenant_client.post(URL, [ev("u1", 1)]), 404)


@pytest.mark.parametrize(
    "value",
    ["5", "abc", None, True, [1], {"v": 1}, 10**13, -(10**13)],
    ids=["numeric-string", "string", "null", "bool", "list", "object", "too-big", "too-small"],
)
def test_admin_batch_with_an_invalid_value_is_422_and_queues_nothing(api_client, metric, value):
    response = api_client.post(URL, [ev("u1", 1), ev("u2", value)])

    message = assert_rejected(response, 422)
    assert "[1]" in message
    assert "value" in message


def test_admin_batch_with_nan_is_rejected(api_client, metric):
    body = '[{"key": "words", "user": {"id": "u1"}, "value": NaN}]'

    response = api_client.post(URL, body, format=None, content_type="application/json")

    assert response.status_code in (400, 422)
    assert not QueuedEvent.objects.exists()


def test_admin_batch_with_an_undefined_event_attribute_is_422(api_client, metric, device):
    body = [ev("u1", 1, attributes={"device": "ios"}), ev("u1", 1, attributes={"os": "ios"})]

    message = assert_rejected(api_client.post(URL, body), 422)
    assert "Invalid attribute keys: os" in message


def test_admin_batch_with_a_user_attribute_used_as_event_attribute_is_422(
    api_client, tenant, metric
):
    AttributeFactory(tenant=tenant, key="plan", type="user")
    bump(tenant)

    message = assert_rejected(api_client.post(URL, [ev("u1", attributes={"plan": "pro"})]), 422)
    assert "plan" in message


def test_admin_batch_with_an_undefined_user_attribute_is_422(api_client, metric):
    body = [{"key": "words", "user": {"id": "u1", "attributes": {"plan": "pro"}}, "value": 1}]

    message = assert_rejected(api_client.post(URL, body), 422)
    assert "Invalid attribute keys: plan" in message
    assert not EndUser.objects.exists()


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"user": {"id": "u1"}, "value": 1}, "key"),
        ({"key": "words", "value": 1}, "user"),
        ({"key": "words", "user": {"id": "u1"}}, "value"),
        ({"key": "words", "user": {}, "value": 1}, "id"),
        ({"key": "words", "user": {"id": "u" * 256}, "value": 1}, "id"),
        ({"key": "words", "user": "u1", "value": 1}, "user"),
        ({"key": "words", "user": {"id": "u1"}, "value": 1, "extra": 1}, "extra"),
        ({"key": "words", "user": {"id": "u1", "signUpDate": "2024-01-01"}, "value": 1}, "signUp"),
        ({"key": "words", "user": {"id": "u1", "tz": "Mars/Olympus"}, "value": 1}, "tz"),
        ({"key": "words", "user": {"id": "u1"}, "value": 1, "idempotencyKey": "k" * 256}, "idem"),
        ({"key": "words", "user": {"id": "u1"}, "value": 1, "idempotencyKey": ""}, "idem"),
        ({"key": "k" * 101, "user": {"id": "u1"}, "value": 1}, "key"),
        ({"key": "words", "user": {"id": "u1"}, "value": 1, "attributes": ["x"]}, "attributes"),
    ],
    ids=[
        "no-key",
        "no-user",
        "no-value",
        "no-user-id",
        "long-user-id",
        "user-not-object",
        "unknown-field",
        "signup-date",
        "bad-tz",
        "long-idempotency-key",
        "empty-idempotency-key",
        "long-key",
        "attributes-not-object",
    ],
)
def test_admin_batch_with_an_invalid_item_is_422_naming_index_and_field(
    api_client, metric, item, field
):
    response = api_client.post(URL, [ev("u0", 1), item])

    message = assert_rejected(response, 422)
    assert message.startswith("[1]")
    assert field in message


def test_admin_batch_with_an_impossible_user_update_is_422_and_queues_nothing(api_client, metric):
    # The single-event endpoint refuses this synchronously (422). Accepting it here would answer
    # 202 and then drop the event in the worker, where the client can no longer see why.
    item = {"key": "words", "user": {"id": "u1", "subscribeToEmails": True}, "value": 1}

    message = assert_rejected(api_client.post(URL, [ev("u0", 1), item]), 422)
    assert "subscribeToEmails" in message


def test_admin_batch_body_over_the_size_limit_is_413(api_client, metric, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2_000

    message = assert_rejected(api_client.post(URL, [ev(f"user-{n}", 1) for n in range(100)]), 413)
    assert "2000" in message


def test_admin_batch_with_a_non_object_item_is_422(api_client, metric):
    message = assert_rejected(api_client.post(URL, [ev("u1"), "event"]), 422)
    assert "[1]" in message


def test_admin_batch_of_more_than_1000_events_is_422(api_client, metric):
    message = assert_rejected(api_client.post(URL, [ev("u1") for _ in range(1001)]), 422)
    assert "1000" in message


@pytest.mark.parametrize("body", ["[]", "{}", '{"events": []}', "null", '"x"'])
def test_admin_batch_body_must_be_a_non_empty_array(api_client, metric, body):
    response = api_client.post(URL, body, format=None, content_type="application/json")

    assert_rejected(response, 422)


def test_admin_batch_malformed_json_is_400(api_client, metric):
    response = api_client.post(
        URL, '[{"key": "words",', format=None, content_type="application/json"
    )

    assert_rejected(response, 400)


# --- configuration changing between acceptance and processing --------------------------------


def test_admin_batch_event_whose_metric_was_deleted_meanwhile_is_kept_as_failed(
    api_client, django_capture_on_commit_callbacks, metric
):
    with django_capture_on_commit_callbacks() as callbacks:
        assert api_client.post(URL, [ev("u1", 1)]).status_code == 202
    assert api_client.delete(f"/admin/v1/metrics?ids={metric.public_id}").status_code == 200

    for callback in callbacks:
        callback()

    row = QueuedEvent.objects.get()
    assert row.status == QueuedEventStatus.FAILED
    assert row.error == 'Metric not found: "words"'
    assert row.processed_at is not None
    assert not MetricEvent.objects.exists()


# --- tenant isolation ------------------------------------------------------------------------


def test_admin_batch_lands_in_the_tenant_of_the_request(
    api_client, other_tenant_client, post_batch, other_tenant, metric
):
    MetricFactory(tenant=other_tenant, key="words")
    bump(other_tenant)

    post_batch([ev("u1", 9)], client=other_tenant_client)

    assert total(other_tenant_client, "u1") == 9
    assert api_client.get("/v1/users/u1/metrics/words").status_code == 404
    assert EndUser.objects.get(external_id="u1").tenant == other_tenant
    assert set(QueuedEvent.objects.values_list("tenant", flat=True)) == {other_tenant.pk}


# --- a broker outage and replays never apply a batch twice -------------------------------------


def test_a_batch_stored_while_the_broker_is_down_is_202_and_applied_once_by_the_outbox(
    api_client, metric, monkeypatch, django_capture_on_commit_callbacks
):
    """The SDKs retry a 500: a batch stored and then reported as failed would be applied twice."""
    import datetime as dt

    from django.utils import timezone
    from kombu.exceptions import OperationalError

    from apps.core.models import OutboxTask
    from apps.core.outbox import outbox_sweep
    from apps.core.tasks import outbox_run_task

    def broker_down(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("Connection refused")

    with monkeypatch.context() as patch:
        patch.setattr(outbox_run_task, "apply_async", broker_down)
        with django_capture_on_commit_callbacks(execute=True):
            response = api_client.post(URL, [ev("u1", 2), ev("u2", 3)])
        assert response.status_code == 202, response.content
        assert response.json() == {"accepted": 2}
        # Still down at the first sweep: the work stays recorded.
        with django_capture_on_commit_callbacks(execute=True):
            assert outbox_sweep(timezone.now() + dt.timedelta(minutes=2)) == 1
    assert QueuedEvent.objects.filter(status=QueuedEventStatus.PENDING).count() == 2
    assert not MetricEvent.objects.exists()
    assert OutboxTask.objects.count() == 1

    # The broker is back; the sweep sends the batch once it is due, and it is applied once.
    later = timezone.now() + dt.timedelta(minutes=10)
    with django_capture_on_commit_callbacks(execute=True):
        assert outbox_sweep(later) == 1
        assert outbox_sweep(later) == 0
    assert (total(api_client, "u1"), total(api_client, "u2")) == (2, 3)
    assert MetricEvent.objects.count() == 2
    assert not OutboxTask.objects.exists()


def test_a_batch_replayed_with_its_idempotency_key_stores_nothing(post_batch, api_client, metric):
    headers = {"HTTP_IDEMPOTENCY_KEY": "batch-2026-11-23"}
    first = api_client.post(URL, [ev("u1", 2), ev("u2", 3)], **headers)
    again = api_client.post(URL, [ev("u1", 2), ev("u2", 3)], **headers)
    # Even a different body under the same key is the same batch.
    third = api_client.post(URL, [ev("u1", 100)], **headers)

    assert [r.status_code for r in (first, again, third)] == [202, 202, 202]
    assert [r.json()["accepted"] for r in (first, again, third)] == [2, 2, 2]
    assert QueuedEvent.objects.count() == 2
    # Another key, or none, is another batch.
    assert post_batch([ev("u1", 1)]).json() == {"accepted": 1}
    assert QueuedEvent.objects.count() == 3


@pytest.mark.parametrize("key", ["", "k" * 256])
def test_a_batch_idempotency_key_is_1_to_255_characters(api_client, metric, key):
    response = api_client.post(URL, [ev("u1")], HTTP_IDEMPOTENCY_KEY=key)
    assert_rejected(response, 422)


@pytest.mark.django_db(transaction=True)
def test_without_a_broker_a_batch_is_processed_after_the_response_not_in_it(
    api_client, metric, settings, monkeypatch
):
    """BACKGROUND_TASKS=thread (the default without a broker): the request only stores the
    batch; the in-process background worker applies it after the response."""
    from apps.core import background
    from apps.pipeline import tasks

    settings.BACKGROUND_TASKS = "thread"
    in_request: list[bool] = []
    processed = tasks.queued_events_process

    def watched(batch_id: str) -> int:
        in_request.append(threading.current_thread() is threading.main_thread())
        return processed(batch_id)

    monkeypatch.setattr(tasks, "queued_events_process", watched)
    response = api_client.post(URL, [ev("u1", 2), ev("u2", 3)])

    assert response.status_code == 202
    background.background_join()
    assert in_request == [False]
    assert (total(api_client, "u1"), total(api_client, "u2")) == (2, 3)
    assert set(QueuedEvent.objects.values_list("status", flat=True)) == {QueuedEventStatus.DONE}


def test_admin_batch_applies_the_user_fields_it_stored(api_client, post_batch, metric):
    api_client.put("/v1/users/u1", {"name": "Ada", "tz": "Europe/Paris"})
    user = {"id": "u1", "name": None, "deviceTokens": ["t1", "t1", "t2"]}
    post_batch([{"key": "words", "user": user, "value": 1}])

    assert QueuedEvent.objects.get().status == QueuedEventStatus.DONE
    user = api_client.get("/v1/users/u1").json()
    assert (user["name"], user["tz"], user["deviceTokens"]) == (None, "Europe/Paris", ["t1", "t2"])
