"""A user id in a URL path obeys the rule of a user id in a body (1 to 255 characters, no
control characters), on every route of the application API that takes one: `PUT
/v1/users/x%0Ay` used to create the user "x\\ny", whose id then reached log lines and exports
unescaped."""

import pytest

from apps.users.models import EndUser
from tests.openapi_check import served_document

ROUTES = sorted(
    (method.upper(), template)
    for template, operations in served_document("/v1/openapi").paths.items()
    if "{user_id}" in template
    for method in operations
    if method in {"get", "put", "post", "patch", "delete"}
)


def _url(template: str, user_id: str) -> str:
    path = template.replace("{user_id}", user_id).replace("{key}", "words")
    return "/v1" + path


def test_every_route_with_a_user_id_in_its_path_is_covered():
    assert ("PUT", "/users/{user_id}") in ROUTES
    assert len({template for _, template in ROUTES}) >= 10


@pytest.mark.parametrize(("method", "template"), ROUTES)
@pytest.mark.parametrize("user_id", ["x%0Ay", "x%0Dy", "x%09y", "x%7Fy", "x%C2%85y", "x%E2%80%A8y"])
def test_a_user_id_with_a_control_character_is_422(api_client, metric, method, template, user_id):
    response = api_client.generic(
        method, _url(template, user_id), "{}", content_type="application/json"
    )

    assert response.status_code == 422, response.content
    assert response.json() == {"error": "id must not contain control characters"}
    assert not EndUser.objects.exists()


@pytest.mark.parametrize(("method", "template"), ROUTES)
def test_a_user_id_longer_than_255_characters_is_422(api_client, metric, method, template):
    response = api_client.generic(
        method, _url(template, "u" * 256), "{}", content_type="application/json"
    )

    assert response.status_code == 422, response.content
    assert response.json() == {"error": "id must be at most 255 characters"}


def test_a_user_id_of_255_characters_with_spaces_and_unicode_is_accepted(api_client):
    user_id = "é " + "u" * 253
    response = api_client.put(f"/v1/users/{user_id}", {}, format="json")

    assert response.status_code == 200, response.content
    assert EndUser.objects.get().external_id == user_id


def test_user_ids_in_bodies_refuse_control_characters_too(api_client, metric):
    event = api_client.post(
        f"/v1/metrics/{metric.key}/event", {"user": {"id": "x\ny"}, "value": 1}, format="json"
    )
    assert event.status_code == 422, event.content
    keys = api_client.post("/admin/v1/application-api-keys", [{"userId": "x\ny"}], format="json")
    assert [i["message"] for i in keys.json()["issues"]] == [
        "userId: must not contain control characters"
    ]
    assert not EndUser.objects.exists()
