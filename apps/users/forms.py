"""The dashboard's attribute filters as staff type them: rows of attribute and value on every
page that targets end-users by their attributes (points triggers and boosts, leaderboards,
notification templates), and their conversion to and from the attribute references the services
take. The widget's script and styles are served from the points app, where the field began
(points/attribute-pairs.js, points/points.css)."""

from typing import Any, ClassVar

from django import forms
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from apps.accounts.admin.base import ParsedField, attribute_value_problems
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


def _rows_value(data: Any, name: str) -> list[list[str]]:
    if hasattr(data, "getlist"):
        return [data.getlist(f"{name}-key"), data.getlist(f"{name}-value")]
    return [list(data.get(f"{name}-key", [])), list(data.get(f"{name}-value", []))]


class AttributePairsWidget(forms.Widget):
    """Filters as rows of (attribute, value) with buttons to add and remove rows
    (points/attribute-pairs.js). Without JavaScript the page still works: it always shows one
    blank row, so staff add one filter per save. The hidden template row is disabled, so it is
    never sent; Django's inline script renumbers its names with the rest of a new inline row."""

    noun: ClassVar[str] = "filter"

    class Media:
        js = ("points/attribute-pairs.js",)
        css: ClassVar[dict[str, tuple[str, ...]]] = {"all": ("points/points.css",)}

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs)
        self.keys: list[str] = []
        self.key_label = "Attribute"

    def value_from_datadict(self, data: Any, files: Any, name: str) -> list[tuple[str, str]]:
        keys, values = _rows_value(data, name)
        return list(zip(keys, values, strict=False))

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        return f"{name}-key" not in data

    def _select(self, name: str, chosen: str, disabled: bool) -> SafeString:
        options = [("", "---------"), *((key, key) for key in self.keys)]
        if chosen and chosen not in self.keys:
            options.append((chosen, f"{chosen} (deleted attribute)"))
        return format_html(
            '<select name="{}-key" aria-label="{}"{}>{}</select>',
            name,
            self.key_label,
            " disabled" if disabled else "",
            format_html_join(
                "",
                '<option value="{}"{}>{}</option>',
                (
                    (value, " selected" if value == chosen else "", label)
                    for value, label in options
                ),
            ),
        )

    def _row(self, name: str, key: str, value: str, marker: str = "") -> SafeString:
        template = marker == "data-row-template"
        return format_html(
            '<tr data-row{}><td>{}</td><td><input type="text" name="{}-value" value="{}" '
            'aria-label="Value" maxlength="255"{}></td><td><button type="button" '
            'class="rows-remove" data-remove-row title="Remove this {}">Remove</button></td></tr>',
            format_html(" {}{}", marker, " hidden" if template else "") if marker else "",
            self._select(name, key, template),
            name,
            value,
            " disabled" if template else "",
            self.noun,
        )

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        pairs = [(str(k), str(v)) for k, v in value] if isinstance(value, list | tuple) else []
        pairs = [(k, v) for k, v in pairs if k or v]
        if not self.keys and not pairs:
            return format_html(
                '<p class="rows-empty">No {}s are defined for this tenant, so there is nothing '
                "to filter on.</p>",
                self.key_label.lower(),
            )
        rows = format_html_join("", "{}", ((self._row(name, k, v),) for k, v in pairs))
        # One blank row: without JavaScript, a filter can still be added (the script drops it
        # and offers "Add" instead).
        blank = self._row(name, "", "", "data-row-blank")
        return format_html(
            '<div class="rows" data-rows><table class="rows-table"><thead><tr><th>{}</th>'
            "<th>Value</th><th></th></tr></thead><tbody>{}{}{}</tbody></table>"
            '<button type="button" class="rows-add" data-add-row>Add a {}</button></div>',
            self.key_label,
            rows,
            blank,
            self._row(name, "", "", "data-row-template"),
            self.noun,
        )


class AttributePairsField(ParsedField):
    """Attribute filters as (key, value) pairs; attribute_refs turns the keys into attribute
    ids."""

    widget = AttributePairsWidget

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", "Empty: everyone.")
        super().__init__(required=False, **kwargs)

    def set_keys(self, keys: list[str], label: str) -> None:
        widget: Any = self.widget
        widget.keys = keys
        widget.key_label = label

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
