"""The dashboard's attribute filters as staff type them: rows of attribute and value on every
page that targets end-users by their attributes (points triggers and boosts, leaderboards,
notification templates), and their conversion to and from the attribute references the services
take. The widget's script and styles are served from the points app, where the field began
(points/attribute-pairs.js, points/points.css)."""

from typing import Any, ClassVar

from django import forms
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.forms import ParsedField, attribute_value_problems
from apps.accounts.admin.rows import RowsWidget
from apps.accounts.models import Tenant
from apps.users.selectors import attribute_definitions


def attribute_refs(
    form: forms.BaseForm, name: str, tenant: Tenant, kind: str
) -> list[dict[str, str]]:
    """The (key, value) rows of an AttributePairsField as the attribute filters services take
    ({"attributeId", "attributeValue"}); an unknown key is an error of the field."""
    ids = attribute_definitions(tenant).ids_by_type_key
    pairs = form.cleaned_data[name]
    unknown = sorted({key for key, _ in pairs if (kind, key) not in ids})
    if unknown:
        form.add_error(name, f"unknown {kind} attribute keys: {', '.join(unknown)}")
    return [
        {"attributeId": ids[(kind, key)], "attributeValue": value}
        for key, value in pairs
        if (kind, key) in ids
    ]


def attribute_values_rule(pairs: list[tuple[str, str]]) -> None:
    """The values of an AttributePairsField, as the admin API checks each filter's value (the
    message names the row, counted from 0 as in the API's)."""
    found = attribute_value_problems(value for _, value in pairs)
    problems = [f"{index}: {problem}" for index, problem in enumerate(found) if problem]
    if problems:
        raise forms.ValidationError(problems)


def filter_pairs(tenant: Tenant, refs: list[dict[str, str]], kind: str) -> list[tuple[str, str]]:
    """Stored filters (attribute ids) as (key, value) pairs. A deleted attribute shows as its
    id: the filter no longer matches anyone and must go."""
    keys = {
        pid: key
        for (t, key), pid in attribute_definitions(tenant).ids_by_type_key.items()
        if t == kind
    }
    return [
        (keys.get(ref["attributeId"], ref["attributeId"]), ref["attributeValue"]) for ref in refs
    ]


class AttributePairsWidget(RowsWidget):
    """Filters as rows of (attribute, value) (points/attribute-pairs.js). In an inline row,
    Django's inline script renumbers the names of the hidden template row with the rest of a new
    inline row."""

    choice_name = "key"
    value_name = "value"
    choice_label = "Attribute"
    value_label = "Value"
    noun = "filter"
    unknown = "(deleted attribute)"

    class Media:
        js = ("points/attribute-pairs.js",)
        css: ClassVar[dict[str, tuple[str, ...]]] = {"all": ("points/points.css",)}

    def empty_text(self) -> str:
        label = self.key_label.lower()
        return f"No {label}s are defined for this tenant, so there is nothing to filter on."

    def value_input(self, name: str, value: str, disabled: str) -> SafeString:
        return format_html(
            '<input type="text" name="{}-value" value="{}" aria-label="Value" maxlength="255"{}>',
            name,
            value,
            disabled,
        )


class AttributePairsField(ParsedField):
    """Attribute filters as (key, value) pairs; attribute_refs turns the keys into attribute
    ids."""

    widget = AttributePairsWidget

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", "Empty: everyone.")
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def set_keys(self, keys: list[str], label: str, labels: dict[str, str] | None = None) -> None:
        """The attributes offered (keys) and how each is named (users.selectors.attribute_labels:
        names first, keys second)."""
        widget: Any = self.widget
        widget.keys = keys
        widget.key_label = label
        widget.labels = labels or {}

    def to_python(self, value: Any) -> list[tuple[str, str]]:
        if isinstance(value, str):  # initial data written as text
            value = [line.partition(":")[::2] for line in value.splitlines() if line.strip()]
        pairs = []
        for key, attribute_value in value or []:
            key, attribute_value = str(key).strip(), str(attribute_value).strip()
            if not key and not attribute_value:
                continue
            if not key:
                raise forms.ValidationError(
                    f"Choose the attribute of the value “{attribute_value}”."
                )
            if not attribute_value:
                raise forms.ValidationError(f"Give a value for {key}.")
            pairs.append((key, attribute_value))
        return pairs
