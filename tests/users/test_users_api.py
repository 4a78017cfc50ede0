import datetime as dt

import pytest
import time_machine

from apps.users.models import EndUser
from tests.factories import AttributeFactory, bump


@pytest.fixture
def plan_attribute(tenant):
    attribute = AttributeFactory(tenant=tenant, key="plan", name="Plan")
    bump(tenant)
    return attribute


def test_post_users_creates_user_with_defaults(api_client, tenant):
    response = api_client.post("/v1/users", {"id": "u1", "name": "Ada", "tz": "Europe/Paris"})
    assert response.status_code == 201
    body = response.json()
    assert body["id"] == "u1"
    assert body["name"] == "Ada"
    assert body["tz"] == "Europe/Paris"
    assert body["subscribeToEmails"] is True
    assert body["attributes"] == {}
    assert body["deviceTokens"] == []
    assert body["control"] is False
    assert body["created"].endswith("Z")
    assert EndUser.objects.filter(tenant=tenant, external_id="u1").count() == 1


def test_post_users_for_existing_id_updates_only_supplied_fields(api_client):
    api_client.post("/v1/users", {"id": "u1", "name": "Ada", "email": "ada@example.com"})
    response = api_client.post("/v1/users", {"id": "u1", "name": "Ada L."})
    assert response.status_code == 200
    assert response.json()["name"] == "Ada L."
    assert response.json()["email"] == "ada@example.com"


def test_put_identifies_and_creates_when_missing(api_client):
    response = api_client.put("/v1/users/new-user", {"email": "n@example.com"})
    assert response.status_code == 200
    assert response.json()["email"] == "n@example.com"
    assert api_client.get("/v1/users/new-user").status_code == 200


def test_patch_unknown_user_is_404(api_client):
    response = api_client.patch("/v1/users/ghost", {"name": "x"})
    assert response.status_code == 404
    assert response.json() == {"error": 'User not found: "ghost"'}
    assert not EndUser.objects.filter(external_id="ghost").exists()


def test_get_unknown_user_is_404(api_client):
    assert api_client.get("/v1/users/ghost").status_code == 404


def test_patch_changes_only_supplied_fields_and_null_clears(api_client):
    api_client.put("/v1/users/u1", {"name": "Ada", "tz": "Asia/Tokyo", "email": "a@example.com"})
    response = api_client.patch("/v1/users/u1", {"tz": None})
    assert response.status_code == 200
    body = response.json()
    assert body["tz"] is None
    assert body["name"] == "Ada"
    assert body["email"] == "a@example.com"


@pytest.mark.parametrize("tz", ["Mars/Olympus", "utc+2", "", "Europe/paris"])
def test_invalid_time_zone_is_rejected(api_client, tz):
    response = api_client.put("/v1/users/u1", {"tz": tz})
    assert response.status_code == 422
    assert "tz" in response.json()["error"]
    assert not EndUser.objects.exists()


def test_subscribe_to_emails_true_without_email_is_an_error(api_client):
    response = api_client.put("/v1/users/u1", {"subscribeToEmails": True})
    assert response.status_code == 422
    assert "subscribeToEmails" in response.json()["error"]
    assert not EndUser.objects.exists()


def test_subscribe_to_emails_true_with_stored_email_is_fine(api_client):
    api_client.put("/v1/users/u1", {"email": "a@example.com"})
    response = api_client.patch("/v1/users/u1", {"subscribeToEmails": True})
    assert response.status_code == 200
    assert response.json()["subscribeToEmails"] is True


def test_unsubscribing_drops_the_email_and_resubscribing_needs_one(api_client):
    api_client.put("/v1/users/u1", {"email": "a@example.com"})
    response = api_client.patch("/v1/users/u1", {"subscribeToEmails": False})
    assert response.json()["email"] is None
    assert api_client.patch("/v1/users/u1", {"subscribeToEmails": True}).status_code == 422
    both = api_client.patch("/v1/users/u1", {"subscribeToEmails": True, "email": "b@example.com"})
    assert both.status_code == 200
    assert both.json()["email"] == "b@example.com"


def test_subscribe_to_emails_must_be_a_boolean(api_client):
    response = api_client.put(
        "/v1/users/u1", {"email": "a@example.com", "subscribeToEmails": "yes"}
    )
    assert response.status_code == 422


def test_invalid_email_is_rejected(api_client):
    assert api_client.put("/v1/users/u1", {"email": "not-an-email"}).status_code == 422


def test_attributes_only_for_defined_user_keys(api_client, plan_attribute):
    response = api_client.put(
        "/v1/users/u1", {"attributes": {"plan": "pro", "device": "x", "a": "b"}}
    )
    assert response.status_code == 422
    message = response.json()["error"]
    assert message.startswith("Invalid attribute keys: a, device.")
    assert "plan" not in message.split(".")[0]
    assert not EndUser.objects.exists()


def test_event_attribute_keys_are_not_user_attribute_keys(api_client, tenant):
    AttributeFactory(tenant=tenant, key="source", type="event")
    bump(tenant)
    assert api_client.put("/v1/users/u1", {"attributes": {"source": "web"}}).status_code == 422


def test_attributes_merge_per_key_and_null_removes(api_client, tenant, plan_attribute):
    AttributeFactory(tenant=tenant, key="country")
    bump(tenant)
    api_client.put("/v1/users/u1", {"attributes": {"plan": "pro", "country": "fr"}})
    response = api_client.patch("/v1/users/u1", {"attributes": {"plan": "free"}})
    assert response.json()["attributes"] == {"plan": "free", "country": "fr"}
    response = api_client.patch("/v1/users/u1", {"attributes": {"country": None}})
    assert response.json()["attributes"] == {"plan": "free"}


def test_device_tokens_are_deduplicated_and_null_clears(api_client):
    response = api_client.put("/v1/users/u1", {"deviceTokens": ["a", "b", "a"]})
    assert response.json()["deviceTokens"] == ["a", "b"]
    response = api_client.patch("/v1/users/u1", {"deviceTokens": None})
    assert response.json()["deviceTokens"] == []


def test_device_tokens_must_be_a_list_of_strings(api_client):
    assert api_client.put("/v1/users/u1", {"deviceTokens": "abc"}).status_code == 422
    assert api_client.put("/v1/users/u1", {"deviceTokens": [{"a": 1}]}).status_code == 422


@time_machine.travel(dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC))
def test_sign_up_date_accepts_datetime_truncated_to_utc_day(api_client):
    response = api_client.put("/v1/users/u1", {"signUpDate": "2025-06-30T23:30:00-02:00"})
    assert response.status_code == 200
    assert response.json()["signUpDate"] == "2025-07-01"


@time_machine.travel(dt.datetime(2026, 3, 10, 23, 30, tzinfo=dt.UTC))
def test_sign_up_date_in_future_is_judged_in_the_users_time_zone(api_client):
    # 23:30 UTC on 10 March is already 11 March in Tokyo, so the 11th is not in the future there.
    ok = api_client.put("/v1/users/tokyo", {"tz": "Asia/Tokyo", "signUpDate": "2026-03-11"})
    assert ok.status_code == 200
    late = api_client.put("/v1/users/utc", {"signUpDate": "2026-03-11"})
    assert late.status_code == 422
    assert "signUpDate" in late.json()["error"]


def test_unknown_fields_are_rejected(api_client):
    response = api_client.put("/v1/users/u1", {"nmae": "typo"})
    assert response.status_code == 422
    assert "nmae" in response.json()["error"]


def test_overlong_strings_are_rejected_not_500(api_client):
    assert api_client.put("/v1/users/u1", {"name": "x" * 256}).status_code == 422
    assert api_client.post("/v1/users", {"id": "x" * 256}).status_code == 422


def test_body_must_be_an_object(api_client):
    response = api_client.put("/v1/users/u1", ["not", "an", "object"])
    assert response.status_code == 422


def test_malformed_json_is_400(api_client):
    response = api_client.generic(
        "PUT", "/v1/users/u1", "{not json", content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"].startswith("Malformed JSON")


def test_users_are_also_served_under_api_prefix(api_client):
    assert api_client.put("/api/users/u1", {"name": "Legacy"}).status_code == 200
    assert api_client.get("/v1/users/u1").json()["name"] == "Legacy"


def test_control_group_follows_the_tenant_ratio(api_client, tenant):
    tenant.control_ratio = 100
    tenant.save()
    assert api_client.post("/v1/users", {"id": "c1"}).json()["control"] is True
    tenant.control_ratio = 0
    tenant.save()
    assert api_client.post("/v1/users", {"id": "c2"}).json()["control"] is False
    # Assigned once, at creation: later changes to the ratio do not move existing users.
    assert api_client.get("/v1/users/c1").json()["control"] is True


def test_users_are_isolated_between_tenants(api_client, other_tenant_client):
    api_client.put("/v1/users/shared-id", {"name": "Default tenant"})
    assert other_tenant_client.get("/v1/users/shared-id").status_code == 404
    other_tenant_client.put("/v1/users/shared-id", {"name": "Other tenant"})
    assert api_client.get("/v1/users/shared-id").json()["name"] == "Default tenant"
    assert other_tenant_client.get("/v1/users/shared-id").json()["name"] == "Other tenant"


def test_application_key_reads_only_its_own_user(org, anon_client):
    anon_client.credentials(HTTP_X_API_KEY=org.application_key("me"))
    assert anon_client.put("/v1/users/me", {"name": "Me"}).status_code == 200
    assert anon_client.get("/v1/users/me").status_code == 200
    forbidden = anon_client.get("/v1/users/someone-else")
    assert forbidden.status_code == 403
    assert "error" in forbidden.json()
    assert anon_client.post("/v1/users", {"id": "someone-else"}).status_code == 403
