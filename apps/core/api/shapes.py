"""Response shapes: one `Shape` per response body, whose fields are what drf-spectacular
documents, and one plain typed function that writes that body.

A Shape is a DRF serializer, so `extend_schema(responses=...)` and nested declarations read it
as they read any serializer (names, types, nullability, `required=False` for a field that is
sometimes absent, help texts, choices). It is never instantiated: DRF's
`Serializer(instance).data` copies every field per object, too slow for the event path. Its
body is written by the function registered for it with `@renders(TheShape)`, right below it:
one dict literal with the fields always present, then a plain `if` per field that is sometimes
absent, in the shape's field order (inherited fields first); keys that several bodies share may
come from one typed part, `body.update(trigger_settings(achievement))`, whose keys are read
from its source by the same rules. mypy checks every value it reads;
tests/core/test_shapes.py holds each function to its shape's fields and their order
(docs/style.md, "The API layer").
"""

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from rest_framework import serializers

Render = Callable[..., dict[str, Any]]
R = TypeVar("R", bound=Render)
_RENDERS: dict[type["Shape"], Render] = {}


class Shape(serializers.Serializer):
    # No docstring: drf-spectacular would give it to every shape as its description.

    # Documented fields the server never writes (deprecated ones the SDK models keep): the
    # shape's render leaves them out (tests/core/test_shapes.py).
    never_written: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # The metaclass has collected the fields, inherited ones first. A wire name that is a
        # Python keyword is declared with a trailing underscore (`from_`).
        super().__init_subclass__(**kwargs)
        fields = {name.removesuffix("_"): f for name, f in cls._declared_fields.items()}
        cls._declared_fields = fields


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
