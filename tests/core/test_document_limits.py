"""The documents state the limits the server enforces, so a client (or schemathesis, which
`make fuzz` runs in CI) that follows them is never refused: each declaration is checked here
against the code that enforces it."""

import datetime as dt
import json
import re
import sys
from typing import Any

import pytest
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.core.api.params import parse_attribute_filter, query_list
from apps.core.errors import ValidationError
from apps.users.domain import zone_names

pytestmark = pytest.mark.django_db


def document(client: Any, path: str = "/v1/openapi") -> dict[str, Any]:
    return json.loads(client.get(path).content)


def parameter(doc: dict[str, Any], path: str, name: str, method: str = "get") -> dict[str, Any]:
    return next(p for p in doc["paths"][path][method]["parameters"] if p["name"] == name)


def accepted_filter(raw: str) -> bool:
    try:
        parse_attribute_filter(raw)
    except ValidationError:
        return False
    return True


def one_list_item(raw: str) -> bool:
    from django.http import QueryDict

    params = QueryDict(mutable=True)
    params.setlist("ids", [raw])
    return len(query_list(params, "ids")) == 1


def pattern_of(name: str) -> str:
    from apps.core.api import params

    return str(getattr(params, name)["pattern"])


def test_the_space_class_is_what_str_strip_removes():
    from apps.core.api.params import _SPACE

    spaces = re.compile(f"[{_SPACE}]")
    assert {c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()} == {
        c for c in map(chr, range(sys.maxunicode + 1)) if spaces.fullmatch(c)
    }


class TestAttributeFilter:
    pattern = re.compile(pattern_of("ATTRIBUTE_FILTER_SCHEMA"))

    @pytest.mark.parametrize(
        ("raw", "valid"),
        [
            ("", True),
            ("  ", True),
            ("plan:pro", True),
            ("plan:pro,region:eu", True),
            (" plan : pro ", True),
            ("url:http://x", True),  # a value may contain ':'
            ("plan:", True),
            ("plan", False),
            (":pro", False),
            (" :pro", False),
            ("plan:pro,", False),
            ("plan:pro,,region:eu", False),
            ("\x1c:pro", False),  # str.strip() removes it: a blank key
        ],
    )
    def test_examples(self, raw, valid):
        assert bool(self.pattern.fullmatch(raw)) is valid
        assert accepted_filter(raw) is valid

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet=st.characters(exclude_characters="\x00"), max_size=20))
    def test_the_pattern_accepts_exactly_what_the_parser_does(self, raw):
        assert bool(self.pattern.fullmatch(raw)) is accepted_filter(raw)

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.tuples(st.text(max_size=5), st.text(max_size=5)), min_size=1, max_size=3))
    def test_pairs_as_clients_build_them(self, pairs):
        raw = ",".join(f"{k}:{v}" for k, v in pairs)
        if "\x00" not in raw:
            assert bool(self.pattern.fullmatch(raw)) is accepted_filter(raw)


class TestListItems:
    pattern = re.compile(pattern_of("LIST_ITEM_SCHEMA"))

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet=st.characters(exclude_characters="\x00"), min_size=1, max_size=12))
    def test_an_item_valid_by_the_document_is_one_id(self, raw):
        # The document is the stricter: "a," is one id to the server, but not documented.
        if self.pattern.fullmatch(raw):
            assert one_list_item(raw)

    def test_the_streaks_document_uses_it(self, anon_client):
        schema = parameter(document(anon_client), "/streaks", "userIds")["schema"]
        assert schema["items"]["pattern"] == pattern_of("LIST_ITEM_SCHEMA")
        assert (schema["minItems"], schema["maxItems"]) == (1, 100)


def test_user_attribute_filters_are_documented_with_the_pattern(anon_client):
    doc = document(anon_client)
    for path in ("/achievements", "/leaderboards/{key}", "/points/{key}/summary"):
        schema = parameter(doc, path, "userAttributes")["schema"]
        assert schema["pattern"] == pattern_of("ATTRIBUTE_FILTER_SCHEMA"), path


def test_time_zones_are_the_list_the_server_accepts(anon_client, api_client):
    doc = document(anon_client)
    prop = doc["components"]["schemas"]["UpsertedUserRequest"]["properties"]["tz"]
    enum = doc["components"]["schemas"][prop["oneOf"][0]["$ref"].rsplit("/", 1)[1]]["enum"]
    assert enum == zone_names()
    assert "Europe/Paris" in enum
    assert "Mars/Olympus_Mons" not in enum
    for tz in (enum[0], enum[len(enum) // 2], enum[-1]):
        assert api_client.put("/v1/users/u1", {"tz": tz}).status_code == 200, tz
    response = api_client.put("/v1/users/u1", {"tz": "Mars/Olympus_Mons"})
    assert response.status_code == 422
    assert response.json() == {"error": "tz: must be an IANA time zone such as Europe/Paris"}


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_an_email_valid_by_the_document_is_valid_for_django(data):
    from apps.core.openapi import _EMAIL

    email = data.draw(st.from_regex(_EMAIL, fullmatch=True).filter(lambda e: len(e) <= 254))
    try:
        validate_email(email)
    except DjangoValidationError:
        pytest.fail(f"the document allows {email!r}, Django refuses it")


def test_the_wrapped_year_goes_up_to_the_earliest_current_year(anon_client):
    import time_machine

    with time_machine.travel(dt.datetime(2027, 1, 1, 6, tzinfo=dt.UTC)):
        # 06:00 UTC on 1 January: still 31 December at UTC-12, so 2026 is the safe maximum.
        schema = parameter(document(anon_client), "/users/{user_id}/wrapped", "year")["schema"]
    assert (schema["minimum"], schema["maximum"]) == (1, 2026)


def test_admin_pages_are_documented_with_their_bounds(anon_client):
    doc = document(anon_client, "/admin/v1/openapi")
    limit = parameter(doc, "/metrics", "limit")["schema"]
    skip = parameter(doc, "/metrics", "skip")["schema"]
    assert (limit["minimum"], limit["maximum"]) == (1, 100)
    assert skip["minimum"] == 0


class TestPreferenceThresholds:
    URL = "/v1/users/u1/preferences"

    def patch(self, client: Any, threshold: Any) -> Any:
        return client.patch(
            self.URL,
            {"streak": {"metrics": [{"key": "words", "threshold": threshold}]}},
        )

    @pytest.fixture
    def customizable(self, api_client, metric):
        response = api_client.patch(
            "/admin/v1/streaks/settings",
            {
                "frequency": "daily",
                "customizationEnabled": True,
                "metrics": [{"key": "words", "threshold": 1}],
            },
        )
        assert response.status_code == 200, response.content
        assert api_client.put("/v1/users/u1", {}).status_code == 200
        return api_client

    def test_digits_past_six_places_are_rounded(self, customizable):
        response = self.patch(customizable, 0.1234567)
        assert response.status_code == 200, response.content
        [metric] = response.json()["streak"]["metrics"]
        assert metric["threshold"] == 0.123457

    @pytest.mark.parametrize(
        ("threshold", "error"),
        [
            (0, "streak.metrics.0.threshold: must be greater than 0"),
            (5e-324, "streak.metrics.0.threshold: must be greater than 0"),
            (-1, "streak.metrics.0.threshold: Ensure this value is greater than or equal to 0."),
            (
                1e300,
                "streak.metrics.0.threshold: "
                "Ensure that there are no more than 24 digits in total.",
            ),
        ],
    )
    def test_what_is_refused(self, customizable, threshold, error):
        response = self.patch(customizable, threshold)
        assert response.status_code == 422
        assert response.json() == {"error": error}

    def test_the_document_gives_the_smallest_value_kept(self, anon_client):
        schemas = document(anon_client)["components"]["schemas"]
        threshold = schemas["MetricPreferenceRequest"]["properties"]["threshold"]
        assert threshold["minimum"] == 0.000001
        assert "exclusiveMinimum" not in threshold


@pytest.mark.parametrize(
    ("path", "item"),
    [
        ("/admin/v1/email-templates", {"name": "x", "type": "recap"}),
        ("/admin/v1/push-templates", {"name": "x", "type": "recap"}),
        ("/admin/v1/achievements", {"name": "x", "trigger": "api", "key": "x"}),
        ("/admin/v1/leaderboards", {"name": "x", "key": "x", "rankBy": "streak"}),
    ],
)
def test_a_null_attribute_reference_is_an_issue_not_a_500(api_client, path, item):
    """Found by schemathesis: [null] reached the services and failed there."""
    response = api_client.post(path, [{**item, "userAttributes": [None]}])
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["created"] == []
    assert body["issues"][0]["message"] == "userAttributes.0: This field may not be null."
