"""The JSON Schema of the configuration file (README "Configuration as code"), made from the
shapes the admin API documents for each kind (the `output_schema` of its Collection), with ids
replaced by keys as in the states (apps/core/portable.py). The repository ships it as
`schemas/gamify-config.schema.json` (`manage.py config schema` writes it; a test holds the file
to this module), and `config apply` checks a file against it before anything is written.

It checks the layout and each setting's type and choices, and refuses a name no kind has (a
misspelt setting); whether a new object has every setting it needs, and every rule between
settings, is the admin API's validation, which applying runs.
"""

from collections.abc import Mapping
from functools import cache
from typing import Any

import jsonschema
from rest_framework import serializers

from apps.changes import domain
from apps.core import portable
from apps.core.errors import ValidationError

SCHEMA_ID = "https://gamify.dev/schemas/gamify-config.schema.json"

_STRINGS = (
    serializers.CharField,
    serializers.UUIDField,
    serializers.DateField,
    serializers.TimeField,
    serializers.DateTimeField,
)


def _nullable(schema: dict[str, Any], field: serializers.Field) -> dict[str, Any]:
    if not getattr(field, "allow_null", False):
        return schema
    if "enum" in schema:
        return {**schema, "enum": [*schema["enum"], None]}
    if "type" in schema:
        return {**schema, "type": [schema["type"], "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def _field(field: serializers.Field) -> dict[str, Any]:
    schema: dict[str, Any]
    if isinstance(field, serializers.ListSerializer):
        child = field.child
        items = _object(child) if isinstance(child, serializers.Serializer) else {}
        schema = {"type": "array", "items": items}
    elif isinstance(field, serializers.Serializer):
        schema = _object(field)
    elif isinstance(field, serializers.ChoiceField):
        schema = {"enum": sorted(str(choice) for choice in field.choices)}
    elif isinstance(field, serializers.BooleanField):
        schema = {"type": "boolean"}
    elif isinstance(field, serializers.IntegerField):
        schema = {"type": "integer"}
    elif isinstance(field, serializers.FloatField | serializers.DecimalField):
        schema = {"type": "number"}
    elif isinstance(field, serializers.ListField):
        schema = {"type": "array", "items": _field(field.child)}
    elif isinstance(field, serializers.DictField):
        schema = {"type": "object", "additionalProperties": _field(field.child)}
    elif isinstance(field, _STRINGS):
        schema = {"type": "string"}
    else:  # JSONField, SerializerMethodField: any JSON
        schema = {}
    return _nullable(schema, field)


def _object(
    shape: serializers.Serializer,
    only: frozenset[str] | None = None,
    refs: Mapping[str, tuple[str, str]] | None = None,
) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name, field in shape.fields.items():
        if name in {"id", "created", "updated"} or (only is not None and name not in only):
            continue
        if refs and name in refs:
            properties[refs[name][0]] = _nullable(
                {"type": "array", "items": {"type": "string"}}, field
            )
        elif name in portable.ID_FIELDS:
            properties[portable.ID_FIELDS[name][0]] = _nullable({"type": "string"}, field)
        else:
            properties[name] = _field(field)
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _kind_schema(kind: portable.Kind) -> dict[str, Any]:
    if isinstance(kind, portable.CollectionKind):
        shape = kind.collection.output_schema
        assert shape is not None  # noqa: S101 - every portable collection documents its shape
        return _object(shape(), kind.settable, kind.refs)
    assert isinstance(kind, portable.SingletonKind)  # noqa: S101 - the two sorts of kind
    schema = _object(kind.shape())
    schema["properties"].update(kind.more)
    return schema


@cache
def document_schema() -> dict[str, Any]:
    kinds = {kind.name: kind for kind in portable.kinds()}
    properties: dict[str, Any] = {
        "gamify": {"const": domain.VERSION, "description": "The file format's version."},
        "environment": {
            "type": ["string", "null"],
            "description": "Where it was exported from (not used when applying).",
        },
        "tenant": {
            "type": ["string", "null"],
            "description": "Where it was exported from (not used when applying).",
        },
    }
    for name, section in domain.SECTIONS.items():
        item = _kind_schema(kinds[name])
        if name == domain.CHILD_PARENT:
            for child, child_section in domain.CHILDREN.items():
                item["properties"][child_section] = {
                    "type": "object",
                    "additionalProperties": _kind_schema(kinds[child]),
                }
        if name in domain.SINGLETONS:
            properties[section] = item
        else:
            properties[section] = {
                "type": "object",
                "description": f"{kinds[name].label.capitalize()}s by key.",
                "additionalProperties": item,
            }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "gamify configuration",
        "description": "A tenant's configuration (manage.py config export / apply). A section "
        "left out is not managed by the file; an object left out of a section is archived "
        "(or deleted, where its kind has no archive) when the file is applied.",
        "type": "object",
        "required": ["gamify"],
        "properties": properties,
        "additionalProperties": False,
    }


def document_check(doc: Any) -> None:
    """Refuse a file the schema does not describe, naming where (at most five places)."""
    validator = jsonschema.Draft202012Validator(document_schema())
    problems = sorted(validator.iter_errors(doc), key=lambda error: list(error.absolute_path))
    if problems:
        lines = [
            f"{'/'.join(str(part) for part in error.absolute_path) or '(top)'}: {error.message}"
            for error in problems[:5]
        ]
        raise ValidationError("The configuration file is not valid: " + "; ".join(lines))
