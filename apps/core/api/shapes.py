"""Response shapes declared once (issue 15): one `Shape` per response body, whose fields are
what drf-spectacular documents.

Issue 24: a shape only documents; its body is written by one plain typed function right below
it, registered with `@renders(TheShape)` (docs/style.md, "The API layer"), and
tests/core/test_shapes.py holds each function to its shape's fields and their order. What
follows, the compiled `render` and its getters, serves the shapes not converted yet.

A Shape is a DRF serializer, so `extend_schema(responses=...)` and nested declarations read it
as they read any serializer (names, types, nullability, `required=False` for a field that is
sometimes absent, help texts, choices). It is never instantiated to render: DRF's
`Serializer(instance).data` copies every field per object, too slow for the event path.
Instead each field carries the function that computes its value (`out(field, get)`, or by
default the attribute named as the field in snake_case), and `render(obj, context)` calls them in
declaration order, which is the order of the keys on the wire (inherited fields first). A field
declared `required=False` whose function returns `OMIT` is left out of the body (fields that
exist for one trigger type or one feature only); a required field is always written, as the
documents promise.

A shape rendered from a mapping rather than an object (a service's settings, whose keys vary
with a kind) says so with `from_mapping = True`: its attribute names, the default ones
included, become keys ("user_attributes" reads `obj["user_attributes"]`), and a field declared
`required=False` whose key the mapping lacks is left out, as if its getter said OMIT.

Values are written exactly as the getters return them: the JSON renderer (orjson) writes dates
and datetimes as today; a getter converts where the wire wants another form.
"""

import keyword
import re
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from rest_framework import serializers

OMIT: Any = object()  # a getter's "leave this key out"

Render = Callable[..., dict[str, Any]]
R = TypeVar("R", bound=Render)
_RENDERS: dict[type["Shape"], Render] = {}

Getter = Callable[[Any, Any], Any]

_GETTER = "_shape_get"
_PATH = re.compile(r"[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*\Z")


def out(field: serializers.Field, get: Getter | str) -> Any:
    """`field`, whose value `get(obj, context)` computes, or which is the attribute `get` of the
    object rendered (a dotted path such as "board.name"; "context.total" reads the context)."""
    if isinstance(get, str) and not _PATH.match(get):
        raise ValueError(f"not an attribute path: {get!r}")
    setattr(field, _GETTER, get)
    return field


def only_when(attribute: str, value: Any, get: Getter) -> Getter:
    """The getter of a field written only for objects whose `attribute` is `value` (a field of
    one trigger type); OMIT for the others."""

    def read(obj: Any, context: Any) -> Any:
        return get(obj, context) if getattr(obj, attribute) == value else OMIT

    return read


def never(obj: Any, context: Any) -> Any:
    """A documented field this server never writes (a deprecated one the SDK models keep)."""
    return OMIT


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _read(get: str, from_mapping: bool, required: bool) -> str:
    """The expression that reads `get` (an attribute path, or a key of a mapping)."""
    if get.startswith("context."):
        return get
    if not from_mapping and keyword.iskeyword(get):  # a shape rendered by a function (`from`)
        return f"getattr(obj, {get!r})"
    if not from_mapping:
        return f"obj.{get}"
    if "." in get:
        raise ValueError(f"a mapping is read by key, not by path: {get!r}")
    return f"obj[{get!r}]" if required else f"obj.get({get!r}, OMIT)"


def _compiled(
    fields: dict[str, serializers.Field], from_mapping: bool
) -> Callable[[Any, Any], dict[str, Any]]:
    """The render of these fields as one generated function: the required fields (always
    present, as the documents say) in a dict literal or one assignment each, the others kept
    unless their getter says OMIT, and the default getters inlined as attribute reads (key
    reads for a shape rendered from a mapping). A loop over the fields would be twice as slow
    as the hand-written renders it replaces, and the event path renders several shapes per
    event."""
    names: dict[str, Any] = {"OMIT": OMIT}
    literal: list[str] = []
    lines: list[str] = []
    for i, (name, field) in enumerate(fields.items()):
        get = getattr(field, _GETTER, None) or _snake(name)
        if isinstance(get, str):
            value = _read(get, from_mapping, field.required)
        else:
            names[f"get{i}"] = get
            value = f"get{i}(obj, context)"
        if field.required and not lines:
            literal.append(f"{name!r}: {value}")
        elif field.required:
            lines.append(f"    body[{name!r}] = {value}")
        else:
            lines.append(f"    value = {value}")
            lines.append(f"    if value is not OMIT: body[{name!r}] = value")
    source = "\n".join(
        [
            "def render(obj, context=None):",
            f"    body = {{{', '.join(literal)}}}",
            *lines,
            "    return body",
        ]
    )
    # Built from the field names and attribute names declared in the repository's shapes.
    exec(source, names)  # noqa: S102
    render: Callable[[Any, Any], dict[str, Any]] = names["render"]
    return render


class Shape(serializers.Serializer):
    # No docstring: drf-spectacular would give it to every shape as its description.

    # Rendered from a mapping: attribute names are keys (module docstring).
    from_mapping: ClassVar[bool] = False

    # Documented fields the server never writes (deprecated ones the SDK models keep): the
    # shape's render leaves them out (tests/core/test_shapes.py).
    never_written: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # The metaclass has collected the fields, inherited ones first. A wire name that is a
        # Python keyword is declared with a trailing underscore (`from_`).
        super().__init_subclass__(**kwargs)
        fields = {name.removesuffix("_"): f for name, f in cls._declared_fields.items()}
        cls._declared_fields = fields
        setattr(cls, "render", staticmethod(_compiled(fields, cls.from_mapping)))  # noqa: B010 - mypy refuses assigning a method

    @staticmethod
    def render(obj: Any, context: Any = None) -> dict[str, Any]:
        """The body of `obj` (with `context`, for the getters that take one)."""
        raise NotImplementedError  # replaced in each shape by its compiled render


def renders(shape: type[Shape]) -> Callable[[R], R]:
    """Marks a plain, typed function as the one render of `shape`: it returns the body that
    `shape` documents, its keys in the shape's field order, optional ones left out when absent.
    tests/core/test_shapes.py holds every such function to its shape's fields."""

    def mark(render: R) -> R:
        if shape in _RENDERS:
            raise ValueError(f"{shape.__name__} already has a render")
        _RENDERS[shape] = render
        return render

    return mark


def shape_renders() -> dict[type[Shape], Render]:
    """Every shape with the function that renders it (for the test that compares them)."""
    return dict(_RENDERS)
