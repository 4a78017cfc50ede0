"""Admin API: tenant settings (reference §2.2 A49-A50, §3.10 AdminSettings, §4.9)."""

from typing import Any

import pytest

from apps.accounts.models import Tenant
from apps.users.models import EndUser

URL = "/admin/v1/settings"

DEFAULTS = {
    "branding": {
        "appName": "Acme Production",
        "appUrl": "",
        "brandColor": "#374151",
        "font": "MODERN_SANS",
        "logo": None,
        "appIcon": None,
    },
    "experimentation": {"controlRatio": 0, "userActivationWindow": 14},
    "aggregationPeriod": "weekly",
}


def version(tenant: Tenant) -> int:
    return Tenant.objects.values_list("config_version", flat=True).get(pk=tenant.pk)


def patch_ok(client: Any, body: dict[str, Any]) -> dict[str, Any]:
    response = client.patch(URL, body)
    assert response.status_code == 200, response.content
    return response.json()


def assert_422(response: Any, field: str) -> None:
    assert response.status_code == 422, response.content
    body = response.json()
    assert set(body) == {"error"}
    assert field in body["error"]


# --- read ------------------------------------------------------------------------------------


def test_admin_settings_get_has_every_field_with_defaults(api_client, tenant):
    response = api_client.get(URL)

    assert response.status_code == 200
    assert response.json() == DEFAULTS


def test_admin_settings_app_name_defaults_to_the_tenant_name(other_tenant_client):
    assert other_tenant_client.get(URL).json()["branding"]["appName"] == "Customer B"


# --- partial updates -------------------------------------------------------------------------


def test_admin_settings_patch_changes_only_the_supplied_branding_field(api_client, tenant):
    body = patch_ok(api_client, {"branding": {"appName": "Wordy"}})

    expected = {**DEFAULTS, "branding": {**DEFAULTS["branding"], "appName": "Wordy"}}
    assert body == expected
    assert api_client.get(URL).json() == expected
    tenant.refresh_from_db()
    assert tenant.branding == {"appName": "Wordy"}


def test_admin_settings_successive_patches_accumulate(api_client, tenant):
    patch_ok(api_client, {"branding": {"appName": "Wordy", "font": "MONOSPACE"}})
    patch_ok(api_client, {"branding": {"brandColor": "#123"}})
    patch_ok(api_client, {"experimentation": {"userActivationWindow": 30}})
    body = patch_ok(api_client, {"aggregationPeriod": "monthly"})

    assert body == {
        "branding": {
            **DEFAULTS["branding"],
            "appName": "Wordy",
            "font": "MONOSPACE",
            "brandColor": "#123",
        },
        "experimentation": {"controlRatio": 0, "userActivationWindow": 30},
        "aggregationPeriod": "monthly",
    }
    tenant.refresh_from_db()
    assert (tenant.user_activation_window, tenant.control_ratio) == (30, 0)
    assert tenant.aggregation_period == "monthly"


def test_admin_settings_experimentation_fields_update_independently(api_client, tenant):
    patch_ok(api_client, {"experimentation": {"controlRatio": 25}})
    body = patch_ok(api_client, {"experimentation": {"userActivationWindow": 7}})

    assert body["experimentation"] == {"controlRatio": 25, "userActivationWindow": 7}
    tenant.refresh_from_db()
    assert (tenant.control_ratio, tenant.user_activation_window) == (25, 7)


def test_admin_settings_empty_patch_changes_nothing(api_client):
    assert patch_ok(api_client, {}) == DEFAULTS


def test_admin_settings_app_url_may_be_set_and_blanked(api_client):
    assert (
        patch_ok(api_client, {"branding": {"appUrl": "https://acme.example/app"}})["branding"][
            "appUrl"
        ]
        == "https://acme.example/app"
    )
    assert patch_ok(api_client, {"branding": {"appUrl": ""}})["branding"]["appUrl"] == ""


@pytest.mark.parametrize("field", ["logo", "appIcon"])
def test_admin_settings_badges_are_set_and_cleared_with_null(api_client, tenant, field):
    badge = {"url": "https://cdn.example/logo.png"}

    body = patch_ok(api_client, {"branding": {field: badge}})
    assert body["branding"][field] == badge
    assert api_client.get(URL).json()["branding"][field] == badge

    body = patch_ok(api_client, {"branding": {field: None, "appName": "Still here"}})
    assert body["branding"][field] is None
    assert body["branding"]["appName"] == "Still here"
    tenant.refresh_from_db()
    assert field not in tenant.branding


@pytest.mark.parametrize("color", ["#abc", "#A1B2C3", "rgb(1, 2, 3)", "rgba(10,20,30,0.5)"])
def test_admin_settings_accepts_css_colors(api_client, color):
    assert patch_ok(api_client, {"branding": {"brandColor": color}})["branding"]["brandColor"] == (
        color
    )


@pytest.mark.parametrize("font", ["BOOK_SERIF", "ROUNDED_SANS", "MONOSPACE"])
def test_admin_settings_accepts_every_font_family(api_client, font):
    assert patch_ok(api_client, {"branding": {"font": font}})["branding"]["font"] == font


# --- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "color", ["red", "#abcd", "#ggg", "4F46E5", "rgb(1,2)", "rgba(1,2,3)", "", None, 5]
)
def test_admin_settings_invalid_brand_color_is_422(api_client, tenant, color):
    before = version(tenant)

    assert_422(api_client.patch(URL, {"branding": {"brandColor": color}}), "brandColor")

    assert api_client.get(URL).json() == DEFAULTS
    assert version(tenant) == before


@pytest.mark.parametrize("font", ["Comic Sans", "modern_sans", "", None])
def test_admin_settings_invalid_font_is_422(api_client, font):
    assert_422(api_client.patch(URL, {"branding": {"font": font}}), "font")
    assert api_client.get(URL).json() == DEFAULTS


@pytest.mark.parametrize("ratio", [-1, 101, 1000, "abc", None, True, 50.5])
def test_admin_settings_invalid_control_ratio_is_422(api_client, tenant, ratio):
    assert_422(api_client.patch(URL, {"experimentation": {"controlRatio": ratio}}), "controlRatio")

    tenant.refresh_from_db()
    assert tenant.control_ratio == 0


@pytest.mark.parametrize("window", [0, -3, 100000, "week"])
def test_admin_settings_invalid_activation_window_is_422(api_client, window):
    response = api_client.patch(URL, {"experimentation": {"userActivationWindow": window}})

    assert_422(response, "userActivationWindow")


@pytest.mark.parametrize("period", ["daily", "yearly", "WEEKLY", "", None])
def test_admin_settings_invalid_aggregation_period_is_422(api_client, period):
    assert_422(api_client.patch(URL, {"aggregationPeriod": period}), "aggregationPeriod")


@pytest.mark.parametrize(
    "body",
    [
        {"theme": "dark"},
        {"branding": {"appName": "x", "tagline": "y"}},
        {"experimentation": {"controlRatio": 5, "holdout": 1}},
    ],
    ids=["top-level", "branding", "experimentation"],
)
def test_admin_settings_unknown_fields_are_422(api_client, tenant, body):
    assert_422(api_client.patch(URL, body), "unknown field")

    tenant.refresh_from_db()
    assert (tenant.branding, tenant.control_ratio) == ({}, 0)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("appName", "n" * 256),
        ("appUrl", "https://example.com/" + "p" * 2000),
        ("appUrl", "not a url"),
        ("logo", {"url": "not a url"}),
        ("logo", {"href": "https://cdn.example/x.png"}),
        ("logo", "https://cdn.example/x.png"),
    ],
)
def test_admin_settings_invalid_branding_values_are_422(api_client, tenant, field, value):
    assert_422(api_client.patch(URL, {"branding": {field: value}}), field)

    tenant.refresh_from_db()
    assert tenant.branding == {}


def test_admin_settings_are_all_or_nothing(api_client, tenant):
    response = api_client.patch(
        URL,
        {"branding": {"appName": "Valid"}, "experimentation": {"controlRatio": 500}},
    )

    assert response.status_code == 422
    tenant.refresh_from_db()
    assert (tenant.branding, tenant.control_ratio) == ({}, 0)


@pytest.mark.parametrize("body", ["[]", '[{"branding": {}}]', '"x"', "null"])
def test_admin_settings_body_must_be_an_object(api_client, body):
    response = api_client.patch(URL, body, format=None, content_type="application/json")

    assert response.status_code == 422
    assert set(response.json()) == {"error"}


def test_admin_settings_malformed_json_is_400(api_client):
    response = api_client.patch(URL, '{"branding": {', format=None, content_type="application/json")

    assert response.status_code == 400
    assert set(response.json()) == {"error"}


# --- effects ---------------------------------------------------------------------------------


def test_admin_settings_change_bumps_the_config_version(api_client, tenant):
    before = version(tenant)

    patch_ok(api_client, {"experimentation": {"controlRatio": 10}})

    assert version(tenant) > before


def test_admin_settings_read_does_not_bump_the_config_version(api_client, tenant):
    before = version(tenant)

    api_client.get(URL)

    assert version(tenant) == before


def test_admin_settings_control_ratio_100_puts_new_users_in_control(api_client, tenant):
    patch_ok(api_client, {"experimentation": {"controlRatio": 100}})

    for user_id in ("u1", "u2", "u3"):
        response = api_client.post("/v1/users", {"id": user_id})
        assert response.status_code == 201
        assert response.json()["control"] is True
    assert set(EndUser.objects.values_list("control", flat=True)) == {True}


def test_admin_settings_control_ratio_0_keeps_new_users_out_of_control(api_client):
    patch_ok(api_client, {"experimentation": {"controlRatio": 0}})

    assert api_client.post("/v1/users", {"id": "u1"}).json()["control"] is False


def test_admin_settings_control_ratio_applies_to_users_created_by_events(api_client, metric):
    patch_ok(api_client, {"experimentation": {"controlRatio": 100}})

    api_client.post("/v1/metrics/words/event", {"user": {"id": "u9"}, "value": 1})

    assert api_client.get("/v1/users/u9").json()["control"] is True


def test_admin_settings_control_ratio_does_not_move_existing_users(api_client):
    assert api_client.post("/v1/users", {"id": "early"}).json()["control"] is False

    patch_ok(api_client, {"experimentation": {"controlRatio": 100}})
    api_client.patch("/v1/users/early", {"name": "Still early"})

    assert api_client.get("/v1/users/early").json()["control"] is False
    assert api_client.post("/v1/users", {"id": "late"}).json()["control"] is True


# --- isolation and access --------------------------------------------------------------------


def test_admin_settings_are_per_tenant(api_client, other_tenant_client, tenant, other_tenant):
    patch_ok(other_tenant_client, {"branding": {"appName": "B"}, "aggregationPeriod": "monthly"})
    patch_ok(other_tenant_client, {"experimentation": {"controlRatio": 100}})

    assert api_client.get(URL).json() == DEFAULTS
    assert api_client.post("/v1/users", {"id": "u1"}).json()["control"] is False
    assert other_tenant_client.post("/v1/users", {"id": "u1"}).json()["control"] is True
    tenant.refresh_from_db()
    other_tenant.refresh_from_db()
    assert (tenant.branding, tenant.control_ratio, tenant.aggregation_period) == ({}, 0, "weekly")
    assert (other_tenant.control_ratio, other_tenant.aggregation_period) == (100, "monthly")


def test_admin_settings_change_bumps_only_its_own_tenant(other_tenant_client, tenant, other_tenant):
    before, other_before = version(tenant), version(other_tenant)

    patch_ok(other_tenant_client, {"branding": {"appName": "B"}})

    assert version(tenant) == before
    assert version(other_tenant) > other_before


@pytest.mark.parametrize("method", ["get", "patch"])
def test_admin_settings_refuse_application_keys(anon_client, org, method):
    anon_client.credentials(HTTP_X_API_KEY=org.application_key("u1"))

    response = getattr(anon_client, method)(URL, {"branding": {"appName": "x"}}, format="json")

    assert response.status_code == 403
    assert set(response.json()) == {"error"}
