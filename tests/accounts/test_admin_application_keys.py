"""Admin API: application API keys (reference §1.5, §2.2 A51-A52, §3.10 CreatedApplicationKey)."""

import uuid
from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.accounts.choices import ApiKeyKind
from apps.accounts.models import ApiKey
from apps.users.models import EndUser
from tests.admin_issues import admin_issue
from tests.conftest import Client
from tests.factories import event_body

URL = "/admin/v1/application-api-keys"


def create_key(client: Any, user_id: str) -> dict[str, Any]:
    response = client.post(URL, [{"userId": user_id}])
    assert response.status_code == 201, response.content
    assert response.json()["issues"] == []
    [created] = response.json()["created"]
    return created


def with_key(key: str, tenant_id: str | None = None) -> APIClient:
    client = APIClient()
    headers = {"HTTP_X_API_KEY": key}
    if tenant_id is not None:
        headers["HTTP_TENANT_ID"] = tenant_id
    client.credentials(**headers)
    return client


@pytest.fixture
def users(api_client):
    for user_id in ("u1", "u2"):
        assert api_client.put(f"/v1/users/{user_id}", {"name": user_id}).status_code == 200


# --- create ----------------------------------------------------------------------------------


def test_admin_application_key_create_returns_the_key_once(api_client, tenant):
    response = api_client.post(URL, [{"userId": "u1"}])

    assert response.status_code == 201
    body = response.json()
    assert body["issues"] == []
    [created] = body["created"]
    assert set(created) == {"id", "userId", "key", "prefix"}
    stored = ApiKey.objects.get(public_id=created["id"])
    assert created["userId"] == "u1"
    assert created["prefix"].startswith("app_")
    assert created["key"].startswith(created["prefix"] + ".")
    assert len(created["key"]) > len(created["prefix"]) + 20
    assert (stored.kind, stored.tenant, stored.user_id, stored.prefix) == (
        ApiKeyKind.APPLICATION,
        tenant,
        "u1",
        created["prefix"],
    )
    secret = created["key"].split(".", 1)[1]
    assert secret not in stored.secret_hash
    assert created["key"] not in stored.secret_hash


def test_admin_application_key_create_many_with_distinct_keys(api_client):
    response = api_client.post(URL, [{"userId": "u1"}, {"userId": "u1"}, {"userId": "u2"}])

    assert response.status_code == 201
    created = response.json()["created"]
    assert [c["userId"] for c in created] == ["u1", "u1", "u2"]
    assert len({c["key"] for c in created}) == 3
    assert len({c["prefix"] for c in created}) == 3
    assert ApiKey.objects.filter(kind=ApiKeyKind.APPLICATION).count() == 3


def test_admin_application_key_for_a_user_not_yet_known_is_allowed(api_client):
    created = create_key(api_client, "future-user")

    client = with_key(created["key"])
    assert client.get("/v1/users/future-user").status_code == 404
    assert client.put("/v1/users/future-user", {"name": "Now"}, format="json").status_code == 200


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"userId": "u" * 256}, "userId"),
        ({"userId": ""}, "userId"),
        ({}, "userId"),
        ({"userId": None}, "userId"),
        ({"userId": "u1", "scopes": ["read"]}, "scopes"),
    ],
    ids=["too-long", "empty", "missing", "null", "unknown-field"],
)
def test_admin_application_key_invalid_items_are_issues(api_client, item, field):
    response = api_client.post(URL, [item, {"userId": "ok"}])

    assert response.status_code == 201
    body = response.json()
    assert [c["userId"] for c in body["created"]] == ["ok"]
    [issue] = body["issues"]
    assert issue["index"] == 0
    assert issue["severity"] == "error"
    assert issue["message"].startswith(f"{field}:")
    assert list(ApiKey.objects.filter(kind=ApiKeyKind.APPLICATION).values_list("user_id")) == [
        ("ok",)
    ]


def test_admin_application_key_create_with_no_valid_item_is_200(api_client):
    response = api_client.post(URL, [{"userId": ""}])

    assert response.status_code == 200
    assert response.json()["created"] == []
    assert not ApiKey.objects.filter(kind=ApiKeyKind.APPLICATION).exists()


@pytest.mark.parametrize("body", ["{}", "[]", '{"userId": "u1"}'])
def test_admin_application_key_body_must_be_a_non_empty_array(api_client, body):
    response = api_client.post(URL, body, format=None, content_type="application/json")

    assert response.status_code == 422
    assert set(response.json()) == {"error"}


def test_admin_application_keys_are_write_only(api_client):
    created = create_key(api_client, "u1")

    listed = api_client.get(URL)
    item = api_client.get(f"{URL}/{created['id']}")

    assert listed.status_code == 405
    assert set(listed.json()) == {"error"}
    assert item.status_code == 404
    assert created["key"] not in listed.content.decode() + item.content.decode()


# --- using the key ---------------------------------------------------------------------------


def test_admin_application_key_works_for_its_own_user(api_client, users, metric):
    client = with_key(create_key(api_client, "u1")["key"])

    assert client.get("/v1/users/u1").status_code == 200
    assert client.patch("/v1/users/u1", {"name": "Ada"}, format="json").json()["name"] == "Ada"
    event = client.post("/v1/metrics/words/event", event_body("u1", 2), format="json")
    assert event.status_code == 201
    assert client.get("/v1/users/u1/metrics/words").json()["current"] == 2


def test_admin_application_key_is_403_for_another_user(api_client, users, metric):
    client = with_key(create_key(api_client, "u1")["key"])

    responses = [
        client.get("/v1/users/u2"),
        client.patch("/v1/users/u2", {"name": "Mallory"}, format="json"),
        client.put("/v1/users/u3", {"name": "Mallory"}, format="json"),
        client.post("/v1/users", {"id": "u3"}, format="json"),
        client.post("/v1/metrics/words/event", event_body("u2", 100), format="json"),
        client.get("/v1/users/u2/metrics/words"),
    ]

    for response in responses:
        assert response.status_code == 403, response.content
        assert set(response.json()) == {"error"}
    assert api_client.get("/v1/users/u2").json()["name"] == "u2"
    assert api_client.get("/v1/users/u2/metrics/words").json()["current"] == 0
    assert api_client.get("/v1/users/u3").status_code == 404


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/admin/v1/metrics"),
        ("get", "/admin/v1/settings"),
        ("post", "/admin/v1/application-api-keys"),
        ("post", "/admin/v1/metrics/events"),
    ],
)
def test_admin_application_key_is_403_on_the_admin_api(api_client, method, path):
    client = with_key(create_key(api_client, "u1")["key"])

    if method == "get":
        response = client.get(path)
    else:
        response = client.post(path, [{"userId": "u1"}], format="json")

    assert response.status_code == 403
    assert set(response.json()) == {"error"}
    assert ApiKey.objects.filter(kind=ApiKeyKind.APPLICATION).count() == 1


def test_admin_application_key_cannot_leave_its_tenant_with_tenant_id(
    api_client, users, other_tenant
):
    key = create_key(api_client, "u1")["key"]

    response = with_key(key, tenant_id="customer-b").get("/v1/users/u1")

    assert response.status_code == 403
    assert set(response.json()) == {"error"}


def test_admin_application_key_made_in_a_tenant_is_bound_to_it(
    api_client, other_tenant_client, other_tenant
):
    other_tenant_client.put("/v1/users/u1", {"name": "B's user"})
    api_client.put("/v1/users/u1", {"name": "Default user"})

    created = create_key(other_tenant_client, "u1")

    assert ApiKey.objects.get(public_id=created["id"]).tenant == other_tenant
    assert with_key(created["key"]).get("/v1/users/u1").json()["name"] == "B's user"
    assert with_key(created["key"], "customer-b").get("/v1/users/u1").status_code == 200


def test_admin_application_key_with_a_tampered_secret_is_401(api_client, users):
    created = create_key(api_client, "u1")

    response = with_key(created["prefix"] + ".tampered").get("/v1/users/u1")

    assert response.status_code == 401
    assert set(response.json()) == {"error"}


# --- delete ----------------------------------------------------------------------------------


def test_admin_application_key_deleted_is_401(api_client, users):
    created = create_key(api_client, "u1")
    client = with_key(created["key"])
    assert client.get("/v1/users/u1").status_code == 200

    response = api_client.delete(f"{URL}?ids={created['id']}")

    assert response.status_code == 200
    assert response.json() == {"deleted": [{"id": created["id"]}], "issues": []}
    assert not ApiKey.objects.filter(public_id=created["id"]).exists()
    denied = client.get("/v1/users/u1")
    assert denied.status_code == 401
    assert denied.json() == {"error": "Invalid API key"}


def test_admin_application_key_delete_several_keeps_the_others(api_client, users):
    keys = [create_key(api_client, "u1") for _ in range(3)]

    response = api_client.delete(f"{URL}?ids={keys[0]['id']},{keys[1]['id']}")

    assert response.json()["deleted"] == [{"id": keys[0]["id"]}, {"id": keys[1]["id"]}]
    assert with_key(keys[2]["key"]).get("/v1/users/u1").status_code == 200
    assert with_key(keys[0]["key"]).get("/v1/users/u1").status_code == 401


def test_admin_application_key_delete_unknown_is_an_issue(api_client):
    unknown = str(uuid.uuid4())

    response = api_client.delete(f"{URL}?ids={unknown}&ids=bad")

    assert response.status_code == 200
    assert response.json() == {
        "deleted": [],
        "issues": [
            admin_issue("Application API key not found by ID", id=unknown),
            admin_issue("id must be a valid UUID", id="bad"),
        ],
    }


def test_admin_application_key_of_another_tenant_cannot_be_deleted(api_client, other_tenant_client):
    other_tenant_client.put("/v1/users/u1", {"name": "B's user"})
    created = create_key(other_tenant_client, "u1")

    response = api_client.delete(f"{URL}?ids={created['id']}")

    assert response.json() == {
        "deleted": [],
        "issues": [admin_issue("Application API key not found by ID", id=created["id"])],
    }
    assert with_key(created["key"]).get("/v1/users/u1").status_code == 200


def test_admin_keys_cannot_be_deleted_as_application_keys(api_client, org):
    admin_key = ApiKey.objects.get(kind=ApiKeyKind.ADMIN)

    response = api_client.delete(f"{URL}?ids={admin_key.public_id}")

    assert response.json()["deleted"] == []
    assert response.json()["issues"][0]["message"] == "Application API key not found by ID"
    assert api_client.get("/admin/v1/metrics").status_code == 200


def test_admin_application_key_delete_without_ids_is_422(api_client):
    response = api_client.delete(URL)

    assert response.status_code == 422
    assert set(response.json()) == {"error"}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("put", "/v1/users/alice", {"attributes": {"plan": "pro"}}),
        ("patch", "/v1/users/alice", {"attributes": {"plan": "pro"}}),
        ("post", "/v1/users", {"id": "alice", "attributes": {"plan": "pro"}}),
        (
            "post",
            "/v1/metrics/words/event",
            {"user": {"id": "alice", "attributes": {"plan": "pro"}}, "value": 1},
        ),
    ],
)
def test_application_keys_may_be_stopped_from_changing_attributes(
    settings, org, api_client, metric, method, path, body
):
    api_client.post("/admin/v1/attributes", [{"key": "plan", "name": "Plan", "type": "user"}])
    api_client.put("/v1/users/alice", {"attributes": {"plan": "free"}})
    device = Client()
    device.credentials(HTTP_X_API_KEY=org.application_key("alice"))

    settings.APPLICATION_KEYS_CHANGE_ATTRIBUTES = False
    refused = getattr(device, method)(path, body)
    assert refused.status_code == 403
    assert "attributes" in refused.json()["error"]
    assert EndUser.objects.get(external_id="alice").attributes == {"plan": "free"}
    # Without attributes the same call works, and admin keys may still set them.
    plain = {k: v for k, v in body.items() if k != "attributes"}
    if "user" in plain:
        plain = {**plain, "user": {"id": "alice"}}
    assert getattr(device, method)(path, plain).status_code in (200, 201)
    assert api_client.put("/v1/users/alice", {"attributes": {"plan": "pro"}}).status_code == 200

    settings.APPLICATION_KEYS_CHANGE_ATTRIBUTES = True  # the default
    assert getattr(device, method)(path, body).status_code in (200, 201)
