"""Admin attribute definitions through the SDK."""

import uuid

import pytest
from trophy import CreateAttributeRequestItem, TrophyApi, UpdateAttributeRequestItem
from trophy.errors import NotFoundError, UnprocessableEntityError
from trophy.types import AdminAttribute, DeletedResource

from tests.contract.helpers import CONTRACT_DB, create_attribute, error_message

pytestmark = [pytest.mark.contract, CONTRACT_DB]


def test_create_returns_201_with_user_and_event_attributes(client: TrophyApi) -> None:
    response = client.admin.attributes.with_raw_response.create(
        request=[
            CreateAttributeRequestItem(name="Plan", key="plan", type="user"),
            CreateAttributeRequestItem(name="Device", key="device", type="event"),
            # A key is unique per type: the same key may name one attribute of each type.
            CreateAttributeRequestItem(name="Plan at event time", key="plan", type="event"),
        ]
    )

    assert response.status_code == 201
    assert response.data.issues == []
    created = response.data.created
    assert all(isinstance(a, AdminAttribute) for a in created)
    assert [(a.key, a.name, a.type) for a in created] == [
        ("plan", "Plan", "user"),
        ("device", "Device", "event"),
        ("plan", "Plan at event time", "event"),
    ]
    assert len({uuid.UUID(a.id) for a in created}) == 3


def test_create_reports_per_item_issues_by_index(client: TrophyApi) -> None:
    create_attribute(client, "plan", "user")

    response = client.admin.attributes.with_raw_response.create(
        request=[
            CreateAttributeRequestItem(name="Plan", key="plan", type="user"),
            CreateAttributeRequestItem(name="Bad key", key="bad.key", type="user"),
            CreateAttributeRequestItem(name="Bad type", key="colour", type="session"),  # type: ignore[arg-type]
        ]
    )

    assert response.status_code == 200
    assert response.data.created == []
    issues = response.data.issues
    assert [(issue.index, issue.severity) for issue in issues] == [
        (0, "error"),
        (1, "error"),
        (2, "error"),
    ]
    assert issues[0].message == "Key already in use by another attribute of this type"
    assert "key" in issues[1].message
    assert "type" in issues[2].message


def test_list_get_update_and_delete(client: TrophyApi) -> None:
    plan = create_attribute(client, "plan", "user")
    device = create_attribute(client, "device", "event")

    assert client.admin.attributes.list() == [plan, device]
    assert client.admin.attributes.list(limit=1, skip=1) == [device]
    assert client.admin.attributes.get(device.id) == device

    unknown = str(uuid.uuid4())
    updated = client.admin.attributes.update(
        request=[
            UpdateAttributeRequestItem(id=plan.id, name="Subscription plan"),
            UpdateAttributeRequestItem(id=unknown, name="Ghost"),
        ]
    )
    assert [(a.id, a.key, a.name, a.type) for a in updated.updated] == [
        (plan.id, "plan", "Subscription plan", "user")
    ]
    assert [(issue.id, issue.message) for issue in updated.issues] == [
        (unknown, "Attribute not found by ID")
    ]

    deleted = client.admin.attributes.delete(ids=[device.id])
    assert deleted.deleted == [DeletedResource(id=device.id)]
    assert deleted.issues == []
    assert [a.id for a in client.admin.attributes.list()] == [plan.id]
    with pytest.raises(NotFoundError) as caught:
        client.admin.attributes.get(device.id)
    assert error_message(caught.value) == "Attribute not found by ID"


def test_a_deleted_user_attribute_disappears_from_users_and_is_rejected(
    client: TrophyApi,
) -> None:
    plan = create_attribute(client, "plan", "user")
    create_attribute(client, "team", "user")
    client.users.create(id="user-1", attributes={"plan": "pro", "team": "red"})

    client.admin.attributes.delete(ids=[plan.id])

    assert client.users.get("user-1").attributes == {"team": "red"}
    with pytest.raises(UnprocessableEntityError) as caught:
        client.users.update("user-1", attributes={"plan": "free"})
    assert "Invalid attribute keys: plan" in error_message(caught.value)


def test_a_new_attribute_is_accepted_at_once(client: TrophyApi) -> None:
    # Configuration is cached per tenant; a definition must be usable by the very next request.
    client.users.create(id="user-1")
    with pytest.raises(UnprocessableEntityError):
        client.users.update("user-1", attributes={"plan": "pro"})

    create_attribute(client, "plan", "user")

    assert client.users.update("user-1", attributes={"plan": "pro"}).attributes == {"plan": "pro"}
