"""The admin API's fields held to a resource's declaration (apps/core/declarations.py).

The input serializers and the response shapes are written out as DRF fields, because they are
the served contract (their order, help texts and OpenAPI components are what the SDKs were
generated from); what they must agree on with the declaration (wire names, requiredness,
nullability, bounds, choices, kinds) is checked here, by one test per resource
(tests/core/test_declarations.py). Each function returns the disagreements, in words.
"""

from collections.abc import Iterable
from typing import Any

from rest_framework import serializers

from apps.core.declarations import Declaration, Kind, Setting, settings_of

# The DRF fields that may carry each kind (a shape writes a time as "HH:mm" text, an id as text).
_FIELDS: dict[Kind, tuple[type[serializers.Field], ...]] = {
    Kind.TEXT: (serializers.CharField,),
    Kind.KEY: (serializers.CharField,),
    Kind.INTEGER: (serializers.IntegerField,),
    Kind.DECIMAL: (serializers.DecimalField, serializers.FloatField, serializers.IntegerField),
    Kind.FLAG: (serializers.BooleanField,),
    Kind.CHOICE: (serializers.ChoiceField,),
    Kind.CHOICES: (serializers.ListField, serializers.MultipleChoiceField),
    Kind.DATE: (serializers.DateField,),
    Kind.TIME: (serializers.TimeField, serializers.CharField),
    Kind.URL: (serializers.CharField,),
    Kind.EMAIL: (serializers.CharField,),
    Kind.REFERENCE: (serializers.UUIDField, serializers.CharField),
    Kind.REFERENCES: (serializers.ListField, serializers.ListSerializer),
    Kind.STRUCTURE: (serializers.Field,),
}


_LISTS = (Kind.CHOICES, Kind.REFERENCES)


def _fields(serializer_class: type[serializers.Serializer]) -> dict[str, Any]:
    return dict(serializer_class().fields)


def _kind_problems(setting: Setting, field: Any) -> list[str]:
    wire = setting.wire_name
    if not isinstance(field, _FIELDS[setting.kind]):
        return [f"{wire}: a {type(field).__name__} carries a {setting.kind} setting"]
    problems: list[str] = []
    if setting.kind in (Kind.CHOICE, Kind.CHOICES):
        child = getattr(field, "child", field)
        offered = set(getattr(child, "choices", {}))
        if offered != set(setting.choice_values()):
            problems.append(f"{wire}: choices {sorted(offered)} != {setting.choice_values()}")
    return problems


def serializer_problems(
    declaration: type[Declaration],
    serializer_class: type[serializers.Serializer],
    *,
    creates: bool,
    unchecked: Iterable[str] = (),
) -> list[str]:
    """How an input serializer disagrees with the declaration: a setting missing or an input
    not declared (besides `id`, the object an update names), a setting set for good taken by an
    update, requiredness (only a create requires), null, bounds, lengths, choices and kinds.
    `unchecked`: wire names whose form differs on purpose, said where the test lists them."""
    fields = _fields(serializer_class)
    settings = {s.wire_name: s for s in settings_of(declaration).values()}
    skip = set(unchecked)
    problems = [
        f"{wire}: an input the declaration does not state"
        for wire in fields
        if wire not in settings and wire != "id" and wire not in skip
    ]
    for wire, setting in settings.items():
        if wire in skip:
            continue
        field = fields.get(wire)
        if setting.fixed and not creates:
            if field is not None:
                problems.append(f"{wire}: set for good, yet an update takes it")
            continue
        if field is None:
            problems.append(f"{wire}: declared, not an input")
            continue
        problems += _kind_problems(setting, field)
        if field.required != (creates and setting.required):
            problems.append(f"{wire}: required is {field.required}")
        if field.allow_null != setting.nullable:
            problems.append(f"{wire}: allow_null is {field.allow_null}")
        lower, upper = setting.bounds()
        if (getattr(field, "min_value", None), getattr(field, "max_value", None)) != (
            lower,
            upper,
        ) and setting.kind in (Kind.INTEGER, Kind.DECIMAL):
            problems.append(
                f"{wire}: bounds {field.min_value}..{field.max_value} != {lower}..{upper}"
            )
        if setting.max_length is not None and getattr(field, "max_length", None) != (
            setting.max_length
        ):
            problems.append(f"{wire}: max_length {field.max_length} != {setting.max_length}")
    return problems


def shape_problems(
    declaration: type[Declaration],
    shape_class: type[serializers.Serializer],
    *,
    unchecked: Iterable[str] = (),
) -> list[str]:
    """How a response shape disagrees with the declaration: every setting is in the body under
    its wire name, of its kind and choices, null exactly where the setting may be None (a list
    that None clears is written empty, and a structure as it is stored)."""
    fields = _fields(shape_class)
    problems: list[str] = []
    skip = set(unchecked)
    for setting in settings_of(declaration).values():
        wire = setting.wire_name
        if wire in skip:
            continue
        field = fields.get(wire)
        if field is None:
            problems.append(f"{wire}: declared, not in the body")
            continue
        problems += _kind_problems(setting, field)
        if setting.kind in _LISTS:
            if field.allow_null:
                problems.append(f"{wire}: a list is written empty, never null")
        elif setting.kind != Kind.STRUCTURE and field.allow_null != setting.nullable:
            problems.append(f"{wire}: allow_null is {field.allow_null}")
    return problems
