"""POST /metrics/{key}/event through the SDK: totals, inline identification, idempotency, errors."""

import pytest
from trophy import TrophyApi, UpsertedUser
from trophy.core import ApiError
from trophy.errors import UnprocessableEntityError
from trophy.types import CreatedMetric, EventResponse

from tests.contract.helpers import CONTRACT_DB, create_attribute, create_metric, error_message

pytestmark = [pytest.mark.contract, CONTRACT_DB]


def test_an_event_returns_201_and_a_complete_event_response(
    client: TrophyApi, words: CreatedMetric
) -> None:
    response = client.metrics.with_raw_response.event(
        "words", user=UpsertedUser(id="user-1"), value=3
    )

    assert response.status_code == 201
    event = response.data
    assert isinstance(event, EventResponse)
    assert event.metric_id == words.id
    assert event.event_id
    assert event.total == 3
    assert event.achievements == []
    assert event.points == {}
    assert event.leaderboards == {}
    assert event.current_streak.length == 0
    assert event.current_streak.frequency == "daily"
    assert event.current_streak.extended is False
    assert event.idempotency_key is None
    assert event.idempotent_replayed is None


def test_totals_add_up_decimals_and_negatives_exactly(
    client: TrophyApi, words: CreatedMetric
) -> None:
    totals = [
        client.metrics.event("words", user={"id": "user-1"}, value=value).total
        for value in (0.1, 0.2, 10, -2.5, 0.000001, -0.000001, -8)
    ]

    # Exact decimal arithmetic: floats would give 0.30000000000000004 after the second event.
    assert totals == [0.1, 0.3, 10.3, 7.8, 7.800001, 7.8, -0.2]
    assert client.users.single_metric("user-1", "words").current == -0.2


def test_each_event_gets_its_own_id(client: TrophyApi, words: CreatedMetric) -> None:
    ids = {client.metrics.event("words", user={"id": "user-1"}, value=1).event_id for _ in "abc"}

    assert len(ids) == 3


def test_totals_are_kept_per_user_and_per_metric(client: TrophyApi, words: CreatedMetric) -> None:
    create_metric(client, "lessons")

    client.metrics.event("words", user={"id": "ada"}, value=5)
    client.metrics.event("words", user={"id": "grace"}, value=7)
    lessons = client.metrics.event("lessons", user={"id": "ada"}, value=1)

    assert lessons.total == 1
    assert client.metrics.event("words", user={"id": "ada"}, value=1).total == 6
    assert client.metrics.event("words", user={"id": "grace"}, value=1).total == 8


def test_an_event_identifies_its_user_inline(client: TrophyApi, words: CreatedMetric) -> None:
    create_attribute(client, "plan", "user")

    client.metrics.event(
        "words",
        user=UpsertedUser(
            id="user-1",
            name="Ada",
            email="ada@example.com",
            tz="Europe/Paris",
            attributes={"plan": "pro"},
        ),
        value=1,
    )
    client.metrics.event("words", user=UpsertedUser(id="user-1", name="Ada L."), value=1)

    user = client.users.get("user-1")
    assert user.name == "Ada L."
    assert user.email == "ada@example.com"
    assert user.tz == "Europe/Paris"
    assert user.attributes == {"plan": "pro"}


def test_event_attributes_must_be_defined_event_attributes(
    client: TrophyApi, words: CreatedMetric
) -> None:
    create_attribute(client, "device", "event")
    create_attribute(client, "plan", "user")

    ok = client.metrics.event("words", user={"id": "user-1"}, value=2, attributes={"device": "ios"})
    assert ok.total == 2

    for attributes in ({"plan": "pro"}, {"device": "ios", "colour": "red"}):
        with pytest.raises(UnprocessableEntityError) as caught:
            client.metrics.event("words", user={"id": "user-1"}, value=2, attributes=attributes)
        assert "Invalid attribute keys:" in error_message(caught.value)

    assert client.users.single_metric("user-1", "words").current == 2


def test_undefined_user_attributes_reject_the_whole_event(
    client: TrophyApi, words: CreatedMetric
) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        client.metrics.event(
            "words", user=UpsertedUser(id="user-1", attributes={"plan": "pro"}), value=2
        )

    assert "Invalid attribute keys: plan" in error_message(caught.value)
    with pytest.raises(ApiError) as missing:
        client.users.get("user-1")  # nothing was written, not even the user
    assert missing.value.status_code == 404


def test_an_invalid_time_zone_on_the_inline_user_is_rejected_with_422(
    client: TrophyApi, words: CreatedMetric
) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        client.metrics.event("words", user=UpsertedUser(id="user-1", tz="Nowhere/City"), value=1)

    assert "tz" in error_message(caught.value)


def test_an_unknown_metric_is_a_404_error_body(client: TrophyApi, words: CreatedMetric) -> None:
    # The SDK declares no 404 for this call, so it surfaces as a plain ApiError.
    with pytest.raises(ApiError) as caught:
        client.metrics.event("sentences", user={"id": "user-1"}, value=1)

    assert caught.value.status_code == 404
    assert "sentences" in error_message(caught.value)
    with pytest.raises(ApiError):
        client.users.get("user-1")


def test_an_idempotent_replay_returns_202_and_applies_nothing(
    client: TrophyApi, words: CreatedMetric
) -> None:
    first = client.metrics.with_raw_response.event(
        "words", user=UpsertedUser(id="user-1", name="Ada"), value=5, idempotency_key="req-1"
    )
    assert first.status_code == 201
    assert first.data.total == 5
    assert first.data.idempotency_key == "req-1"
    assert first.data.idempotent_replayed is False
    client.metrics.event("words", user={"id": "user-1"}, value=2)

    replay = client.metrics.with_raw_response.event(
        "words", user=UpsertedUser(id="user-1", name="Changed"), value=100, idempotency_key="req-1"
    )

    assert replay.status_code == 202
    assert replay.data.idempotent_replayed is True
    assert replay.data.idempotency_key == "req-1"
    assert replay.data.event_id == first.data.event_id
    assert replay.data.metric_id == words.id
    assert replay.data.total == 7  # the current state, without the replayed value
    assert replay.data.points == {}
    assert replay.data.achievements == []
    assert client.users.single_metric("user-1", "words").current == 7
    assert client.users.get("user-1").name == "Ada"


def test_an_idempotency_key_is_scoped_to_one_user_and_one_metric(
    client: TrophyApi, words: CreatedMetric
) -> None:
    create_metric(client, "lessons")
    client.metrics.event("words", user={"id": "ada"}, value=1, idempotency_key="k")

    other_user = client.metrics.with_raw_response.event(
        "words", user={"id": "grace"}, value=1, idempotency_key="k"
    )
    other_metric = client.metrics.with_raw_response.event(
        "lessons", user={"id": "ada"}, value=1, idempotency_key="k"
    )

    assert (other_user.status_code, other_user.data.idempotent_replayed) == (201, False)
    assert (other_metric.status_code, other_metric.data.idempotent_replayed) == (201, False)
    assert other_metric.data.total == 1


def test_an_overlong_idempotency_key_is_rejected_with_422(
    client: TrophyApi, words: CreatedMetric
) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        client.metrics.event("words", user={"id": "user-1"}, value=1, idempotency_key="k" * 256)

    assert "Idempotency-Key" in error_message(caught.value)


def test_an_out_of_range_value_is_rejected_with_422(
    client: TrophyApi, words: CreatedMetric
) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        client.metrics.event("words", user={"id": "user-1"}, value=1e13)

    assert "value" in error_message(caught.value)
