"""Response shapes (apps/core/api/shapes.py).

Each `Shape` documents a body and the typed function registered for it with `renders` writes
it: the end of this module holds every such function to its shape, reading the keys the
function writes from its source (the dict literal it builds, then each `body["key"] = ...`),
which must be the shape's fields in their order. The rest tests the compiled `Shape.render`
of the shapes not converted yet: what it writes for each way a field says where its value
comes from, which keys it leaves out, and in what order it writes them."""

import ast
import importlib
import inspect
import textwrap
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from django.apps import apps as django_apps
from rest_framework import serializers

from apps.core.api.shapes import OMIT, Shape, never, only_when, out, renders, shape_renders


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


# --- plain renders held to their shapes (issue 24, item 2) ----------------------------------

# Shapes still rendered by Shape.render, each converted by its own change; empty once all are.
NOT_YET_CONVERTED = {
    # apps.webhooks.serializers
    "Redelivered",
    "RotatedSecret",
    "TestSent",
    "WebhookAttemptSerializer",
    "WebhookDeliverySerializer",
    "WebhookEndpointSerializer",
}
# Shapes that only lend their fields to the shapes built on them, never rendered alone (the
# others of that kind are private, `_Range`).
BASES = {"WrappedActivityPeriod"}


def _import_interfaces() -> None:
    """Imports every module of the apps that declares shapes, so that every render is
    registered."""
    for config in django_apps.get_app_configs():
        if not config.name.startswith("apps."):
            continue
        for module in ("wire", "serializers", "admin_serializers"):
            name = f"{config.name}.{module}"
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as error:
                if error.name != name:
                    raise


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def app_shapes() -> list[type[Shape]]:
    """Every Shape declared under apps/, once each."""
    _import_interfaces()
    shapes = {s for s in _subclasses(Shape) if s.__module__.startswith("apps.")}
    return sorted(shapes, key=lambda s: (s.__module__, s.__name__))


def registered() -> list[tuple[type[Shape], Callable[..., dict[str, Any]]]]:
    _import_interfaces()
    return sorted(shape_renders().items(), key=lambda i: (i[0].__module__, i[0].__name__))


class UncheckableRender(Exception):
    """A render written in a way whose keys cannot be read from its source."""


def _resolve(node: ast.expr, scope: dict[str, Any]) -> Any:
    """The object a name or dotted name of a function's source stands for."""
    if isinstance(node, ast.Name):
        return scope[node.id]
    if isinstance(node, ast.Attribute):
        return getattr(_resolve(node.value, scope), node.attr)
    raise UncheckableRender(f"not a name: {ast.unparse(node)}")


class _Writes(ast.NodeVisitor):
    """The keys a render writes into the body it returns (the variable `name`), in source
    order: the keys of the dict it starts from (a literal, or the body of another render it
    calls), then every `name["key"] = ...`."""

    def __init__(self, name: str, scope: dict[str, Any]) -> None:
        self.name = name
        self.scope = scope
        self.keys: list[str] = []

    def _is_body(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == self.name

    def _assigned(self, target: ast.expr, value: ast.expr) -> None:
        if self._is_body(target):
            if self.keys:
                raise UncheckableRender(f"{self.name} is assigned twice")
            self.keys += value_keys(value, self.scope)
        elif isinstance(target, ast.Subscript) and self._is_body(target.value):
            key = target.slice
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise UncheckableRender(f"a key that is not a string: {ast.unparse(key)}")
            self.keys.append(key.value)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._assigned(target, node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._assigned(node.target, node.value)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        raise UncheckableRender(f"deletes: {ast.unparse(node)}")

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and self._is_body(func.value):
            raise UncheckableRender(f"changes the body by a method: {ast.unparse(node)}")
        if any(self._is_body(arg) for arg in [*node.args, *(k.value for k in node.keywords)]):
            raise UncheckableRender(f"hands the body to a function: {ast.unparse(node)}")
        self.generic_visit(node)


def value_keys(node: ast.expr, scope: dict[str, Any]) -> list[str]:
    """The keys of a body built by `node`: a dict literal of string keys (`**` another
    render's body included) or a call of another registered render."""
    if isinstance(node, ast.Dict):
        keys: list[str] = []
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                keys += value_keys(value, scope)
            elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                keys.append(key.value)
            else:
                raise UncheckableRender(f"a key that is not a string: {ast.unparse(key)}")
        return keys
    if isinstance(node, ast.Call):
        callee = _resolve(node.func, scope)
        if callee not in shape_renders().values():
            raise UncheckableRender(f"starts from a call of no render: {ast.unparse(node)}")
        return written_keys(callee)
    raise UncheckableRender(f"not a dict literal nor a render's call: {ast.unparse(node)}")


def written_keys(render: Callable[..., Any]) -> list[str]:
    """The keys `render` writes, in the order it writes them, read from its source."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(render)))
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef), render
    returns = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
    if len(returns) != 1 or returns[0].value is None:
        raise UncheckableRender("not one return of the body")
    returned = returns[0].value
    if not isinstance(returned, ast.Name):
        return value_keys(returned, render.__globals__)
    writes = _Writes(returned.id, render.__globals__)
    for statement in function.body:
        writes.visit(statement)
    return writes.keys


@pytest.mark.parametrize(("shape", "render"), registered(), ids=lambda x: x.__name__)
def test_a_render_writes_its_shapes_fields_in_their_order(shape, render):
    fields = shape._declared_fields
    assert shape.never_written <= set(fields), shape.never_written - set(fields)
    assert not [name for name in shape.never_written if fields[name].required]
    written = [name for name in fields if name not in shape.never_written]
    assert written_keys(render) == written, (
        f"{render.__name__} must write the fields {shape.__name__} documents, in their order"
    )


@pytest.mark.parametrize(("shape", "render"), registered(), ids=lambda x: x.__name__)
def test_a_render_types_what_it_reads(shape, render):
    """mypy checks every attribute a render reads: each parameter has a type, not Any."""
    signature = inspect.signature(render)
    for name, parameter in signature.parameters.items():
        assert parameter.annotation is not inspect.Parameter.empty, f"{name} has no type"
        assert parameter.annotation not in (Any, "Any"), f"{name} is typed Any"
    assert signature.return_annotation is not inspect.Signature.empty


def test_every_shape_has_one_render():
    """Each shape of apps/ is rendered by the one function registered for it; a private base
    (`_Range`) documents no body of its own."""
    renders_of = shape_renders()
    shapes = app_shapes()
    names = {s.__name__ for s in shapes}
    assert names >= NOT_YET_CONVERTED, NOT_YET_CONVERTED - names
    missing = [
        s.__name__
        for s in shapes
        if s not in renders_of
        and s.__name__ not in NOT_YET_CONVERTED | BASES
        and not s.__name__.startswith("_")
    ]
    assert not missing, f"shapes without a render (@renders): {missing}"
    converted = sorted(s.__name__ for s in renders_of if s.__name__ in NOT_YET_CONVERTED)
    assert not converted, f"rendered now: take them out of NOT_YET_CONVERTED: {converted}"


def test_renders_refuses_a_second_render_of_a_shape():
    class Once(Shape):
        id = serializers.CharField()

    @renders(Once)
    def once_render(thing: SimpleNamespace) -> dict[str, Any]:
        return {"id": thing.id}

    with pytest.raises(ValueError, match="Once already has a render"):
        renders(Once)(once_render)


# The checks of written_keys themselves, on renders of this shape.
class Sample(Shape):
    id = serializers.CharField()
    name = serializers.CharField()
    note = serializers.CharField(required=False)


def sample_literal(thing: SimpleNamespace) -> dict[str, Any]:
    return {"id": thing.id, "name": thing.name}


def sample_optional(thing: SimpleNamespace) -> dict[str, Any]:
    body = {"id": thing.id, "name": thing.name}
    if thing.note:
        body["note"] = thing.note
    return body


def sample_undocumented(thing: SimpleNamespace) -> dict[str, Any]:
    body = {"id": thing.id, "name": thing.name}
    body["extra"] = 1
    return body


def sample_missing(thing: SimpleNamespace) -> dict[str, Any]:
    return {"id": thing.id}


def sample_reordered(thing: SimpleNamespace) -> dict[str, Any]:
    return {"name": thing.name, "id": thing.id}


def sample_updated(thing: SimpleNamespace) -> dict[str, Any]:
    body = {"id": thing.id, "name": thing.name}
    body.update(note=thing.note)
    return body


def sample_helper(thing: SimpleNamespace) -> dict[str, Any]:
    body = {"id": thing.id}
    sample_more(body, thing)
    return body


def sample_more(body: dict[str, Any], thing: SimpleNamespace) -> None:
    body["name"] = thing.name


def test_written_keys_reads_a_literal_and_the_assignments_in_order():
    assert written_keys(sample_literal) == ["id", "name"]
    assert written_keys(sample_optional) == ["id", "name", "note"]
    assert written_keys(sample_reordered) == ["name", "id"]


def test_written_keys_sees_an_undocumented_key_and_a_missing_one():
    fields = list(Sample._declared_fields)
    assert written_keys(sample_optional) == fields
    assert written_keys(sample_undocumented) != fields
    assert written_keys(sample_missing) != fields
    assert written_keys(sample_reordered) != fields


@pytest.mark.parametrize("render", [sample_updated, sample_helper])
def test_written_keys_refuses_a_body_written_where_it_cannot_see(render):
    with pytest.raises(UncheckableRender):
        written_keys(render)


def test_written_keys_follows_the_render_a_body_starts_from():
    from apps.streaks.wire import BaseStreakResponse, metric_event_streak_response_render

    keys = written_keys(metric_event_streak_response_render)
    assert keys == [*BaseStreakResponse._declared_fields, "extended"]
