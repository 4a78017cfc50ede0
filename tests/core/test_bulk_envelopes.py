"""The admin API's bulk conventions (reference §2.2, §3.11), checked on every collection that
uses apps/core/bulk.py, plus the access rules shared by every admin endpoint."""

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.choices import TenantStatus
from apps.accounts.models import Tenant
from apps.core.bulk import Issues, bulk_items, run_item
from apps.core.errors import ValidationError
from apps.metrics.models import Metric
from apps.users.models import Attribute
from tests.admin_issues import admin_issue
from tests.factories import MetricFactory, OrganizationWithKey

# Parametrized ids must be the same in every xdist worker, so not uuid4() at import time.
FIXED_UUID = "7d9e3c1a-2b4f-4e8a-9c6d-5f1e2a3b4c5d"


@dataclass(frozen=True)
class Coll:
    """One admin collection: where it lives and how to make a valid item of it."""

    path: str
    noun: str
    make: Callable[[int], dict[str, Any]]
    rows: Callable[[Tenant], Any]

    def count(self, tenant: Tenant) -> int:
        return self.rows(tenant).count()


def _active_tenants(tenant: Tenant) -> Any:
    return Tenant.objects.filter(
        environment=tenant.environment, status=TenantStatus.ACTIVE, is_default=False
    )


COLLECTIONS = [
    Coll(
        "/admin/v1/metrics",
        "Metric",
        lambda n: {"name": f"Metric {n}", "key": f"metric-{n}"},
        lambda t: Metric.objects.filter(tenant=t),
    ),
    Coll(
        "/admin/v1/attributes",
        "Attribute",
        lambda n: {"name": f"Attribute {n}", "key": f"attr-{n}", "type": "user"},
        lambda t: Attribute.objects.filter(tenant=t),
    ),
    Coll(
        "/admin/v1/tenants",
        "Tenant",
        lambda n: {"name": f"Customer {n}", "customerId": f"cust-{n}"},
        _active_tenants,
    ),
]


@pytest.fixture(params=COLLECTIONS, ids=lambda c: c.path.rsplit("/", 1)[-1])
def coll(request: pytest.FixtureRequest) -> Coll:
    return request.param


def raw(client: Any, method: str, path: str, body: str) -> Any:
    return getattr(client, method)(path, body, format=None, content_type="application/json")


def create(client: Any, coll: Coll, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    response = client.post(coll.path, items)
    assert response.status_code == 201, response.content
    assert response.json()["issues"] == []
    return response.json()["created"]


def assert_error(response: Any, status: int) -> str:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}
    assert isinstance(body["error"], str)
    assert body["error"]
    return body["error"]


def ids_query(*ids: str) -> str:
    return urlencode([("ids", i) for i in ids])


# --- list ------------------------------------------------------------------------------------


def test_admin_list_defaults_to_ten_items_from_the_start(api_client, tenant, coll):
    created = create(api_client, coll, [coll.make(n) for n in range(12)])

    response = api_client.get(coll.path)

    assert response.status_code == 200
    assert isinstance(response.json(), list)
    assert response.json() == created[:10]


def test_admin_list_pages_with_limit_and_skip_in_creation_order(api_client, tenant, coll):
    created = create(api_client, coll, [coll.make(n) for n in range(12)])

    page = api_client.get(f"{coll.path}?limit=5&skip=10")
    everything = api_client.get(f"{coll.path}?limit=100")
    past_the_end = api_client.get(f"{coll.path}?skip=50")

    assert page.json() == created[10:]
    assert everything.json() == created
    assert past_the_end.status_code == 200
    assert past_the_end.json() == []


@pytest.mark.parametrize(
    "query",
    ["limit=0", "limit=101", "limit=-1", "limit=ten", "limit=1.5", "skip=-1", "skip=abc"],
)
def test_admin_list_rejects_limit_or_skip_out_of_bounds(api_client, coll, query):
    message = assert_error(api_client.get(f"{coll.path}?{query}"), 422)
    assert query.split("=")[0] in message


def test_admin_list_accepts_the_bounds_themselves(api_client, coll):
    assert api_client.get(f"{coll.path}?limit=1&skip=0").status_code == 200
    assert api_client.get(f"{coll.path}?limit=100").status_code == 200


def test_admin_list_query_count_does_not_grow_with_the_page(api_client, coll):
    create(api_client, coll, [coll.make(n) for n in range(2)])
    with CaptureQueriesContext(connection) as small:
        assert len(api_client.get(coll.path).json()) == 2
    create(api_client, coll, [coll.make(n) for n in range(2, 30)])
    with CaptureQueriesContext(connection) as large:
        assert len(api_client.get(f"{coll.path}?limit=30").json()) == 30

    assert len(large.captured_queries) == len(small.captured_queries)


# --- create ----------------------------------------------------------------------------------


def test_admin_create_answers_201_with_created_items_and_writes_them(api_client, tenant, coll):
    response = api_client.post(coll.path, [coll.make(1), coll.make(2)])

    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"created", "issues"}
    assert body["issues"] == []
    assert len(body["created"]) == 2
    for item in body["created"]:
        assert uuid.UUID(item["id"])
    assert coll.count(tenant) == 2


def test_admin_create_answers_200_when_no_item_was_created(api_client, tenant, coll):
    response = api_client.post(coll.path, [{"name": "No key"}, {}])

    assert response.status_code == 200
    body = response.json()
    assert body["created"] == []
    assert [issue["index"] for issue in body["issues"]] == [0, 1]
    assert all(issue["severity"] == "error" for issue in body["issues"])
    assert coll.count(tenant) == 0


@pytest.mark.parametrize(
    "body",
    ['{"name": "x"}', '"text"', "42", "null", "[]"],
    ids=["object", "string", "number", "null", "empty"],
)
def test_admin_create_rejects_a_body_that_is_not_a_non_empty_array(api_client, tenant, coll, body):
    message = assert_error(raw(api_client, "post", coll.path, body), 422)
    assert "body" in message
    assert coll.count(tenant) == 0


def test_admin_create_rejects_more_than_100_items_and_writes_nothing(api_client, tenant, coll):
    response = api_client.post(coll.path, [coll.make(n) for n in range(101)])

    message = assert_error(response, 422)
    assert "100" in message
    assert coll.count(tenant) == 0


def test_admin_create_accepts_exactly_100_items(api_client, tenant, coll):
    response = api_client.post(coll.path, [coll.make(n) for n in range(100)])

    assert response.status_code == 201
    assert len(response.json()["created"]) == 100
    assert coll.count(tenant) == 100


@pytest.mark.parametrize("method", ["post", "patch"])
def test_admin_malformed_json_is_400(api_client, tenant, coll, method):
    message = assert_error(raw(api_client, method, coll.path, '[{"name": "x",'), 400)
    assert "JSON" in message
    assert coll.count(tenant) == 0


def test_admin_create_reports_a_non_object_item_at_its_index(api_client, tenant, coll):
    response = api_client.post(coll.path, [1, coll.make(1), "x", None])

    assert response.status_code == 201
    body = response.json()
    assert len(body["created"]) == 1
    assert body["issues"] == [
        admin_issue("Item must be a JSON object", index=0),
        admin_issue("Item must be a JSON object", index=2),
        admin_issue("Item must be a JSON object", index=3),
    ]
    assert coll.count(tenant) == 1


def test_admin_create_rejects_unknown_fields_per_item(api_client, tenant, coll):
    response = api_client.post(coll.path, [{**coll.make(1), "colour": "blue"}, coll.make(2)])

    assert response.status_code == 201
    body = response.json()
    assert len(body["created"]) == 1
    assert body["issues"] == [
        admin_issue("colour: unknown field", index=0),
    ]
    assert coll.count(tenant) == 1


def test_admin_create_issue_names_the_missing_field(api_client, coll):
    item = coll.make(1)
    item.pop("name")

    response = api_client.post(coll.path, [item])

    assert response.status_code == 200
    [issue] = response.json()["issues"]
    assert issue["index"] == 0
    assert issue["message"].startswith("name:")


def test_admin_create_keeps_earlier_items_when_a_later_one_fails(api_client, tenant, coll):
    first, third = coll.make(1), coll.make(3)
    invalid = {**coll.make(2), "name": ""}
    duplicate = coll.make(1)

    response = api_client.post(coll.path, [first, invalid, duplicate, third])

    assert response.status_code == 201
    body = response.json()
    assert [item["name"] for item in body["created"]] == [first["name"], third["name"]]
    assert [issue["index"] for issue in body["issues"]] == [1, 2]
    assert body["issues"][0]["message"].startswith("name:")
    assert coll.count(tenant) == 2


# --- update ----------------------------------------------------------------------------------


def test_admin_update_answers_200_with_updated_items(api_client, tenant, coll):
    [first, second] = create(api_client, coll, [coll.make(1), coll.make(2)])

    response = api_client.patch(coll.path, [{"id": first["id"], "name": "Renamed"}])

    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"updated", "issues"}
    assert body["issues"] == []
    [updated] = body["updated"]
    assert updated["name"] == "Renamed"
    assert _without(updated, "name", "updated") == _without(first, "name", "updated")
    assert api_client.get(f"{coll.path}/{first['id']}").json() == updated
    assert api_client.get(f"{coll.path}/{second['id']}").json() == second


def _without(item: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in keys}


def test_admin_update_reports_invalid_and_unknown_ids(api_client, tenant, coll):
    [existing] = create(api_client, coll, [coll.make(1)])
    unknown = str(uuid.uuid4())

    response = api_client.patch(
        coll.path,
        [
            {"id": "not-a-uuid", "name": "x"},
            {"id": unknown, "name": "x"},
            {"name": "no id"},
            {"id": 12, "name": "x"},
            "not an object",
            {"id": existing["id"], "name": "Renamed"},
        ],
    )

    assert response.status_code == 200
    body = response.json()
    assert [item["name"] for item in body["updated"]] == ["Renamed"]
    assert body["issues"] == [
        admin_issue("id must be a valid UUID", index=0),
        admin_issue(f"{coll.noun} not found by ID", id=unknown),
        admin_issue("id must be a valid UUID", index=2),
        admin_issue("id must be a valid UUID", index=3),
        admin_issue("id must be a valid UUID", index=4),
    ]


@pytest.mark.parametrize("body", ['{"id": "x"}', "[]", "null"], ids=["object", "empty", "null"])
def test_admin_update_rejects_a_body_that_is_not_a_non_empty_array(api_client, coll, body):
    assert_error(raw(api_client, "patch", coll.path, body), 422)


def test_admin_update_rejects_more_than_100_items(api_client, coll):
    items = [{"id": str(uuid.uuid4()), "name": "x"} for _ in range(101)]
    assert_error(api_client.patch(coll.path, items), 422)


def test_admin_update_rejects_unknown_fields_and_changes_nothing(api_client, tenant, coll):
    [existing] = create(api_client, coll, [coll.make(1)])

    response = api_client.patch(coll.path, [{"id": existing["id"], "name": "New", "bogus": 1}])

    assert response.status_code == 200
    assert response.json() == {
        "updated": [],
        "issues": [admin_issue("bogus: unknown field", id=existing["id"])],
    }
    assert api_client.get(f"{coll.path}/{existing['id']}").json()["name"] == existing["name"]


# --- delete ----------------------------------------------------------------------------------


def test_admin_delete_accepts_repeated_and_comma_separated_ids(api_client, tenant, coll):
    created = create(api_client, coll, [coll.make(n) for n in range(5)])
    ids = [item["id"] for item in created]

    query = urlencode([("ids", ids[0]), ("ids", f"{ids[1]},{ids[2]}"), ("ids", ids[3])])
    response = api_client.delete(f"{coll.path}?{query}")

    assert response.status_code == 200
    assert response.json() == {"deleted": [{"id": i} for i in ids[:4]], "issues": []}
    assert coll.count(tenant) == 1
    assert [item["id"] for item in api_client.get(coll.path).json()] == [ids[4]]


def test_admin_delete_with_only_comma_separated_ids(api_client, tenant, coll):
    created = create(api_client, coll, [coll.make(n) for n in range(3)])
    ids = [item["id"] for item in created]

    response = api_client.delete(f"{coll.path}?ids={','.join(ids)}")

    assert response.status_code == 200
    assert response.json()["deleted"] == [{"id": i} for i in ids]
    assert coll.count(tenant) == 0


def test_admin_delete_reports_invalid_and_unknown_ids_and_deletes_the_rest(
    api_client, tenant, coll
):
    [existing] = create(api_client, coll, [coll.make(1)])
    unknown = str(uuid.uuid4())

    response = api_client.delete(f"{coll.path}?{ids_query('nope', unknown, existing['id'])}")

    assert response.status_code == 200
    assert response.json() == {
        "deleted": [{"id": existing["id"]}],
        "issues": [
            admin_issue("id must be a valid UUID", id="nope"),
            admin_issue(f"{coll.noun} not found by ID", id=unknown),
        ],
    }
    assert coll.count(tenant) == 0


def test_admin_delete_of_an_already_deleted_id_is_an_issue(api_client, coll):
    [existing] = create(api_client, coll, [coll.make(1)])
    api_client.delete(f"{coll.path}?ids={existing['id']}")

    response = api_client.delete(f"{coll.path}?ids={existing['id']}")

    assert response.status_code == 200
    assert response.json() == {
        "deleted": [],
        "issues": [admin_issue(f"{coll.noun} not found by ID", id=existing["id"])],
    }


def test_admin_delete_names_each_id_once(api_client, tenant, coll):
    [existing] = create(api_client, coll, [coll.make(1)])

    response = api_client.delete(f"{coll.path}?{ids_query(existing['id'], existing['id'])}")

    assert response.json() == {"deleted": [{"id": existing["id"]}], "issues": []}


@pytest.mark.parametrize("query", ["", "?ids=", "?ids=,,", "?other=1"])
def test_admin_delete_without_ids_is_422(api_client, coll, query):
    message = assert_error(api_client.delete(f"{coll.path}{query}"), 422)
    assert "ids" in message


def test_admin_delete_of_more_than_100_ids_is_422_and_deletes_nothing(api_client, tenant, coll):
    [existing] = create(api_client, coll, [coll.make(1)])
    ids = [existing["id"], *(str(uuid.uuid4()) for _ in range(100))]

    assert_error(api_client.delete(f"{coll.path}?{ids_query(*ids)}"), 422)
    assert coll.count(tenant) == 1


# --- get by id -------------------------------------------------------------------------------


def test_admin_get_by_id_returns_the_listed_object(api_client, coll):
    [existing] = create(api_client, coll, [coll.make(1)])

    response = api_client.get(f"{coll.path}/{existing['id']}")

    assert response.status_code == 200
    assert response.json() == existing


@pytest.mark.parametrize("object_id", [FIXED_UUID, "not-a-uuid", "x" * 2000])
def test_admin_get_by_unknown_or_invalid_id_is_404(api_client, coll, object_id):
    message = assert_error(api_client.get(f"{coll.path}/{object_id}"), 404)
    assert message == f"{coll.noun} not found by ID"


def test_admin_get_accepts_an_uppercase_uuid(api_client, coll):
    [existing] = create(api_client, coll, [coll.make(1)])

    response = api_client.get(f"{coll.path}/{existing['id'].upper()}")

    assert response.status_code == 200
    assert response.json()["id"] == existing["id"]


@pytest.mark.parametrize("method", ["put", "post"])
def test_admin_item_routes_allow_only_get(api_client, coll, method):
    [existing] = create(api_client, coll, [coll.make(1)])

    response = getattr(api_client, method)(f"{coll.path}/{existing['id']}", {"name": "x"})

    assert_error(response, 405)


def test_admin_put_on_a_collection_is_405(api_client, coll):
    assert_error(api_client.put(coll.path, [coll.make(1)]), 405)


def test_admin_non_json_content_type_is_rejected_with_an_error_body(api_client, tenant, coll):
    response = api_client.post(coll.path, "name=x", format=None, content_type="text/plain")

    assert response.status_code == 415
    assert set(response.json()) == {"error"}
    assert coll.count(tenant) == 0


# --- access: every admin endpoint ------------------------------------------------------------

ADMIN_ENDPOINTS = [
    ("get", "/admin/v1/metrics"),
    ("post", "/admin/v1/metrics"),
    ("patch", "/admin/v1/metrics"),
    ("delete", f"/admin/v1/metrics?ids={FIXED_UUID}"),
    ("get", f"/admin/v1/metrics/{FIXED_UUID}"),
    ("post", "/admin/v1/metrics/events"),
    ("get", "/admin/v1/attributes"),
    ("post", "/admin/v1/attributes"),
    ("get", "/admin/v1/tenants"),
    ("post", "/admin/v1/tenants"),
    ("get", f"/admin/v1/tenants/{FIXED_UUID}"),
    ("post", "/admin/v1/application-api-keys"),
    ("delete", f"/admin/v1/application-api-keys?ids={FIXED_UUID}"),
    ("get", "/admin/v1/environments"),
    ("get", "/admin/v1/settings"),
    ("patch", "/admin/v1/settings"),
]


def _call(client: Any, method: str, path: str) -> Any:
    if method in ("post", "patch"):
        return getattr(client, method)(path, [{"name": "x"}])
    return getattr(client, method)(path)


@pytest.mark.parametrize(("method", "path"), ADMIN_ENDPOINTS)
def test_admin_endpoint_without_a_key_is_401(anon_client, org, method, path):
    message = assert_error(_call(anon_client, method, path), 401)
    assert "API key" in message


@pytest.mark.parametrize(("method", "path"), ADMIN_ENDPOINTS)
@pytest.mark.parametrize(
    "key",
    ["wrong", "abcdefgh.wrongsecret", ".", "", "   "],
    ids=["no-dot", "wrong-secret", "dot", "empty", "blank"],
)
def test_admin_endpoint_with_a_wrong_key_is_401(anon_client, org, method, path, key):
    anon_client.credentials(HTTP_X_API_KEY=key)
    assert_error(_call(anon_client, method, path), 401)


def test_admin_endpoint_with_a_right_prefix_but_wrong_secret_is_401(anon_client, org):
    prefix = org.admin_key.split(".", 1)[0]
    anon_client.credentials(HTTP_X_API_KEY=f"{prefix}.not-the-secret")

    assert assert_error(anon_client.get("/admin/v1/metrics"), 401) == "Invalid API key"


def test_admin_endpoint_with_a_key_of_another_organization_sees_only_its_own_data(
    api_client, tenant
):
    MetricFactory(tenant=tenant, key="mine")
    stranger = OrganizationWithKey("Stranger")
    api_client.credentials(HTTP_X_API_KEY=stranger.admin_key)

    assert api_client.get("/admin/v1/metrics").json() == []


@pytest.mark.parametrize(("method", "path"), ADMIN_ENDPOINTS)
def test_admin_endpoint_with_an_unknown_tenant_id_is_404(anon_client, org, method, path):
    anon_client.credentials(HTTP_X_API_KEY=org.admin_key, HTTP_TENANT_ID="no-such-customer")

    message = assert_error(_call(anon_client, method, path), 404)
    assert message == 'Tenant not found: "no-such-customer"'


@pytest.mark.parametrize(("method", "path"), ADMIN_ENDPOINTS)
def test_admin_endpoint_with_an_application_key_is_403(anon_client, org, method, path):
    anon_client.credentials(HTTP_X_API_KEY=org.application_key("u1"))
    assert_error(_call(anon_client, method, path), 403)


def test_admin_unknown_route_answers_json_404(api_client):
    message = assert_error(api_client.get("/admin/v1/no-such-collection"), 404)
    assert "/admin/v1/no-such-collection" in message


# --- the machinery itself --------------------------------------------------------------------


@pytest.mark.parametrize("data", [None, {}, "x", 3, {"items": []}])
def test_bulk_items_requires_a_json_array(data):
    with pytest.raises(ValidationError, match="must be a JSON array"):
        bulk_items(data)


def test_bulk_items_enforces_its_bounds():
    with pytest.raises(ValidationError, match="between 1 and 100"):
        bulk_items([])
    with pytest.raises(ValidationError, match="between 1 and 3"):
        bulk_items([1, 2, 3, 4], maximum=3)
    assert bulk_items([1, 2, 3], maximum=3) == [1, 2, 3]


def test_issues_render_as_admin_issues():
    issues = Issues()
    issues.error("Broken", index=0)
    issues.warning("Careful", userId="u1")

    # Both spellings of severity and message: the Python SDK reads the first pair, the Node
    # SDK 1.0.42 requires the second (level, reason).
    assert issues.items == [
        {
            "index": 0,
            "severity": "error",
            "message": "Broken",
            "level": "error",
            "reason": "Broken",
        },
        {
            "userId": "u1",
            "severity": "warning",
            "message": "Careful",
            "level": "warning",
            "reason": "Careful",
        },
    ]


def test_run_item_rolls_back_only_the_failing_item(tenant):
    issues = Issues()

    def good() -> str:
        return MetricFactory(tenant=tenant, key="kept").key

    def half_written_then_fails() -> None:
        MetricFactory(tenant=tenant, key="rolled-back")
        raise ValidationError("second step failed")

    assert run_item(issues, {"index": 0}, good) == "kept"
    assert run_item(issues, {"index": 1}, half_written_then_fails) is None

    assert list(Metric.objects.values_list("key", flat=True)) == ["kept"]
    assert issues.items == [admin_issue("second step failed", index=1)]


def test_run_item_turns_an_integrity_error_into_an_issue(tenant):
    MetricFactory(tenant=tenant, key="taken")
    issues = Issues()

    result = run_item(issues, {"index": 4}, lambda: MetricFactory(tenant=tenant, key="taken"))

    assert result is None
    assert issues.items[0]["index"] == 4
    assert issues.items[0]["severity"] == "error"
    assert Metric.objects.filter(key="taken").count() == 1
