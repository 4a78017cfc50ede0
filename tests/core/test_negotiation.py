"""The JSON negotiation's shortcut picks what DRF's own negotiation picks, for every Accept
header and format parameter, and refuses what it refuses."""

import pytest
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from apps.core.api.negotiation import JSONNegotiation
from apps.core.api.renderers import FastJSONRenderer
from tests.openapi_check import undocumented

ACCEPTS = [
    None,
    "",
    "*/*",
    "application/json",
    "application/json; indent=2",
    "application/*",
    "text/html",
    "*/*;q=0",
    "application/json;q=0",
]


def _selected(negotiation: type[DefaultContentNegotiation], accept: str | None, query: str):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().get("/v1/x" + query, **headers))
    try:
        renderer, media_type = negotiation().select_renderer(request, [FastJSONRenderer()])
    except Exception as exc:
        return type(exc).__name__
    return type(renderer).__name__, media_type


@pytest.mark.parametrize("query", ["", "?format=json", "?format=xml", "?format="])
@pytest.mark.parametrize("accept", ACCEPTS)
def test_the_shortcut_selects_what_drf_selects(accept, query):
    assert _selected(JSONNegotiation, accept, query) == _selected(
        DefaultContentNegotiation, accept, query
    )


def test_an_api_read_without_accept_is_json_and_html_only_is_406(api_client):
    response = api_client.get("/v1/leaderboards")
    assert (response.status_code, response["Content-Type"]) == (200, "application/json")
    # DRF's 406, undocumented as before this shortcut: the documents describe JSON answers.
    with undocumented("an Accept header that refuses JSON"):
        response = api_client.get("/v1/leaderboards", HTTP_ACCEPT="text/html")
    assert response.status_code == 406
    assert response["Content-Type"] == "application/json"
