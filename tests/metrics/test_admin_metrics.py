"""Admin API: metric definitions (reference §2.2 A1-A5, §3.3 CreatedMetric)."""

import uuid
from typing import Any

import pytest

from apps.core.errors import ValidationError
from apps.metrics.configuration import metric_update
from apps.metrics.domain import MetricSettings
from apps.metrics.models import Metric, MetricEvent, MetricTotal
from tests.admin_issues import admin_issue
from tests.factories import MetricFactory, bump, event_body

URL = "/admin/v1/metrics"


def create(client: Any, *items: dict[str, Any]) -> list[dict[str, Any]]:
    response = client.post(URL, list(items))
    assert response.status_code == 201, response.content
    assert response.json()["issues"] == []
    return response.json()["created"]


def only_issue(response: Any) -> dict[str, Any]:
    body = response.json()
    assert len(body["issues"]) == 1, body
    return body["issues"][0]


# --- create ----------------------------------------------------------------------------------


def test_admin_metric_create_renders_created_metric_with_defaults(api_client, tenant):
    response = api_client.post(URL, [{"name": "Lessons", "key": "lessons"}])

    assert response.status_code == 201
    metric = Metric.objects.get(tenant=tenant)
    assert response.json() == {
        "created": [
            {
                "id": str(metric.public_id),
                "name": "Lessons",
                "key": "lessons",
                "unitType": "number",
                "units": "",
            }
        ],
        "issues": [],
    }
    assert (metric.key, metric.name, metric.unit_type, metric.units) == (
        "lessons",
        "Lessons",
        "number",
        "",
    )


def test_admin_metric_create_with_currency_units(api_client, tenant):
    [created] = create(
        api_client, {"name": "Revenue", "key": "revenue", "unitType": "currency", "units": "USD"}
    )

    assert created["unitType"] == "currency"
    assert created["units"] == "USD"
    assert Metric.objects.get(tenant=tenant).units == "USD"


def test_admin_metric_create_with_a_free_label_for_number_units(api_client):
    [created] = create(api_client, {"name": "Distance", "key": "km", "units": "kilometres"})

    assert created["units"] == "kilometres"


@pytest.mark.parametrize("units", ["", "usd", "US", "DOLLARS", "12$"])
def test_admin_metric_currency_needs_an_iso_code(api_client, tenant, units):
    item = {"name": "Revenue", "key": "revenue", "unitType": "currency", "units": units}

    response = api_client.post(URL, [item])

    assert response.status_code == 200
    issue = only_issue(response)
    assert issue["index"] == 0
    assert issue["severity"] == "error"
    assert "ISO 4217" in issue["message"]
    assert not Metric.objects.filter(tenant=tenant).exists()


def test_admin_metric_unknown_unit_type_is_an_issue(api_client, tenant):
    response = api_client.post(URL, [{"name": "X", "key": "x", "unitType": "percent"}])

    assert response.status_code == 200
    assert only_issue(response)["message"].startswith("unitType:")
    assert not Metric.objects.exists()


def test_admin_metric_duplicate_key_is_an_issue(api_client, tenant, metric):
    response = api_client.post(URL, [{"name": "Other words", "key": "words"}])

    assert response.status_code == 200
    assert response.json() == {
        "created": [],
        "issues": [admin_issue("Key already in use by another metric", index=0)],
    }
    assert Metric.objects.get(tenant=tenant, key="words").name == "Words"


def test_admin_metric_duplicate_key_within_one_request_creates_only_the_first(api_client, tenant):
    response = api_client.post(
        URL,
        [
            {"name": "First", "key": "dup"},
            {"name": "Second", "key": "dup"},
            {"name": "Third", "key": "other"},
        ],
    )

    assert response.status_code == 201
    body = response.json()
    assert [m["name"] for m in body["created"]] == ["First", "Third"]
    assert body["issues"] == [admin_issue("Key already in use by another metric", index=1)]
    assert Metric.objects.get(tenant=tenant, key="dup").name == "First"


def test_admin_metric_key_may_repeat_in_another_tenant(api_client, other_tenant_client, metric):
    response = other_tenant_client.post(URL, [{"name": "Words", "key": "words"}])

    assert response.status_code == 201
    assert Metric.objects.filter(key="words").count() == 2


@pytest.mark.parametrize("key", ["a", "Z", "lessons_2024", "A-b_9", "-", "_", "x" * 100])
def test_admin_metric_keys_matching_the_pattern_are_accepted(api_client, key):
    [created] = create(api_client, {"name": "M", "key": key})

    assert created["key"] == key


@pytest.mark.parametrize(
    "key",
    [
        "has space",
        "dot.key",
        "slash/key",
        "colon:key",
        "quote'key",
        "plus+key",
        "emoji-\U0001f600",
        "accent-\u00e9",
        # \d in the reference pattern means [0-9]; Arabic-Indic and full-width digits are not.
        "arabic-\u0663",
        "fullwidth-\uff11",
    ],
)
def test_admin_metric_keys_outside_the_pattern_are_issues(api_client, tenant, key):
    response = api_client.post(URL, [{"name": "M", "key": key}])

    assert response.status_code == 200
    issue = only_issue(response)
    assert issue["index"] == 0
    assert issue["message"].startswith("key:")
    assert "^[a-zA-Z\\d-_]+$" in issue["message"]
    assert not Metric.objects.filter(tenant=tenant).exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [("name", "n" * 256), ("key", "k" * 101), ("units", "u" * 33), ("name", "")],
)
def test_admin_metric_over_long_or_empty_strings_are_issues(api_client, tenant, field, value):
    item = {"name": "M", "key": "m", field: value}

    response = api_client.post(URL, [item])

    assert response.status_code == 200
    assert only_issue(response)["message"].startswith(f"{field}:")
    assert not Metric.objects.filter(tenant=tenant).exists()


def test_admin_metric_name_of_255_characters_is_accepted(api_client):
    [created] = create(api_client, {"name": "n" * 255, "key": "long"})

    assert created["name"] == "n" * 255


@pytest.mark.parametrize("name", [123, 1.5, True, ["x"], {"a": 1}, None])
def test_admin_metric_name_must_be_a_string(api_client, tenant, name):
    # Trophy answers "Name not a string" (reference §3.11); a number must not be coerced.
    response = api_client.post(URL, [{"name": name, "key": "m"}])

    assert response.status_code == 200
    assert only_issue(response)["message"].startswith("name:")
    assert not Metric.objects.filter(tenant=tenant).exists()


def test_admin_metric_key_is_not_silently_rewritten(api_client, tenant):
    # A key with surrounding spaces must be rejected rather than stored trimmed: clients would
    # then send events for a key that does not match what they configured.
    response = api_client.post(URL, [{"name": "M", "key": " padded "}])

    assert response.status_code == 200
    assert only_issue(response)["message"].startswith("key:")
    assert not Metric.objects.filter(tenant=tenant).exists()


def test_admin_metric_created_is_usable_by_events_at_once(api_client):
    assert api_client.post("/v1/metrics/steps/event", event_body("u1", 3)).status_code == 404

    create(api_client, {"name": "Steps", "key": "steps"})

    response = api_client.post("/v1/metrics/steps/event", event_body("u1", 3))
    assert response.status_code == 201
    assert response.json()["total"] == 3


# --- list and get ----------------------------------------------------------------------------


def test_admin_metric_list_renders_every_field(api_client, tenant):
    metric = MetricFactory(
        tenant=tenant, key="revenue", name="Revenue", unit_type="currency", units="EUR"
    )

    response = api_client.get(URL)

    assert response.status_code == 200
    assert response.json() == [
        {
            "id": str(metric.public_id),
            "name": "Revenue",
            "key": "revenue",
            "unitType": "currency",
            "units": "EUR",
        }
    ]


def test_admin_metric_get_by_id(api_client, metric):
    response = api_client.get(f"{URL}/{metric.public_id}")

    assert response.status_code == 200
    assert response.json() == {
        "id": str(metric.public_id),
        "name": "Words",
        "key": "words",
        "unitType": "number",
        "units": "",
    }


def test_admin_metric_get_unknown_is_404(api_client, metric):
    response = api_client.get(f"{URL}/{uuid.uuid4()}")

    assert response.status_code == 404
    assert response.json() == {"error": "Metric not found by ID"}


def test_admin_metric_get_is_not_routed_as_the_batch_endpoint(api_client):
    # "metrics/events" belongs to the batch endpoint, which has no GET.
    response = api_client.get(f"{URL}/events")

    assert response.status_code == 405
    assert set(response.json()) == {"error"}


# --- update ----------------------------------------------------------------------------------


def test_admin_metric_update_changes_only_supplied_fields(api_client, tenant):
    metric = MetricFactory(
        tenant=tenant, key="revenue", name="Revenue", unit_type="currency", units="USD"
    )

    response = api_client.patch(URL, [{"id": str(metric.public_id), "name": "Sales"}])

    assert response.status_code == 200
    assert response.json() == {
        "updated": [
            {
                "id": str(metric.public_id),
                "name": "Sales",
                "key": "revenue",
                "unitType": "currency",
                "units": "USD",
            }
        ],
        "issues": [],
    }
    metric.refresh_from_db()
    assert (metric.name, metric.key, metric.unit_type, metric.units) == (
        "Sales",
        "revenue",
        "currency",
        "USD",
    )


def test_admin_metric_update_units_alone(api_client, metric):
    response = api_client.patch(URL, [{"id": str(metric.public_id), "units": "words"}])

    assert response.json()["updated"][0]["units"] == "words"
    metric.refresh_from_db()
    assert (metric.name, metric.units) == ("Words", "words")


def test_admin_metric_update_with_only_an_id_changes_nothing(api_client, metric):
    response = api_client.patch(URL, [{"id": str(metric.public_id)}])

    assert response.status_code == 200
    assert response.json()["updated"][0]["name"] == "Words"
    metric.refresh_from_db()
    assert metric.name == "Words"


def test_admin_metric_key_is_immutable(api_client, metric):
    response = api_client.patch(URL, [{"id": str(metric.public_id), "key": "renamed"}])

    assert response.status_code == 200
    assert response.json() == {
        "updated": [],
        "issues": [admin_issue("key: unknown field", id=str(metric.public_id))],
    }
    metric.refresh_from_db()
    assert metric.key == "words"


def test_the_update_service_refuses_a_new_key(tenant, metric):
    # The declaration can carry it (a create needs it); an update that would change it is
    # refused, not silently ignored.
    with pytest.raises(ValidationError) as refused:
        metric_update(tenant, metric, MetricSettings(name="Renamed", key="renamed"))

    assert (refused.value.fields, refused.value.code) == (("key",), "frozen")
    metric.refresh_from_db()
    assert (metric.key, metric.name) == ("words", "Words")


def test_the_update_service_takes_the_stored_key_as_no_change(tenant, metric):
    metric_update(tenant, metric, MetricSettings(name="Renamed", key="words"))

    metric.refresh_from_db()
    assert (metric.key, metric.name) == ("words", "Renamed")


def test_admin_metric_failing_update_leaves_the_metric_untouched(api_client, metric):
    # The name is valid, the unit switch is not: nothing of the item may be written.
    item = {"id": str(metric.public_id), "name": "Money", "unitType": "currency"}

    response = api_client.patch(URL, [item])

    assert response.status_code == 200
    assert response.json()["updated"] == []
    assert "ISO 4217" in only_issue(response)["message"]
    metric.refresh_from_db()
    assert (metric.name, metric.unit_type, metric.units) == ("Words", "number", "")


def test_admin_metric_update_keeps_earlier_items_when_a_later_one_fails(api_client, tenant):
    first = MetricFactory(tenant=tenant, key="a", name="A")
    second = MetricFactory(tenant=tenant, key="b", name="B")

    response = api_client.patch(
        URL,
        [
            {"id": str(first.public_id), "name": "A2"},
            {"id": str(second.public_id), "name": "B2", "unitType": "currency"},
        ],
    )

    assert [m["name"] for m in response.json()["updated"]] == ["A2"]
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.name, second.name) == ("A2", "B")


@pytest.mark.parametrize(
    ("field", "value"),
    [("name", "n" * 256), ("units", "u" * 33), ("name", ""), ("unitType", "bogus")],
)
def test_admin_metric_invalid_update_values_are_issues(api_client, metric, field, value):
    response = api_client.patch(URL, [{"id": str(metric.public_id), field: value}])

    assert response.status_code == 200
    issue = only_issue(response)
    assert issue == admin_issue(issue["message"], id=str(metric.public_id))
    assert issue["message"].startswith(f"{field}:")
    metric.refresh_from_db()
    assert (metric.name, metric.units, metric.unit_type) == ("Words", "", "number")


# --- delete ----------------------------------------------------------------------------------


def test_admin_metric_delete_removes_it_with_its_events_and_totals(api_client, tenant, metric):
    assert api_client.post("/v1/metrics/words/event", event_body("u1", 5)).status_code == 201
    # u1 has events: the delete is confirmed with the key (tests/metrics/test_guard_rails.py).
    refused = api_client.delete(f"{URL}?ids={metric.public_id}").json()
    assert refused["deleted"] == []
    assert MetricEvent.objects.exists()

    response = api_client.delete(f"{URL}?ids={metric.public_id}&confirm=words")

    assert response.status_code == 200
    assert response.json() == {"deleted": [{"id": str(metric.public_id)}], "issues": []}
    assert not Metric.objects.filter(tenant=tenant).exists()
    assert not MetricEvent.objects.exists()
    assert not MetricTotal.objects.exists()
    # Events for the deleted key are refused at once, not after a cache expires.
    assert api_client.post("/v1/metrics/words/event", event_body("u1", 5)).status_code == 404


# --- tenant isolation ------------------------------------------------------------------------


@pytest.fixture
def foreign_metric(other_tenant):
    metric = MetricFactory(tenant=other_tenant, key="foreign", name="Foreign")
    bump(other_tenant)
    return metric


def test_admin_metric_of_another_tenant_is_not_listed(api_client, metric, foreign_metric):
    assert [m["key"] for m in api_client.get(URL).json()] == ["words"]


def test_admin_metric_of_another_tenant_is_404_by_id(api_client, foreign_metric):
    response = api_client.get(f"{URL}/{foreign_metric.public_id}")

    assert response.status_code == 404
    assert response.json() == {"error": "Metric not found by ID"}


def test_admin_metric_of_another_tenant_cannot_be_updated(api_client, foreign_metric):
    response = api_client.patch(URL, [{"id": str(foreign_metric.public_id), "name": "Hijacked"}])

    assert response.status_code == 200
    assert response.json() == {
        "updated": [],
        "issues": [admin_issue("Metric not found by ID", id=str(foreign_metric.public_id))],
    }
    foreign_metric.refresh_from_db()
    assert foreign_metric.name == "Foreign"


def test_admin_metric_of_another_tenant_cannot_be_deleted(api_client, foreign_metric):
    response = api_client.delete(f"{URL}?ids={foreign_metric.public_id}")

    assert response.json() == {
        "deleted": [],
        "issues": [admin_issue("Metric not found by ID", id=str(foreign_metric.public_id))],
    }
    assert Metric.objects.filter(pk=foreign_metric.pk).exists()


def test_admin_metric_created_with_a_tenant_id_lands_in_that_tenant(
    api_client, other_tenant_client, tenant, other_tenant
):
    [created] = create(other_tenant_client, {"name": "Scoped", "key": "scoped"})

    assert Metric.objects.get(public_id=created["id"]).tenant == other_tenant
    assert api_client.get(URL).json() == []
    assert api_client.get(f"{URL}/{created['id']}").status_code == 404
    assert other_tenant_client.get(URL).json() == [created]
