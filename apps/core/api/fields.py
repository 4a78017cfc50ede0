"""Serializer building blocks shared by every app's input shapes."""

from typing import Any

from rest_framework import serializers

# ASCII only (\d would also accept other scripts' digits), and \Z rather than $, which would
# accept a trailing newline.
KEY_PATTERN = r"^[a-zA-Z0-9_-]+\Z"


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
        error_messages={"invalid": "must match ^[a-zA-Z\\d-_]+$ (ASCII letters, digits, - and _)"},
    )


class StrictSerializer(serializers.Serializer):
    """Rejects unknown fields instead of silently ignoring a typo, and non-strings given for
    string fields (email, URL, key and plain text fields alike)."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            errors: dict[str, str] = dict.fromkeys(
                sorted(set(data) - set(self.fields)), "unknown field"
            )
            for name, field in self.fields.items():
                value = data.get(name)
                if (
                    isinstance(field, serializers.CharField)
                    and value is not None
                    and not (isinstance(value, str))
                ):
                    errors[name] = "must be a string"
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)
