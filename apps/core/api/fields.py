"""Serializer building blocks shared by every app's input shapes."""

import re
from collections.abc import Callable, Mapping
from decimal import ROUND_HALF_EVEN, Decimal
from functools import cached_property
from typing import Any

from rest_framework import serializers
from rest_framework.utils.serializer_helpers import BindingDict

# ASCII only (\d would also accept other scripts' digits), and \Z rather than $, which would
# accept a trailing newline.
KEY_PATTERN = r"^[a-zA-Z0-9_-]+\Z"
# An attribute value, of a user, an event or an attribute filter.
MAX_ATTRIBUTE_VALUE = 255
KEY_RULE = "must match ^[a-zA-Z\\d-_]+$ (ASCII letters, digits, - and _)"


class StringField(serializers.CharField):
    """A JSON string. DRF's CharField would quietly turn 123 into "123"."""

    default_error_messages = {"invalid": "must be a string"}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


def key_field() -> serializers.RegexField:
    """A configuration key (reference §2.2: ^[a-zA-Z\\d-_]+$), at most 100 characters, taken
    as given: surrounding spaces are an error, not something to trim silently."""
    return serializers.RegexField(
        KEY_PATTERN,
        max_length=100,
        trim_whitespace=False,
        error_messages={"invalid": KEY_RULE},
    )


# Control characters (C0, DEL, C1) and the Unicode line and paragraph separators: they forge
# lines in logs and exports and hide text in the dashboard. Free text (below) may hold line breaks
# and tabs; no string may hold the rest.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_CONTROL_EXCEPT_BREAKS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Fields documented as free text: descriptions, message bodies, PEM keys.
FREE_TEXT_FIELDS = frozenset({"description", "body", "html", "text", "signingKey"})


def control_characters_error(name: str, value: str, free_text: bool = False) -> str | None:
    multiline = free_text or name in FREE_TEXT_FIELDS
    pattern = _CONTROL_EXCEPT_BREAKS if multiline else _CONTROL
    if pattern.search(value):
        return "must not contain control characters"
    return None


# The customer's id of an end-user, in a body ({"user": {"id"}}, "userId") or a path ({user_id}).
MAX_USER_ID = 255


def user_id_error(user_id: str) -> str | None:
    """What is wrong with a user id given in a URL path (bodies check the same with their
    fields' max_length and StrictSerializer)."""
    if len(user_id) > MAX_USER_ID:
        return f"must be at most {MAX_USER_ID} characters"
    return control_characters_error("id", user_id)


class PositiveDecimalField(serializers.DecimalField):
    """A JSON number greater than 0. JSON numbers are doubles: digits past `decimal_places` are
    rounded (half to even, as event values are), not refused."""

    default_error_messages = {"not_positive": "must be greater than 0"}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("coerce_to_string", False)
        # No min_value: its validator would make drf-spectacular drop exclusiveMinimum.
        super().__init__(**kwargs)

    def validate_precision(self, value: Decimal) -> Decimal:
        places = self.decimal_places
        if places is not None and self.max_whole_digits is not None:
            quantum = Decimal(1).scaleb(-places)
            if value.adjusted() < self.max_whole_digits:  # too large: refused as before
                value = value.quantize(quantum, rounding=ROUND_HALF_EVEN)
        return Decimal(super().validate_precision(value))

    def run_validation(self, data: Any = serializers.empty) -> Any:
        value = super().run_validation(data)
        if value is not None and value < 0:
            self.fail("min_value", min_value=0)
        if value is not None and value == 0:
            self.fail("not_positive")
        return value


_HUMP = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake_case(name: str) -> str:
    """A wire name as Python spells it: maxPoints -> max_points."""
    return _HUMP.sub(r"_\1", name).lower()


def camel_case(name: str) -> str:
    """A Python name as the wire spells it: max_points -> maxPoints."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


class StrictSerializer(serializers.Serializer):
    """Rejects unknown fields instead of silently ignoring a typo, non-strings given for string
    fields (email, URL, key and plain text fields alike), and control characters in them.

    `service_kwargs` hands the validated data to a service as keyword arguments (docs/style.md,
    "Writing services"): wire names become snake_case and the item's `id` stays behind, since
    the service is given the object itself. Shapes whose values change form on the way (a badge
    object becomes `badge_url`) override it."""

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        return {snake_case(key): value for key, value in data.items() if key != "id"}

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            errors: dict[str, str] = dict.fromkeys(
                sorted(set(data) - set(self.fields)), "unknown field"
            )
            for name, field in self.fields.items():
                value = data.get(name)
                if not isinstance(field, serializers.CharField) or value is None:
                    continue
                if not isinstance(value, str):
                    errors[name] = "must be a string"
                elif (problem := control_characters_error(name, value)) is not None:
                    errors[name] = problem
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


# DRF's: deep copies of the declared fields, bound to the serializer given.
_BUILD_FIELDS: Callable[[serializers.Serializer[Any]], BindingDict] = (
    serializers.Serializer.fields.func  # type: ignore[attr-defined]
)


class FieldsBuiltOnce(serializers.Serializer):
    """An input serializer of a hot route (the event) whose fields are built once per class.

    DRF deep-copies every declared field, a nested serializer's with its own, each time a
    serializer is made: a quarter of the event route's Python calls went to rebuilding the
    same dozen fields. A serializer made with data only (no instance, no context, not partial,
    not bound into another) takes the fields of one prototype of its class instead: the same
    field objects, bound to a serializer equal to it in all that a field reads of its root
    (`context`, `partial`, `instance`). Validating keeps no state in a field (the errors and
    the validated data live on the serializer made for the request), so threads can share them.
    Anything else (a context, an update) builds its own, as DRF does. A subclass must not
    change its fields per instance."""

    @cached_property
    def fields(self) -> BindingDict:
        if (
            self.instance is not None
            or self._context
            or self.partial
            or self.parent is not None
            or self.field_name is not None
        ):
            return _BUILD_FIELDS(self)
        cls = type(self)
        prototype = cls.__dict__.get("_fields_prototype")
        if prototype is None:
            prototype = cls()
            prototype.__dict__["fields"] = _BUILD_FIELDS(prototype)  # not through this method
            cls._fields_prototype = prototype
        fields: BindingDict = prototype.fields
        return fields
