"""How the API spells a field that a service's refusal names in Python's words
(apps/core/errors.py): as the input serializer that read the request names it.

`StrictSerializer.service_kwargs` hands a service each validated value under the snake_case of
its field's `source` (`maxPoints` -> `max_points`), so the way back is read off the
same serializer: the field whose source turns into the Python name. A dotted name
("streak.days_off") follows nested serializers. A name no field gives back (the serializer is not
known, or the service names something it computed) is written in the API's convention,
camelCase."""

from collections.abc import Callable
from functools import cache

from rest_framework import serializers

from apps.core.api.fields import camel_case, snake_case
from apps.core.errors import ApplicationError

Namer = Callable[[str], str]


@cache
def _wire_fields(serializer_class: type[serializers.Serializer]) -> dict[str, tuple[str, object]]:
    """Python name -> (wire name, the field), for one serializer's fields."""
    names: dict[str, tuple[str, object]] = {}
    for wire, field in serializer_class().fields.items():
        source = field.source if field.source not in (None, "*") else wire
        names.setdefault(snake_case(source), (wire, field))
    return names


def _nested(field: object) -> type[serializers.Serializer] | None:
    if isinstance(field, serializers.ListSerializer):
        field = field.child
    return type(field) if isinstance(field, serializers.Serializer) else None


def wire_name(serializer_class: type[serializers.Serializer] | None, field: str) -> str:
    """The wire spelling of the Python field path `field` in bodies `serializer_class` reads."""
    spelled: list[str] = []
    current = serializer_class
    for part in field.split("."):
        found = _wire_fields(current).get(part) if current is not None else None
        if found is None:
            spelled.append(camel_case(part))
            current = None
        else:
            spelled.append(found[0])
            current = _nested(found[1])
    return ".".join(spelled)


def wire_namer(serializer_class: type[serializers.Serializer] | None) -> Namer:
    return lambda field: wire_name(serializer_class, field)


def api_refusal(
    error: ApplicationError, serializer_class: type[serializers.Serializer] | None
) -> serializers.ValidationError:
    """A domain rule's refusal raised where a serializer checks it (per item, before a lookup),
    its fields spelled as `serializer_class` spells them."""
    return serializers.ValidationError(error.worded(wire_namer(serializer_class)))
