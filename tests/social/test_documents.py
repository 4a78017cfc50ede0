"""The neighbours and friends routes are documented in the extension documents only, with the
limits the server enforces; Trophy's documents do not change."""

import json
from typing import Any

import pytest

from apps.core.api.params import MAX_NEIGHBOURS
from apps.social.domain import MAX_FRIENDS
from tests.social.support import board_of, fill, tied_places, users

pytestmark = pytest.mark.django_db

APP_PATHS = {
    "/users/{user_id}/leaderboards/{key}/neighbours",
    "/users/{user_id}/leaderboards/{key}/friends",
    "/users/{user_id}/leagues/{key}/neighbours",
    "/users/{user_id}/leagues/{key}/friends",
    "/users/{user_id}/friends",
}
ADMIN_PATHS = {"/users/{user_id}/friends", "/friends/settings"}


def document(client: Any, path: str) -> dict[str, Any]:
    return dict(json.loads(client.get(path).content))


def test_the_routes_are_in_the_extension_documents_and_not_in_trophys(anon_client):
    app = document(anon_client, "/ext/v1/openapi")
    admin = document(anon_client, "/admin/ext/v1/openapi")
    assert set(app["paths"]) >= APP_PATHS
    assert set(admin["paths"]) >= ADMIN_PATHS
    assert set(app["paths"]["/users/{user_id}/friends"]) == {"get", "post", "put", "delete"}
    assert set(admin["paths"]["/friends/settings"]) == {"get", "patch"}
    assert {"neighbours", "friends"} <= {tag["name"] for tag in app["tags"]}
    for path in ("/v1/openapi", "/admin/v1/openapi"):
        trophy = document(anon_client, path)
        assert not [p for p in trophy["paths"] if "neighbours" in p or "friends" in p]
        assert not [name for name in trophy["components"]["schemas"] if "Friend" in name]


def test_the_documented_limits_are_those_enforced(anon_client, api_client, tenant):
    app = document(anon_client, "/ext/v1/openapi")
    for path in (
        "/users/{user_id}/leaderboards/{key}/neighbours",
        "/users/{user_id}/leagues/{key}/neighbours",
    ):
        [k] = [p for p in app["paths"][path]["get"]["parameters"] if p["name"] == "k"]
        assert (k["schema"]["minimum"], k["schema"]["maximum"]) == (1, MAX_NEIGHBOURS)
        assert k["schema"]["default"] == 5
    body = app["components"]["schemas"]["FriendIdsRequest"]["properties"]["userIds"]
    assert (body["minItems"], body["maxItems"]) == (1, MAX_FRIENDS)
    assert body["items"]["maxLength"] == 255
    whole = app["components"]["schemas"]["FriendListRequest"]["properties"]["userIds"]
    assert (whole.get("minItems", 0), whole["maxItems"]) == (0, MAX_FRIENDS)
    board = board_of(tenant)
    fill(board, users(tenant, 2), tied_places(2))
    base = "/ext/v1/users/u0/leaderboards/top/neighbours"
    assert api_client.get(base, {"k": MAX_NEIGHBOURS}).status_code == 200
    assert api_client.get(base, {"k": MAX_NEIGHBOURS + 1}).status_code == 422
    assert api_client.get(base, {"k": 1}).status_code == 200
    assert api_client.get(base, {"k": 0}).status_code == 422
