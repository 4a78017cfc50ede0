"""The check of every API response against the served OpenAPI documents (tests/openapi_check.py):
what it refuses, and that the test clients and the live server really go through it."""

import json
from typing import Any

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.http import HttpResponse
from django.test import Client as DjangoClient
from django.test import RequestFactory
from rest_framework.test import APIClient

from tests import openapi_check
from tests.openapi_check import ResponseNotDocumented, check_response, undocumented

pytestmark = pytest.mark.django_db

USER = "/v1/users/ada"


@pytest.fixture
def user_body(api_client: Any) -> dict[str, Any]:
    """A real GET /v1/users/{user_id} body, which the hook has just accepted."""
    api_client.put(USER, {"name": "Ada", "tz": "Europe/Paris"})
    response = api_client.get(USER)
    assert response.status_code == 200
    return dict(response.json())


def check(body: Any, status: int = 200, method: str = "GET", path: str = USER) -> None:
    response = HttpResponse(json.dumps(body), status=status, content_type="application/json")
    check_response(method, path, response)


def refused(body: Any, **kw: Any) -> str:
    with pytest.raises(ResponseNotDocumented) as raised:
        check(body, **kw)
    return str(raised.value)


def test_a_documented_body_passes(user_body):
    check(user_body)
    check({**user_body, "email": None, "signUpDate": None})


def test_an_undocumented_field_fails(user_body):
    message = refused({**user_body, "nickname": "ada"})
    assert "users_get (GET /users/{user_id}, /v1/openapi): 200" in message
    assert "'nickname' was unexpected" in message


def test_a_wrong_type_fails_and_names_the_path_and_the_value(user_body):
    message = refused({**user_body, "attributes": {"plan": 3}})
    assert "at $.attributes.plan: 3 is not of type 'string'" in message
    assert "value: 3" in message


def test_null_fails_where_the_document_does_not_say_nullable(user_body):
    assert "at $.created: None is not of type 'string'" in refused({**user_body, "created": None})


def test_a_missing_required_field_fails(user_body):
    del user_body["tz"]
    assert "'tz' is a required property" in refused(user_body)


@pytest.mark.parametrize(
    ("field", "value"),
    [("created", "yesterday"), ("signUpDate", "2024-02-30"), ("signUpDate", "2024-02-03T00:00Z")],
)
def test_a_badly_formatted_value_fails(user_body, field, value):
    assert f"at $.{field}: '{value}' is not a " in refused({**user_body, field: value})


def test_an_undocumented_status_fails(user_body):
    assert "status 418 is not documented" in refused(user_body, status=418)


def test_an_undocumented_media_type_fails():
    response = HttpResponse("<p>hi</p>", status=200, content_type="text/html")
    with pytest.raises(ResponseNotDocumented, match="answered text/html"):
        check_response("GET", USER, response)


def test_an_undocumented_operation_fails(user_body):
    assert "documents /users/{user_id} only for GET, PATCH, PUT (answered 200)" in refused(
        user_body, method="DELETE"
    )
    assert "no operation of /v1/openapi matches (answered 200)" in refused({}, path="/v1/nothing")


def test_an_undocumented_method_may_only_be_refused_with_405_and_an_error_body():
    check({"error": "Method DELETE not allowed"}, status=405, method="DELETE")
    assert "'error' is a required property" in refused({}, status=405, method="DELETE")


def test_an_unrouted_path_may_only_be_refused_with_404_and_an_error_body():
    check({"error": "No route"}, status=404, path="/v1/nothing")
    assert "'detail' was unexpected" in refused(
        {"error": "No route", "detail": 1}, status=404, path="/v1/nothing"
    )


def test_a_404_from_a_route_the_document_lacks_fails(monkeypatch):
    document = openapi_check.served_document("/v1/openapi")
    others = [route for route in document.routes if route[2] != "/users/{user_id}"]
    monkeypatch.setattr(document, "routes", others)
    assert "no operation of /v1/openapi matches (answered 404)" in refused(
        {"error": "User not found"}, status=404
    )


def test_head_is_checked_as_the_get_operation_without_a_body(user_body):
    check_response("HEAD", USER, HttpResponse(b"", content_type="application/json"))
    assert "status 405 is not documented" in refused(user_body, status=405, method="HEAD")


def test_the_legacy_api_mount_is_checked_against_the_application_document(user_body):
    check(user_body, path="/api/users/ada")
    assert "'nickname' was unexpected" in refused({**user_body, "nickname": 1}, path="/api/users/a")


def test_paths_outside_the_apis_and_the_documents_themselves_are_not_checked():
    check({"anything": 1}, path="/healthz")
    check({"anything": 1}, path="/v1/openapi")


@pytest.fixture
def users_get_without_404(monkeypatch: Any) -> None:
    """The document of GET /v1/users/{user_id} without its 401 and 404."""
    document = openapi_check.served_document("/v1/openapi")
    responses = document.paths["/users/{user_id}"]["get"]["responses"]
    monkeypatch.delitem(responses, "401")
    monkeypatch.delitem(responses, "404")


@pytest.mark.usefixtures("users_get_without_404")
@pytest.mark.parametrize(
    "make_client", [lambda: APIClient(), lambda: DjangoClient()], ids=["APIClient", "Client"]
)
def test_every_test_client_goes_through_the_check(api_client, anon_client, make_client):
    for client in (api_client, anon_client, make_client()):
        with pytest.raises(ResponseNotDocumented, match=r"status 40[14] is not documented"):
            client.get("/v1/users/nobody")


@pytest.mark.usefixtures("users_get_without_404")
def test_a_request_marked_undocumented_is_not_checked(api_client):
    with undocumented("this test proves the opt-out"):
        assert api_client.get("/v1/users/nobody").status_code == 404


@pytest.mark.usefixtures("users_get_without_404")
def test_the_live_servers_handler_records_its_mismatches():
    # The live server's handler, without its request signals (which close the test's database
    # connection); a request without a key is refused before any query.
    WSGIHandler().get_response(RequestFactory().get("/v1/users/nobody"))
    recorded = list(openapi_check.live_mismatches)
    openapi_check.live_mismatches.clear()
    assert len(recorded) == 1
    assert (
        "users_get (GET /users/{user_id}, /v1/openapi): status 401 is not documented"
        in (recorded[0])
    )


# --- the translation of OpenAPI 3.0 schemas, on a document of one operation ------------------


def schema_document(schema: dict[str, Any], **components: Any) -> openapi_check.Document:
    ok = {"content": {"application/json": {"schema": schema}}}
    return openapi_check.Document(
        "/test/openapi",
        {
            "paths": {"/thing": {"get": {"operationId": "thing", "responses": {"200": ok}}}},
            "components": {"schemas": {"ErrorBody": {"type": "object"}, **components}},
        },
    )


def body_fits(document: openapi_check.Document, body: Any) -> bool:
    response = HttpResponse(json.dumps(body), content_type="application/json")
    try:
        document.check(openapi_check.Answer("GET", "/test/thing", "/thing", response))
    except ResponseNotDocumented:
        return False
    return True


def test_nullable_allows_null_and_nothing_else():
    document = schema_document(
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "nullable": True},
                "unit": {"nullable": True, "oneOf": [{"$ref": "#/components/schemas/Unit"}]},
                "choice": {"type": "string", "enum": ["a"], "nullable": True},
                "id": {"type": "string"},
            },
        },
        Unit={"type": "string", "enum": ["day"]},
    )
    assert body_fits(document, {"name": None, "unit": None, "choice": None, "id": "x"})
    assert body_fits(document, {"name": "n", "unit": "day", "choice": "a", "id": "x"})
    assert not body_fits(document, {"unit": "week"})
    assert not body_fits(document, {"choice": "b"})
    assert not body_fits(document, {"id": None})


def test_objects_are_closed_unless_the_schema_allows_more():
    closed = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert not body_fits(schema_document(closed), {"a": 1, "b": 2})
    assert not body_fits(schema_document({"$ref": "#/components/schemas/A"}, A=closed), {"b": 2})
    assert body_fits(schema_document({**closed, "additionalProperties": {}}), {"a": 1, "b": 2})
    typed_map = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert body_fits(schema_document(typed_map), {"x": 1})
    assert not body_fits(schema_document(typed_map), {"x": "1"})


def test_fields_named_like_keywords_are_fields():
    document = schema_document(
        {
            "type": "object",
            "properties": {"nullable": {"type": "boolean"}, "properties": {"type": "string"}},
            "required": ["nullable"],
        }
    )
    assert body_fits(document, {"nullable": True, "properties": "p"})
    assert not body_fits(document, {"nullable": None})


def test_integers_are_not_fractions_and_decimal_strings_are_numbers():
    document = schema_document(
        {
            "type": "object",
            "properties": {
                "count": {"type": "integer", "format": "int64"},
                "amount": {"type": "string", "format": "decimal"},
            },
        }
    )
    assert body_fits(document, {"count": 3, "amount": "-1.50"})
    assert not body_fits(document, {"count": 3.0})
    assert not body_fits(document, {"count": 2**63})
    assert not body_fits(document, {"amount": "1e3"})
    assert not body_fits(document, {"amount": 1.5})
