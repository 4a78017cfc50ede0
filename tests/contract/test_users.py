"""Users through the SDK: create, get, identify (PUT upsert), update (PATCH), and their errors."""

import datetime as dt

import pytest
from trophy import TrophyApi, UpdateAdminSettingsExperimentation
from trophy.core import ApiError
from trophy.errors import NotFoundError, UnprocessableEntityError
from trophy.types import User

from tests.contract.helpers import (
    CONTRACT_DB,
    MakeClient,
    create_attribute,
    create_metric,
    error_message,
)
from tests.factories import OrganizationWithKey

pytestmark = [pytest.mark.contract, CONTRACT_DB]


def test_create_returns_201_and_every_field_round_trips(client: TrophyApi) -> None:
    create_attribute(client, "plan", "user")
    before = dt.datetime.now(dt.UTC)

    response = client.users.with_raw_response.create(
        id="user-1",
        email="ada@example.com",
        name="Ada",
        tz="Europe/Paris",
        sign_up_date="2024-02-29",
        device_tokens=["token-a", "token-b"],
        subscribe_to_emails=True,
        attributes={"plan": "pro"},
    )

    assert response.status_code == 201
    user = response.data
    assert isinstance(user, User)
    assert user.id == "user-1"
    assert user.email == "ada@example.com"
    assert user.name == "Ada"
    assert user.tz == "Europe/Paris"
    assert user.sign_up_date == "2024-02-29"
    assert user.device_tokens == ["token-a", "token-b"]
    assert user.subscribe_to_emails is True
    assert user.attributes == {"plan": "pro"}
    assert user.control is False
    assert user.created.tzinfo is not None
    assert before - dt.timedelta(seconds=5) <= user.created <= user.updated
    assert client.users.get("user-1") == user


def test_create_with_only_an_id_fills_every_required_field(client: TrophyApi) -> None:
    user = client.users.create(id="bare")

    assert user.id == "bare"
    assert user.email is None
    assert user.name is None
    assert user.tz is None
    assert user.sign_up_date is None
    assert user.attributes == {}
    assert user.control is False


def test_create_of_an_existing_id_updates_only_the_supplied_fields(client: TrophyApi) -> None:
    client.users.create(id="user-1", name="Ada", email="ada@example.com")

    response = client.users.with_raw_response.create(id="user-1", name="Ada L.")

    assert response.status_code == 200
    assert response.data.name == "Ada L."
    assert response.data.email == "ada@example.com"


def test_sign_up_date_given_as_a_date_time_is_truncated_to_its_utc_day(client: TrophyApi) -> None:
    user = client.users.create(id="user-1", sign_up_date="2024-03-01T23:30:00-02:00")

    assert user.sign_up_date == "2024-03-02"


def test_identify_creates_an_unknown_user(client: TrophyApi) -> None:
    response = client.users.with_raw_response.identify("new-user", name="Grace", tz="Asia/Tokyo")

    assert response.status_code == 200
    assert response.data.id == "new-user"
    assert response.data.tz == "Asia/Tokyo"
    assert client.users.get("new-user").name == "Grace"


def test_identify_with_only_an_id_creates_a_bare_user(client: TrophyApi) -> None:
    user = client.users.identify("user-1")

    assert (user.id, user.name, user.attributes) == ("user-1", None, {})


def test_identify_changes_only_the_supplied_fields(client: TrophyApi) -> None:
    created = client.users.create(id="user-1", name="Ada", email="ada@example.com", tz="UTC")

    user = client.users.identify("user-1", email="countess@example.com")

    assert user.email == "countess@example.com"
    assert user.name == "Ada"
    assert user.tz == "UTC"
    assert user.created == created.created
    assert user.updated >= created.updated


def test_update_changes_only_the_supplied_fields(client: TrophyApi) -> None:
    client.users.create(id="user-1", name="Ada", email="ada@example.com", device_tokens=["t1"])

    user = client.users.update("user-1", name="Ada Lovelace", device_tokens=["t2", "t3"])

    assert user.name == "Ada Lovelace"
    assert user.email == "ada@example.com"
    assert user.device_tokens == ["t2", "t3"]
    assert client.users.get("user-1") == user


def test_update_with_null_clears_optional_fields(client: TrophyApi) -> None:
    client.users.create(id="user-1", name="Ada", tz="Europe/Paris", device_tokens=["t1"])

    user = client.users.update("user-1", name=None, tz=None, device_tokens=None)

    assert user.name is None
    assert user.tz is None
    assert user.device_tokens in (None, [])


def test_update_of_an_unknown_user_raises_not_found(client: TrophyApi) -> None:
    with pytest.raises(NotFoundError) as caught:
        client.users.update("ghost", name="Nobody")

    assert "ghost" in error_message(caught.value)
    with pytest.raises(ApiError) as missing:
        client.users.get("ghost")
    assert missing.value.status_code == 404


def test_get_of_an_unknown_user_is_a_404_error_body(client: TrophyApi) -> None:
    # GET /users/{id} declares no 404 in the SDK, so it surfaces as a plain ApiError.
    with pytest.raises(ApiError) as caught:
        client.users.get("ghost")

    assert caught.value.status_code == 404
    assert "ghost" in error_message(caught.value)


@pytest.mark.parametrize("user_id", ["ada@example.com", "ana maria", "Zoë-42_x.y"])
def test_user_ids_with_punctuation_round_trip_through_the_path(
    client: TrophyApi, user_id: str
) -> None:
    client.users.create(id=user_id, name="Someone")

    assert client.users.get(user_id).id == user_id
    assert client.users.update(user_id, name="Else").id == user_id


def test_a_user_id_longer_than_255_characters_is_rejected_on_every_write(
    client: TrophyApi,
) -> None:
    # POST /users rejects it; PUT and PATCH take the id from the path and must agree (the
    # column holds 255 characters: PostgreSQL would fail the insert with a 500).
    long_id = "u" * 256

    for call in (
        lambda: client.users.create(id=long_id),
        lambda: client.users.identify(long_id, name="Too long"),
        lambda: client.users.update(long_id, name="Too long"),
    ):
        with pytest.raises(UnprocessableEntityError) as caught:
            call()
        assert "id" in error_message(caught.value)


def test_attributes_merge_per_key_and_null_removes_one(client: TrophyApi) -> None:
    create_attribute(client, "plan", "user")
    create_attribute(client, "team", "user")
    client.users.create(id="user-1", attributes={"plan": "pro", "team": "red"})

    user = client.users.update("user-1", attributes={"team": "blue"})
    assert user.attributes == {"plan": "pro", "team": "blue"}

    user = client.users.update("user-1", attributes={"plan": None})
    assert user.attributes == {"team": "blue"}


def test_undefined_attribute_keys_are_rejected_with_422_naming_them(client: TrophyApi) -> None:
    create_attribute(client, "plan", "user")
    create_attribute(client, "device", "event")  # an event attribute is not a user attribute

    for call in (
        lambda: client.users.create(id="user-1", attributes={"plan": "pro", "device": "ios"}),
        lambda: client.users.identify("user-1", attributes={"device": "ios"}),
    ):
        with pytest.raises(UnprocessableEntityError) as caught:
            call()
        assert "Invalid attribute keys: device" in error_message(caught.value)

    with pytest.raises(ApiError) as missing:
        client.users.get("user-1")
    assert missing.value.status_code == 404


def test_an_invalid_time_zone_is_rejected_with_422(client: TrophyApi) -> None:
    client.users.create(id="user-1", tz="Europe/Paris")

    for call in (
        lambda: client.users.create(id="user-2", tz="Mars/Olympus_Mons"),
        lambda: client.users.identify("user-1", tz="Mars/Olympus_Mons"),
        lambda: client.users.update("user-1", tz="+02:00"),
    ):
        with pytest.raises(UnprocessableEntityError) as caught:
            call()
        assert "tz" in error_message(caught.value)

    assert client.users.get("user-1").tz == "Europe/Paris"


def test_an_invalid_email_is_rejected_with_422(client: TrophyApi) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        client.users.create(id="user-1", email="not-an-email")

    assert "email" in error_message(caught.value)


def test_subscribing_to_emails_without_an_email_is_rejected_with_422(client: TrophyApi) -> None:
    client.users.create(id="user-1")

    with pytest.raises(UnprocessableEntityError) as caught:
        client.users.update("user-1", subscribe_to_emails=True)

    assert "subscribeToEmails" in error_message(caught.value)


def test_unsubscribing_from_emails_drops_the_stored_email(client: TrophyApi) -> None:
    # The SDK documents subscribeToEmails: "If false, Trophy will not store the user's email
    # address."
    client.users.create(id="user-1", email="ada@example.com")

    user = client.users.update("user-1", subscribe_to_emails=False)

    assert user.subscribe_to_emails is False
    assert user.email is None
    assert client.users.get("user-1").email is None


def test_the_control_ratio_setting_places_new_users_in_the_control_group(
    client: TrophyApi,
) -> None:
    client.admin.settings.update(
        experimentation=UpdateAdminSettingsExperimentation(control_ratio=100)
    )

    assert client.users.create(id="user-1").control is True


def test_the_legacy_api_prefix_serves_the_application_api(
    client: TrophyApi, make_client: MakeClient, org: OrganizationWithKey
) -> None:
    create_metric(client, "words")
    legacy = make_client(org.admin_key, api_prefix="/api")

    created = legacy.users.identify("user-1", name="Ada")
    event = legacy.metrics.event("words", user={"id": "user-1"}, value=2.5)

    assert created.name == "Ada"
    assert legacy.users.get("user-1") == created
    assert event.total == 2.5
    assert client.users.single_metric("user-1", "words").current == 2.5
