"""Response shapes (apps/core/api/shapes.py).

Each `Shape` documents a body and the typed function registered for it with `renders` writes
it: the end of this module holds every such function to its shape, reading the keys the
function writes from its source (the dict literal it builds, then each `body["key"] = ...` and
each `body.update(part(...))` of a typed function whose keys are read the same way), which must
be the shape's fields in their order."""

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

from apps.core.api.shapes import Shape, renders, shape_renders


def test_a_keyword_is_declared_with_a_trailing_underscore_and_documented_without_it():
    class Range(Shape):
        from_ = serializers.IntegerField()
        to = serializers.IntegerField()

    assert list(Range._declared_fields) == ["from", "to"]  # what the document names


# --- plain renders held to their shapes (issue 24, item 2) ----------------------------------

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
        if node.id not in scope:
            raise UncheckableRender(f"not a name of its module: {node.id}")
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
            if func.attr != "update" or node.keywords or len(node.args) != 1:
                raise UncheckableRender(f"changes the body by a method: {ast.unparse(node)}")
            self.keys += part_keys(node.args[0], self.scope)
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


def part_keys(node: ast.expr, scope: dict[str, Any]) -> list[str]:
    """The keys of `body.update(part(...))`: `part` is a typed function whose keys are read
    from its source as a render's are (a part shared by renders of several shapes)."""
    if not isinstance(node, ast.Call):
        raise UncheckableRender(f"updates the body from no call: {ast.unparse(node)}")
    part = _resolve(node.func, scope)
    if not inspect.isfunction(part):
        raise UncheckableRender(f"updates the body from no function: {ast.unparse(node)}")
    signature = inspect.signature(part)
    untyped = [
        name
        for name, parameter in signature.parameters.items()
        if parameter.annotation in (inspect.Parameter.empty, Any, "Any")
    ]
    if untyped or signature.return_annotation is inspect.Signature.empty:
        raise UncheckableRender(f"{part.__name__} does not type what it reads or returns")
    return written_keys(part)


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
    assert {s.__name__ for s in shapes} >= BASES
    missing = [
        s.__name__
        for s in shapes
        if s not in renders_of and s.__name__ not in BASES and not s.__name__.startswith("_")
    ]
    assert not missing, f"shapes without a render (@renders): {missing}"
    assert not [s.__name__ for s in renders_of if s.__name__ in BASES]


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


def sample_part(thing: SimpleNamespace) -> dict[str, Any]:
    part = {"name": thing.name}
    if thing.note:
        part["note"] = thing.note
    return part


def sample_untyped_part(thing):  # type: ignore[no-untyped-def]
    return {"name": thing.name}


def sample_updated_by_part(thing: SimpleNamespace) -> dict[str, Any]:
    body = {"id": thing.id}
    body.update(sample_part(thing))
    return body


def sample_updated_by_untyped_part(thing: SimpleNamespace) -> dict[str, Any]:
    body = {"id": thing.id}
    body.update(sample_untyped_part(thing))
    return body


def sample_updated_by_a_dict(thing: SimpleNamespace) -> dict[str, Any]:
    body = {"id": thing.id}
    more = {"name": thing.name}
    body.update(more)
    return body


def sample_updated_by_a_builtin(thing: SimpleNamespace) -> dict[str, Any]:
    body = {"id": thing.id}
    body.update(vars(thing))
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


def test_written_keys_reads_the_keys_of_a_typed_part_where_it_is_added():
    assert written_keys(sample_updated_by_part) == ["id", "name", "note"]
    assert written_keys(sample_updated_by_part) == list(Sample._declared_fields)


@pytest.mark.parametrize(
    "render",
    [
        sample_updated,
        sample_helper,
        sample_updated_by_untyped_part,
        sample_updated_by_a_dict,
        sample_updated_by_a_builtin,
    ],
)
def test_written_keys_refuses_a_body_written_where_it_cannot_see(render):
    with pytest.raises(UncheckableRender):
        written_keys(render)


def test_the_achievement_renders_share_one_checked_trigger_part():
    from apps.achievements.serializers import achievement_with_stats_response_render
    from apps.achievements.wire import trigger_settings, user_achievement_response_render

    part = written_keys(trigger_settings)
    assert "metricId" in part
    for render in (user_achievement_response_render, achievement_with_stats_response_render):
        keys = written_keys(render)
        assert keys[keys.index(part[0]) :][: len(part)] == part


def test_written_keys_follows_the_render_a_body_starts_from():
    from apps.streaks.wire import BaseStreakResponse, metric_event_streak_response_render

    keys = written_keys(metric_event_streak_response_render)
    assert keys == [*BaseStreakResponse._declared_fields, "extended"]
