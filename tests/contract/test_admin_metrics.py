"""Admin metrics through the SDK: bulk envelopes with issues, pagination, batch events."""

import uuid

import pytest
from trophy import (
    BatchMetricEvent,
    BatchMetricEventUser,
    CreateMetricRequestItem,
    TrophyApi,
    UpdateMetricRequestItem,
)
from trophy.core import ApiError
from trophy.errors import NotFoundError, UnprocessableEntityError
from trophy.types import AdminIssue, CreatedMetric, DeletedResource

from tests.contract.helpers import CONTRACT_DB, create_attribute, create_metric, error_message

pytestmark = [pytest.mark.contract, CONTRACT_DB]


def test_create_returns_201_with_the_created_metrics(client: TrophyApi) -> None:
    response = client.admin.metrics.with_raw_response.create(
        request=[
            CreateMetricRequestItem(name="Words", key="words"),
            CreateMetricRequestItem(
                name="Revenue", key="revenue", unit_type="currency", units="EUR"
            ),
            CreateMetricRequestItem(name="Distance", key="distance_km-2", units="km"),
        ]
    )

    assert response.status_code == 201
    assert response.data.issues == []
    created = response.data.created
    assert all(isinstance(m, CreatedMetric) for m in created)
    assert [(m.key, m.name, m.unit_type, m.units) for m in created] == [
        ("words", "Words", "number", ""),
        ("revenue", "Revenue", "currency", "EUR"),
        ("distance_km-2", "Distance", "number", "km"),
    ]
    assert len({uuid.UUID(m.id) for m in created}) == 3


def test_create_reports_per_item_issues_by_index(client: TrophyApi) -> None:
    create_metric(client, "words")

    response = client.admin.metrics.with_raw_response.create(
        request=[
            CreateMetricRequestItem(name="Lessons", key="lessons"),
            CreateMetricRequestItem(name="Words again", key="words"),
            CreateMetricRequestItem(name="Bad key", key="bad key!"),
            CreateMetricRequestItem(
                name="Money", key="money", unit_type="currency", units="dollars"
            ),
            CreateMetricRequestItem(name="Lessons twice", key="lessons"),
        ]
    )

    assert response.status_code == 201
    assert [m.key for m in response.data.created] == ["lessons"]
    issues = response.data.issues
    assert all(isinstance(issue, AdminIssue) for issue in issues)
    assert [(issue.index, issue.severity) for issue in issues] == [
        (1, "error"),
        (2, "error"),
        (3, "error"),
        (4, "error"),
    ]
    assert "already in use" in issues[0].message
    assert "key" in issues[1].message
    assert "currency" in issues[2].message
    assert "already in use" in issues[3].message
    assert all(issue.id is None for issue in issues)


def test_create_answers_200_when_no_item_was_created(client: TrophyApi) -> None:
    response = client.admin.metrics.with_raw_response.create(
        request=[CreateMetricRequestItem(name="Bad", key="no/slashes")]
    )

    assert response.status_code == 200
    assert response.data.created == []
    assert [issue.index for issue in response.data.issues] == [0]


def test_an_empty_create_request_is_rejected_with_422(client: TrophyApi) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        client.admin.metrics.create(request=[])

    error_message(caught.value)


def test_list_pages_with_limit_and_skip_in_creation_order(client: TrophyApi) -> None:
    keys = [f"metric-{n}" for n in range(12)]
    for key in keys:
        create_metric(client, key)

    assert [m.key for m in client.admin.metrics.list()] == keys[:10]  # default limit 10
    assert [m.key for m in client.admin.metrics.list(limit=5, skip=3)] == keys[3:8]
    assert [m.key for m in client.admin.metrics.list(limit=100, skip=10)] == keys[10:]
    assert client.admin.metrics.list(skip=50) == []


@pytest.mark.parametrize(("limit", "skip"), [(0, 0), (101, 0), (10, -1)])
def test_list_rejects_out_of_range_pagination_with_422(
    client: TrophyApi, limit: int, skip: int
) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        client.admin.metrics.list(limit=limit, skip=skip)

    error_message(caught.value)


def test_get_returns_the_metric_by_id(client: TrophyApi, words: CreatedMetric) -> None:
    assert client.admin.metrics.get(words.id) == words


@pytest.mark.parametrize("metric_id", ["3f0c8a52-6d1e-4b7a-9e2f-1c4d5b6a7e80", "not-a-uuid"])
def test_get_of_an_unknown_id_raises_not_found(client: TrophyApi, metric_id: str) -> None:
    with pytest.raises(NotFoundError) as caught:
        client.admin.metrics.get(metric_id)

    assert error_message(caught.value) == "Metric not found by ID"


def test_update_changes_supplied_fields_and_reports_issues_by_id(
    client: TrophyApi, words: CreatedMetric
) -> None:
    unknown = str(uuid.uuid4())

    response = client.admin.metrics.update(
        request=[
            UpdateMetricRequestItem(id=words.id, name="Words written", units="words"),
            UpdateMetricRequestItem(id=unknown, name="Ghost"),
            UpdateMetricRequestItem(id="nope", name="Bad id"),
        ]
    )

    (updated,) = response.updated
    assert (updated.id, updated.key, updated.name, updated.units) == (
        words.id,
        "words",
        "Words written",
        "words",
    )
    assert client.admin.metrics.get(words.id) == updated
    assert [(issue.id, issue.index, issue.severity) for issue in response.issues] == [
        (unknown, None, "error"),
        (None, 2, "error"),
    ]
    assert response.issues[0].message == "Metric not found by ID"
    assert response.issues[1].message == "id must be a valid UUID"


def test_update_to_currency_requires_a_currency_code(
    client: TrophyApi, words: CreatedMetric
) -> None:
    response = client.admin.metrics.update(
        request=[UpdateMetricRequestItem(id=words.id, unit_type="currency")]
    )

    assert response.updated == []
    assert [issue.id for issue in response.issues] == [words.id]
    assert client.admin.metrics.get(words.id).unit_type == "number"

    response = client.admin.metrics.update(
        request=[UpdateMetricRequestItem(id=words.id, unit_type="currency", units="GBP")]
    )
    assert [(m.unit_type, m.units) for m in response.updated] == [("currency", "GBP")]


def test_a_renamed_metric_is_renamed_in_user_reads(client: TrophyApi, words: CreatedMetric) -> None:
    client.metrics.event("words", user={"id": "user-1"}, value=1)

    client.admin.metrics.update(request=[UpdateMetricRequestItem(id=words.id, name="Vocabulary")])

    assert client.users.single_metric("user-1", "words").name == "Vocabulary"


def test_delete_removes_metrics_and_reports_unknown_ids(
    client: TrophyApi, words: CreatedMetric
) -> None:
    lessons = create_metric(client, "lessons")
    client.metrics.event("words", user={"id": "user-1"}, value=1)
    unknown = str(uuid.uuid4())
    # user-1 has events: an issue says so and nothing goes until the key confirms it (a gamify
    # extension the SDK passes as an additional query parameter; issue 27's guard rails).
    refused = client.admin.metrics.delete(ids=[words.id])
    assert refused.deleted == []
    assert [(issue.id, issue.severity) for issue in refused.issues] == [(words.id, "error")]
    assert refused.issues[0].message.startswith("Deleting the metric words takes data from users")
    confirm = {"additional_query_parameters": {"confirm": "words"}}

    response = client.admin.metrics.delete(ids=[words.id, unknown, "nope"], request_options=confirm)

    assert response.deleted == [DeletedResource(id=words.id)]
    assert [(issue.id, issue.severity) for issue in response.issues] == [
        (unknown, "error"),
        ("nope", "error"),
    ]
    assert [m.id for m in client.admin.metrics.list()] == [lessons.id]
    with pytest.raises(NotFoundError):
        client.admin.metrics.get(words.id)
    with pytest.raises(ApiError) as caught:
        client.metrics.event("words", user={"id": "user-1"}, value=1)
    assert caught.value.status_code == 404
    assert [m.key for m in client.users.all_metrics("user-1")] == ["lessons"]


def test_delete_accepts_a_comma_separated_id_list(client: TrophyApi) -> None:
    first, second = create_metric(client, "a"), create_metric(client, "b")

    response = client.admin.metrics.delete(ids=f"{first.id},{second.id}")

    assert {d.id for d in response.deleted} == {first.id, second.id}
    assert response.issues == []


def test_delete_without_ids_is_rejected_with_422(client: TrophyApi) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        client.admin.metrics.delete()

    assert "ids" in error_message(caught.value)


def test_batch_events_returns_202_and_applies_every_event(
    client: TrophyApi, words: CreatedMetric
) -> None:
    create_metric(client, "lessons")
    create_attribute(client, "device", "event")

    response = client.admin.metrics.with_raw_response.batch_events(
        request=[
            BatchMetricEvent(
                key="words", user=BatchMetricEventUser(id="ada", name="Ada"), value=2.5
            ),
            BatchMetricEvent(key="words", user=BatchMetricEventUser(id="ada"), value=-1),
            BatchMetricEvent(key="words", user=BatchMetricEventUser(id="grace"), value=0.1),
            BatchMetricEvent(
                key="lessons",
                user=BatchMetricEventUser(id="ada"),
                value=1,
                attributes={"device": "ios"},
            ),
        ]
    )

    assert response.status_code == 202
    assert response.data.accepted == 4
    # Without a broker the batch is processed inline, before the response.
    assert client.users.single_metric("ada", "words").current == 1.5
    assert client.users.single_metric("ada", "lessons").current == 1
    assert client.users.single_metric("grace", "words").current == 0.1
    assert client.users.get("ada").name == "Ada"


def test_batch_events_honour_idempotency_keys(client: TrophyApi, words: CreatedMetric) -> None:
    client.metrics.event("words", user={"id": "ada"}, value=1, idempotency_key="first")

    response = client.admin.metrics.batch_events(
        request=[
            BatchMetricEvent(
                key="words", user=BatchMetricEventUser(id="ada"), value=10, idempotency_key="first"
            ),
            BatchMetricEvent(
                key="words", user=BatchMetricEventUser(id="ada"), value=5, idempotency_key="second"
            ),
            BatchMetricEvent(
                key="words", user=BatchMetricEventUser(id="ada"), value=5, idempotency_key="second"
            ),
        ]
    )

    assert response.accepted == 3
    assert client.users.single_metric("ada", "words").current == 6


def test_batch_events_with_an_unknown_metric_raise_not_found_and_apply_nothing(
    client: TrophyApi, words: CreatedMetric
) -> None:
    with pytest.raises(NotFoundError) as caught:
        client.admin.metrics.batch_events(
            request=[
                BatchMetricEvent(key="words", user=BatchMetricEventUser(id="ada"), value=1),
                BatchMetricEvent(key="sentences", user=BatchMetricEventUser(id="ada"), value=1),
            ]
        )

    assert "sentences" in error_message(caught.value)
    with pytest.raises(ApiError) as missing:
        client.users.get("ada")
    assert missing.value.status_code == 404


def test_batch_events_with_undefined_attributes_are_rejected_with_422(
    client: TrophyApi, words: CreatedMetric
) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        client.admin.metrics.batch_events(
            request=[
                BatchMetricEvent(
                    key="words",
                    user=BatchMetricEventUser(id="ada"),
                    value=1,
                    attributes={"device": "ios"},
                )
            ]
        )

    assert "Invalid attribute keys: device" in error_message(caught.value)


def test_batch_events_that_break_a_user_rule_are_rejected_up_front(
    client: TrophyApi, words: CreatedMetric
) -> None:
    # The same event sent alone is a 422; accepting it in a batch (202) and then dropping it
    # while processing loses it silently.
    with pytest.raises(UnprocessableEntityError) as single:
        client.metrics.event("words", user={"id": "ada", "subscribeToEmails": True}, value=1)
    assert "subscribeToEmails" in error_message(single.value)

    with pytest.raises(UnprocessableEntityError) as caught:
        client.admin.metrics.batch_events(
            request=[
                BatchMetricEvent(
                    key="words",
                    user=BatchMetricEventUser(id="ada", subscribe_to_emails=True),
                    value=1,
                )
            ]
        )

    assert "subscribeToEmails" in error_message(caught.value)


def test_a_batch_may_give_a_users_email_before_subscribing_them(
    client: TrophyApi, words: CreatedMetric
) -> None:
    # Processed in order, the first event stores the email the second one needs; sent one by
    # one, both are accepted.
    response = client.admin.metrics.with_raw_response.batch_events(
        request=[
            BatchMetricEvent(
                key="words",
                user=BatchMetricEventUser(id="ada", email="ada@example.com"),
                value=1,
            ),
            BatchMetricEvent(
                key="words",
                user=BatchMetricEventUser(id="ada", subscribe_to_emails=True),
                value=2,
            ),
        ]
    )

    assert response.status_code == 202
    assert response.data.accepted == 2
    assert client.users.single_metric("ada", "words").current == 3
    user = client.users.get("ada")
    assert (user.email, user.subscribe_to_emails) == ("ada@example.com", True)


def test_an_empty_batch_is_rejected_with_422(client: TrophyApi) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        client.admin.metrics.batch_events(request=[])

    error_message(caught.value)
