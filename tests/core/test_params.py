import pytest
from django.http import QueryDict

from apps.core.api.params import parse_attribute_filter, query_ids, query_limit_skip, query_list
from apps.core.errors import ValidationError


def test_limit_and_skip_defaults_and_bounds():
    assert query_limit_skip(QueryDict("")) == (10, 0)
    assert query_limit_skip(QueryDict("limit=100&skip=5")) == (100, 5)
    for bad in ["limit=0", "limit=101", "skip=-1", "limit=abc"]:
        with pytest.raises(ValidationError):
            query_limit_skip(QueryDict(bad))


def test_lists_accept_repeated_and_comma_separated_values():
    assert query_list(QueryDict("ids=a&ids=b,c&ids=a"), "ids") == ["a", "b", "c"]
    with pytest.raises(ValidationError):
        query_ids(QueryDict(""))
    with pytest.raises(ValidationError):
        query_ids(QueryDict("ids=" + ",".join(str(i) for i in range(101))))


def test_attribute_filter():
    assert parse_attribute_filter("plan:pro,country:fr") == {"plan": "pro", "country": "fr"}
    assert parse_attribute_filter("url:http://x") == {"url": "http://x"}
    assert parse_attribute_filter(None) == {}
    for bad in ["plan", ":pro", "plan:pro,"]:
        with pytest.raises(ValidationError):
            parse_attribute_filter(bad)


def test_decimals_render_as_exact_json_numbers():
    from decimal import Decimal

    from apps.core.api.renderers import json_dumps

    body = json_dumps(
        {
            "a": Decimal("123456789012.123456"),
            "b": Decimal("5.000000"),
            "c": Decimal("-0.100000"),
            "d": Decimal("1E+3"),
        }
    )
    assert body == b'{"a":123456789012.123456,"b":5,"c":-0.1,"d":1000}'
