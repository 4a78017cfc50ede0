"""Control characters are refused in names and other display strings (issue 14, item 11);
free-text fields (descriptions, message bodies) keep their line breaks and tabs."""

from typing import Any

import pytest

BAD = ["Ada\nLovelace", "tab\there", "esc\x1b[31m", "nul\x00", "del\x7f", "c1\x85", "ls\u2028"]


@pytest.mark.parametrize("value", BAD)
def test_a_user_name_with_control_characters_is_422(api_client: Any, value: str) -> None:
    response = api_client.put("/v1/users/alice", {"name": value})
    assert response.status_code == 422
    assert response.json()["error"] == "name: must not contain control characters"


@pytest.mark.parametrize("value", BAD)
def test_configuration_names_refuse_them_in_the_admin_api(api_client: Any, value: str) -> None:
    response = api_client.post("/admin/v1/metrics", [{"key": "words", "name": value}])
    body = response.json()
    assert "must not contain control characters" in str(body), body
    assert api_client.get("/admin/v1/metrics").json() == []


def test_descriptions_are_free_text(api_client: Any) -> None:
    created = api_client.post(
        "/admin/v1/points", [{"name": "XP", "key": "xp", "description": "Line one\nLine two\tok"}]
    ).json()
    assert created["issues"] == []
    assert created["created"][0]["description"] == "Line one\nLine two\tok"
    refused = api_client.post(
        "/admin/v1/points", [{"name": "XP2", "key": "xp2", "description": "bell\x07"}]
    ).json()
    assert "must not contain control characters" in str(refused["issues"])


def test_plain_names_are_accepted(api_client: Any) -> None:
    assert api_client.put("/v1/users/alice", {"name": "Zoë O'Brien-Łukasz 李"}).status_code == 200
