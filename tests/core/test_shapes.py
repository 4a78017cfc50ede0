"""Response shapes (apps/core/api/shapes.py): what `Shape.render` writes for each way a field
says where its value comes from, which keys it leaves out, and in what order it writes them."""

from types import SimpleNamespace

import pytest
from rest_framework import serializers

from apps.core.api.shapes import OMIT, Shape, never, only_when, out


def obj(**attributes):
    return SimpleNamespace(**attributes)


# --- where values come from --------------------------------------------------------------


def test_a_field_reads_the_attribute_named_as_it_in_snake_case():
    class Thing(Shape):
        name = serializers.CharField()
        userAttributes = serializers.ListField()
        maxCount = serializers.IntegerField()

    rendered = Thing.render(obj(name="n", user_attributes=["a"], max_count=3, userAttributes=0))
    assert rendered == {"name": "n", "userAttributes": ["a"], "maxCount": 3}


def test_out_with_a_path_reads_an_attribute_of_an_attribute_or_of_the_context():
    class Ranked(Shape):
        board = out(serializers.CharField(), "board.name")
        owner = out(serializers.CharField(), "board.owner.id")
        rank = out(serializers.IntegerField(), "context.rank")
        total = out(serializers.IntegerField(), "points")

    board = obj(name="Words", owner=obj(id="ada"))
    context = obj(rank=2)
    assert Ranked.render(obj(board=board, points=7), context) == {
        "board": "Words",
        "owner": "ada",
        "rank": 2,
        "total": 7,
    }


def test_out_with_a_function_gets_the_object_and_the_context():
    seen = []

    def get(thing, context):
        seen.append((thing, context))
        return f"{thing.name}/{context}"

    class Named(Shape):
        label = out(serializers.CharField(), get)

    thing = obj(name="n")
    assert Named.render(thing, "ctx") == {"label": "n/ctx"}
    assert Named.render(thing) == {"label": "n/None"}  # the context defaults to None
    assert seen == [(thing, "ctx"), (thing, None)]


@pytest.mark.parametrize(
    "path",
    ["board name", "Board", "board..name", "board.", ".board", "1st", "board-name", "", "a.B"],
)
def test_out_refuses_a_string_that_is_not_an_attribute_path(path):
    with pytest.raises(ValueError, match="not an attribute path"):
        out(serializers.CharField(), path)


def test_a_keyword_is_declared_with_a_trailing_underscore_and_written_without_it():
    class Range(Shape):
        from_ = out(serializers.IntegerField(), "low")
        to = out(serializers.IntegerField(), "high")

    assert Range.render(obj(low=1, high=9)) == {"from": 1, "to": 9}
    assert list(Range._declared_fields) == ["from", "to"]  # what the document names


# --- keys left out -------------------------------------------------------------------------


def test_an_optional_field_whose_getter_says_omit_is_left_out_and_none_is_written():
    def reason(thing, _):
        return thing.reason if thing.disabled else OMIT

    class Endpoint(Shape):
        id = serializers.CharField()
        disabledReason = out(serializers.CharField(required=False, allow_null=True), reason)

    assert Endpoint.render(obj(id="e", disabled=False, reason="x")) == {"id": "e"}
    assert Endpoint.render(obj(id="e", disabled=True, reason=None)) == {
        "id": "e",
        "disabledReason": None,
    }
    assert Endpoint.render(obj(id="e", disabled=True, reason="gone")) == {
        "id": "e",
        "disabledReason": "gone",
    }


def test_only_when_writes_a_field_for_one_value_of_an_attribute():
    class Trigger(Shape):
        type = serializers.CharField()
        metricId = out(
            serializers.CharField(required=False),
            only_when("type", "metric", lambda t, context: f"{t.metric}{context}"),
        )
        streakLength = out(
            serializers.IntegerField(required=False),
            only_when("type", "streak", lambda t, _: t.length),
        )

    assert Trigger.render(obj(type="metric", metric="m", length=3), "!") == {
        "type": "metric",
        "metricId": "m!",
    }
    assert Trigger.render(obj(type="streak", metric="m", length=3)) == {
        "type": "streak",
        "streakLength": 3,
    }
    assert Trigger.render(obj(type="api", metric="m", length=3)) == {"type": "api"}


def test_only_when_does_not_call_the_getter_of_another_type():
    def fails(*_):
        raise AssertionError("called for another type")

    class Trigger(Shape):
        type = serializers.CharField()
        key = out(serializers.CharField(required=False), only_when("type", "api", fails))

    assert Trigger.render(obj(type="metric")) == {"type": "metric"}


def test_a_field_declared_never_is_never_written():
    class Legacy(Shape):
        id = serializers.CharField()
        oldName = out(serializers.CharField(required=False), never)

    assert Legacy.render(obj(id="x", old_name="kept out", oldName="kept out")) == {"id": "x"}
    assert "oldName" in Legacy._declared_fields  # still documented


# --- shapes rendered from a mapping ---------------------------------------------------------


class Settings(Shape):
    from_mapping = True

    id = out(serializers.CharField(), lambda _, achievement: achievement.public_id)
    name = serializers.CharField()
    userAttributes = serializers.ListField()
    label = out(serializers.CharField(), "title")
    total = out(serializers.IntegerField(), "context.total")
    metricId = serializers.CharField(required=False)
    streakLength = serializers.IntegerField(required=False)
    badge = out(
        serializers.CharField(required=False, allow_null=True),
        lambda settings, _: settings["badge"].upper() if settings["badge"] else OMIT,
    )


CONTEXT = obj(public_id="a1", total=5)


def test_from_mapping_reads_keys_named_as_the_fields_in_snake_case():
    settings = {
        "name": "First",
        "user_attributes": [{"key": "plan"}],
        "userAttributes": "not this one",
        "title": "T",
        "metric_id": "m1",
        "streak_length": 3,
        "badge": "b",
    }
    assert Settings.render(settings, CONTEXT) == {
        "id": "a1",
        "name": "First",
        "userAttributes": [{"key": "plan"}],
        "label": "T",
        "total": 5,
        "metricId": "m1",
        "streakLength": 3,
        "badge": "B",
    }


def test_from_mapping_leaves_out_an_optional_field_whose_key_is_absent():
    settings = {"name": "First", "user_attributes": [], "title": "T", "badge": None}
    assert Settings.render(settings, CONTEXT) == {
        "id": "a1",
        "name": "First",
        "userAttributes": [],
        "label": "T",
        "total": 5,
    }
    with_none = {**settings, "metric_id": None}
    assert Settings.render(with_none, CONTEXT)["metricId"] is None  # present: written


def test_from_mapping_requires_the_key_of_a_required_field():
    with pytest.raises(KeyError, match="user_attributes"):
        Settings.render({"name": "First", "title": "T", "badge": None}, CONTEXT)


def test_from_mapping_refuses_a_dotted_path():
    with pytest.raises(ValueError, match=r"a mapping is read by key, not by path: 'board\.name'"):

        class Bad(Shape):
            from_mapping = True
            board = out(serializers.CharField(), "board.name")


def test_a_shape_reads_objects_by_attribute_unless_it_says_from_mapping():
    class ByAttribute(Shape):
        userAttributes = serializers.ListField()

    with pytest.raises(AttributeError):
        ByAttribute.render({"user_attributes": []})


# --- key order ------------------------------------------------------------------------------


def test_keys_are_written_in_declaration_order_whatever_is_required():
    class Mixed(Shape):
        a = serializers.IntegerField()
        b = serializers.IntegerField(required=False)
        c = serializers.IntegerField()
        d = serializers.IntegerField(required=False)
        e = serializers.IntegerField()

    assert list(Mixed.render(obj(a=1, b=2, c=3, d=4, e=5))) == ["a", "b", "c", "d", "e"]
    assert list(Mixed.render(obj(a=1, b=OMIT, c=3, d=4, e=5))) == ["a", "c", "d", "e"]


def test_inherited_fields_come_first_and_a_subclass_keeps_its_parents_mode():
    class Base(Shape):
        id = serializers.CharField()
        zName = serializers.CharField()

    class Child(Base):
        extra = serializers.IntegerField()
        aFirst = serializers.IntegerField(required=False)

    thing = obj(id="x", z_name="z", extra=1, a_first=2)
    assert list(Child.render(thing)) == ["id", "zName", "extra", "aFirst"]
    assert Base.render(thing) == {"id": "x", "zName": "z"}  # the parent renders as before

    class Grandchild(Settings):
        extra = serializers.IntegerField()

    keys = list(
        Grandchild.render(
            {"name": "n", "user_attributes": [], "title": "t", "badge": None, "extra": 1}, CONTEXT
        )
    )
    assert keys == ["id", "name", "userAttributes", "label", "total", "extra"]
