"""Admin API: custom attribute definitions (reference §2.2 A7-A11, §3.10 AdminAttribute)."""

import uuid
from typing import Any

import pytest

from apps.core.errors import ValidationError
from apps.users.configuration import attribute_update
from apps.users.domain import AttributeSettings
from apps.users.models import Attribute, EndUser
from tests.admin_issues import admin_issue
from tests.factories import AttributeFactory, MetricFactory, bump, event_body

URL = "/admin/v1/attributes"


def create(client: Any, *items: dict[str, Any]) -> list[dict[str, Any]]:
    response = client.post(URL, list(items))
    assert response.status_code == 201, response.content
    assert response.json()["issues"] == []
    return response.json()["created"]


def only_issue(response: Any) -> dict[str, Any]:
    body = response.json()
    assert len(body["issues"]) == 1, body
    return body["issues"][0]


@pytest.fixture
def plan(tenant):
    attribute = AttributeFactory(tenant=tenant, key="plan", name="Plan", type="user")
    bump(tenant)
    return attribute


# --- create ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["user", "event"])
def test_admin_attribute_create_renders_admin_attribute(api_client, tenant, kind):
    response = api_client.post(URL, [{"name": "Plan", "key": "plan", "type": kind}])

    assert response.status_code == 201
    attribute = Attribute.objects.get(tenant=tenant)
    assert response.json() == {
        "created": [{"id": str(attribute.public_id), "name": "Plan", "key": "plan", "type": kind}],
        "issues": [],
    }
    assert (attribute.name, attribute.key, attribute.type) == ("Plan", "plan", kind)


def test_admin_attribute_same_key_may_exist_once_per_type(api_client, tenant):
    created = create(
        api_client,
        {"name": "Plan", "key": "plan", "type": "user"},
        {"name": "Plan at event time", "key": "plan", "type": "event"},
    )

    assert sorted(a["type"] for a in created) == ["event", "user"]
    assert Attribute.objects.filter(tenant=tenant, key="plan").count() == 2


def test_admin_attribute_duplicate_key_of_the_same_type_is_an_issue(api_client, tenant, plan):
    response = api_client.post(
        URL,
        [
            {"name": "Plan again", "key": "plan", "type": "user"},
            {"name": "Device", "key": "device", "type": "event"},
            {"name": "Device again", "key": "device", "type": "event"},
        ],
    )

    assert response.status_code == 201
    body = response.json()
    assert [a["key"] for a in body["created"]] == ["device"]
    message = "Key already in use by another attribute of this type"
    assert body["issues"] == [
        admin_issue(message, index=0),
        admin_issue(message, index=2),
    ]
    assert Attribute.objects.get(tenant=tenant, key="plan").name == "Plan"
    assert Attribute.objects.get(tenant=tenant, key="device").name == "Device"


def test_admin_attribute_key_may_repeat_in_another_tenant(other_tenant_client, plan):
    create(other_tenant_client, {"name": "Plan", "key": "plan", "type": "user"})

    assert Attribute.objects.filter(key="plan").count() == 2


@pytest.mark.parametrize("kind", ["USER", "both", "", None, 1])
def test_admin_attribute_type_must_be_user_or_event(api_client, tenant, kind):
    response = api_client.post(URL, [{"name": "X", "key": "x", "type": kind}])

    assert response.status_code == 200
    assert only_issue(response)["message"].startswith("type:")
    assert not Attribute.objects.filter(tenant=tenant).exists()


def test_admin_attribute_type_is_required(api_client, tenant):
    response = api_client.post(URL, [{"name": "X", "key": "x"}])

    assert response.status_code == 200
    assert only_issue(response)["message"].startswith("type:")


@pytest.mark.parametrize("key", ["a", "utm_source", "A-b_9", "k" * 100])
def test_admin_attribute_keys_matching_the_pattern_are_accepted(api_client, key):
    [created] = create(api_client, {"name": "A", "key": key, "type": "event"})

    assert created["key"] == key


@pytest.mark.parametrize(
    "key", ["with space", "a.b", "a/b", "a:b", "\u00e9t\u00e9", "digit-\u0663", ""]
)
def test_admin_attribute_keys_outside_the_pattern_are_issues(api_client, tenant, key):
    response = api_client.post(URL, [{"name": "A", "key": key, "type": "user"}])

    assert response.status_code == 200
    issue = only_issue(response)
    assert issue["index"] == 0
    assert issue["severity"] == "error"
    assert issue["message"].startswith("key:")
    assert not Attribute.objects.filter(tenant=tenant).exists()


@pytest.mark.parametrize(("field", "value"), [("name", "n" * 256), ("key", "k" * 101)])
def test_admin_attribute_over_long_strings_are_issues(api_client, tenant, field, value):
    item = {"name": "A", "key": "a", "type": "user", field: value}

    response = api_client.post(URL, [item])

    assert response.status_code == 200
    assert only_issue(response)["message"].startswith(f"{field}:")
    assert not Attribute.objects.filter(tenant=tenant).exists()


def test_admin_attribute_created_is_accepted_on_users_at_once(api_client):
    refused = api_client.put("/v1/users/u1", {"attributes": {"plan": "pro"}})
    assert refused.status_code == 422
    assert "Invalid attribute keys: plan" in refused.json()["error"]

    create(api_client, {"name": "Plan", "key": "plan", "type": "user"})

    response = api_client.put("/v1/users/u1", {"attributes": {"plan": "pro"}})
    assert response.status_code == 200
    assert response.json()["attributes"] == {"plan": "pro"}


def test_admin_attribute_of_type_event_is_not_a_user_attribute(api_client):
    create(api_client, {"name": "Device", "key": "device", "type": "event"})

    response = api_client.put("/v1/users/u1", {"attributes": {"device": "ios"}})

    assert response.status_code == 422
    assert not EndUser.objects.filter(external_id="u1").exists()


# --- list and get ----------------------------------------------------------------------------


def test_admin_attribute_list_and_get(api_client, plan):
    expected = {"id": str(plan.public_id), "name": "Plan", "key": "plan", "type": "user"}

    assert api_client.get(URL).json() == [expected]
    response = api_client.get(f"{URL}/{plan.public_id}")
    assert response.status_code == 200
    assert response.json() == expected


def test_admin_attribute_get_unknown_is_404(api_client, plan):
    response = api_client.get(f"{URL}/{uuid.uuid4()}")

    assert response.status_code == 404
    assert response.json() == {"error": "Attribute not found by ID"}


# --- update ----------------------------------------------------------------------------------


def test_admin_attribute_update_changes_the_name_only(api_client, plan):
    response = api_client.patch(URL, [{"id": str(plan.public_id), "name": "Billing plan"}])

    assert response.status_code == 200
    assert response.json() == {
        "updated": [
            {"id": str(plan.public_id), "name": "Billing plan", "key": "plan", "type": "user"}
        ],
        "issues": [],
    }
    plan.refresh_from_db()
    assert (plan.name, plan.key, plan.type) == ("Billing plan", "plan", "user")


def test_admin_attribute_update_without_a_name_changes_nothing(api_client, plan):
    response = api_client.patch(URL, [{"id": str(plan.public_id)}])

    assert response.json()["updated"][0]["name"] == "Plan"
    plan.refresh_from_db()
    assert plan.name == "Plan"


@pytest.mark.parametrize(("field", "value"), [("key", "tier"), ("type", "event")])
def test_admin_attribute_key_and_type_are_immutable(api_client, plan, field, value):
    item = {"id": str(plan.public_id), "name": "Changed", field: value}

    response = api_client.patch(URL, [item])

    assert response.status_code == 200
    assert response.json() == {
        "updated": [],
        "issues": [admin_issue(f"{field}: unknown field", id=str(plan.public_id))],
    }
    plan.refresh_from_db()
    assert (plan.name, plan.key, plan.type) == ("Plan", "plan", "user")


@pytest.mark.parametrize(("field", "value"), [("key", "tier"), ("type", "event")])
def test_the_update_service_refuses_a_new_key_or_type(tenant, plan, field, value):
    # The declaration can carry them (a create needs them); an update that would change them is
    # refused, not silently ignored.
    changes = AttributeSettings(**{"name": "Changed", field: value})

    with pytest.raises(ValidationError) as refused:
        attribute_update(tenant, plan, changes)

    assert (refused.value.fields, refused.value.code) == ((field,), "frozen")
    plan.refresh_from_db()
    assert (plan.name, plan.key, plan.type) == ("Plan", "plan", "user")


def test_the_update_service_takes_the_stored_key_and_type_as_no_change(tenant, plan):
    attribute_update(tenant, plan, AttributeSettings(name="Tier", key="plan", type="user"))

    plan.refresh_from_db()
    assert (plan.name, plan.key, plan.type) == ("Tier", "plan", "user")


@pytest.mark.parametrize("name", ["n" * 256, "", None])
def test_admin_attribute_invalid_name_on_update_is_an_issue(api_client, plan, name):
    response = api_client.patch(URL, [{"id": str(plan.public_id), "name": name}])

    assert response.status_code == 200
    assert only_issue(response)["message"].startswith("name:")
    plan.refresh_from_db()
    assert plan.name == "Plan"


def test_admin_attribute_update_keeps_earlier_items_when_a_later_one_fails(api_client, tenant):
    first = AttributeFactory(tenant=tenant, key="a", name="A")
    second = AttributeFactory(tenant=tenant, key="b", name="B")

    response = api_client.patch(
        URL,
        [
            {"id": str(first.public_id), "name": "A2"},
            {"id": str(second.public_id), "name": "B2", "key": "nope"},
        ],
    )

    assert [a["name"] for a in response.json()["updated"]] == ["A2"]
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.name, second.name) == ("A2", "B")


# --- delete ----------------------------------------------------------------------------------


def test_admin_attribute_delete_stops_accepting_the_key(api_client, tenant, plan):
    assert api_client.put("/v1/users/u1", {"attributes": {"plan": "pro"}}).status_code == 200

    response = api_client.delete(f"{URL}?ids={plan.public_id}")

    assert response.status_code == 200
    assert response.json() == {"deleted": [{"id": str(plan.public_id)}], "issues": []}
    assert not Attribute.objects.filter(tenant=tenant).exists()
    assert api_client.get("/v1/users/u1").json()["attributes"] == {}
    assert api_client.put("/v1/users/u1", {"attributes": {"plan": "max"}}).status_code == 422


def test_admin_event_attribute_delete_stops_accepting_it_on_events(api_client, tenant):
    MetricFactory(tenant=tenant, key="words")
    [device] = create(api_client, {"name": "Device", "key": "device", "type": "event"})
    body = {**event_body("u1", 1), "attributes": {"device": "ios"}}
    assert api_client.post("/v1/metrics/words/event", body).status_code == 201

    api_client.delete(f"{URL}?ids={device['id']}")

    assert api_client.post("/v1/metrics/words/event", body).status_code == 422


# --- tenant isolation ------------------------------------------------------------------------


@pytest.fixture
def foreign(other_tenant):
    attribute = AttributeFactory(tenant=other_tenant, key="region", name="Region")
    bump(other_tenant)
    return attribute


def test_admin_attribute_of_another_tenant_is_invisible(api_client, plan, foreign):
    assert [a["key"] for a in api_client.get(URL).json()] == ["plan"]
    assert api_client.get(f"{URL}/{foreign.public_id}").status_code == 404


def test_admin_attribute_of_another_tenant_cannot_be_updated_or_deleted(api_client, foreign):
    not_found = admin_issue("Attribute not found by ID", id=str(foreign.public_id))

    updated = api_client.patch(URL, [{"id": str(foreign.public_id), "name": "Mine"}])
    deleted = api_client.delete(f"{URL}?ids={foreign.public_id}")

    assert updated.json() == {"updated": [], "issues": [not_found]}
    assert deleted.json() == {"deleted": [], "issues": [not_found]}
    foreign.refresh_from_db()
    assert foreign.name == "Region"


def test_admin_attribute_of_another_tenant_is_not_accepted_on_users(api_client, foreign):
    response = api_client.put("/v1/users/u1", {"attributes": {"region": "eu"}})

    assert response.status_code == 422
