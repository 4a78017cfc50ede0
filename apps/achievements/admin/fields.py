"""Form fields of the achievement page that read like what they configure: attribute filters as
rows of attribute + value, and the badge URL with a preview of the badge."""

import re
from collections.abc import Mapping
from typing import Any

from django import forms
from django.contrib.admin.widgets import FilteredSelectMultiple
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from apps.accounts.admin.forms import ParsedField
from apps.core.api.fields import MAX_ATTRIBUTE_VALUE

# Without JavaScript there is no "Add a filter" button: the page offers this many rows at least.
MIN_ROWS = 3
# The limit on an attribute value, as the admin API's.
VALUE_MAX_LENGTH = MAX_ATTRIBUTE_VALUE

Rows = list[tuple[str, str]]


class AttributeRowsWidget(forms.Widget):
    """One row per filter: a select of the tenant's attributes of one type and a value input,
    named `<name>-<row>-attribute` and `<name>-<row>-value`. Empty rows are ignored, so a filter
    is removed by clearing its row; the page's script adds rows."""

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs)
        # (attribute public id, key), set by the form for the tenant being edited.
        self.choices: list[tuple[str, str]] = []

    def value_from_datadict(self, data: Mapping[str, Any], files: Any, name: str) -> Rows:
        pattern = re.compile(rf"^{re.escape(name)}-(\d+)-(attribute|value)$")
        rows: dict[int, dict[str, str]] = {}
        for field_name in data:
            match = pattern.match(field_name)
            if match:
                rows.setdefault(int(match[1]), {})[match[2]] = str(data.get(field_name) or "")
        return [(row.get("attribute", ""), row.get("value", "")) for _, row in sorted(rows.items())]

    def value_omitted_from_data(self, data: Mapping[str, Any], files: Any, name: str) -> bool:
        return False  # no rows sent is an empty list of filters, not a missing field

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        rows: Rows = [(str(a), str(v)) for a, v in (value or [])]
        rows += [("", "")] * max(1, MIN_ROWS - len(rows))
        labels = dict(self.choices)
        html_id = (attrs or {}).get("id") or f"id_{name}"
        return format_html(
            '<div class="attribute-rows" id="{}">{}'
            '<button type="button" class="button attribute-row-add" hidden>Add a filter</button>'
            "</div>",
            html_id,
            format_html_join(
                "",
                "{}",
                ((self._row(name, index, row, labels),) for index, row in enumerate(rows)),
            ),
        )

    def _row(self, name: str, index: int, row: tuple[str, str], labels: dict[str, str]) -> str:
        attribute, value = row
        choices = list(self.choices)
        if attribute and attribute not in labels:
            # A filter naming a deleted attribute matches nobody; it stays visible to be removed.
            choices.append((attribute, f"deleted attribute {attribute}"))
        options = format_html_join(
            "",
            '<option value="{}"{}>{}</option>',
            ((pid, " selected" if pid == attribute else "", key) for pid, key in choices),
        )
        return format_html(
            '<div class="attribute-row">'
            '<select name="{0}-{1}-attribute" aria-label="Attribute">'
            '<option value="">Attribute…</option>{2}</select>'
            '<span class="attribute-row-equals">=</span>'
            '<input type="text" name="{0}-{1}-value" value="{3}" maxlength="{4}" '
            'aria-label="Value" placeholder="value">'
            "</div>",
            name,
            index,
            options,
            value,
            VALUE_MAX_LENGTH,
        )


class AttributeRowsField(ParsedField):
    """Attribute filters as (attribute public id, value) rows; the form turns them into the
    admin API's [{"attributeId", "attributeValue"}]."""

    widget = AttributeRowsWidget

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{**kwargs, "required": False})  # no rows: no filters
        self.attribute_keys: dict[str, str] = {}

    def set_attributes(self, choices: list[tuple[str, str]]) -> None:
        """The tenant's attributes of this field's type, as (public id, key)."""
        self.attribute_keys = dict(choices)
        widget: Any = self.widget
        widget.choices = choices

    def _keys(self) -> dict[str, str]:
        return self.attribute_keys

    def prepare_value(self, value: Any) -> Any:
        return value

    def to_python(self, value: Any) -> Rows:
        rows = []
        for raw_attribute, raw_value in value or []:
            attribute, text = raw_attribute.strip(), raw_value.strip()
            if not attribute and not text:
                continue
            if not attribute:
                raise forms.ValidationError(f"Choose the attribute that must equal “{text}”.")
            if not text:
                name = self._keys().get(attribute, "the deleted attribute")
                raise forms.ValidationError(f"Enter the value {name} must have.")
            rows.append((attribute, text))
        return rows

    def validate(self, value: Rows) -> None:
        keys = self._keys()
        seen: set[str] = set()
        for attribute, text in value:
            if attribute not in keys:
                raise forms.ValidationError(
                    "A filter names an attribute that no longer exists: clear its row."
                )
            if attribute in seen:
                raise forms.ValidationError(
                    f"{keys[attribute]} is filtered twice: keep one row for it."
                )
            seen.add(attribute)
            if len(text) > VALUE_MAX_LENGTH:
                raise forms.ValidationError(
                    f"The value of {keys[attribute]} is longer than {VALUE_MAX_LENGTH} characters."
                )


class BadgeUrlWidget(forms.URLInput):
    """The URL input followed by the badge it points at; the page's script updates the preview
    as the URL is typed."""

    def __init__(self) -> None:
        super().__init__(
            attrs={
                "class": "vURLField",
                "placeholder": "https://example.com/badges/first-steps.png",
                "spellcheck": "false",
            }
        )

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        url = str(value or "")
        if url.startswith(("https://", "http://")):
            image = format_html('<img src="{}" alt="Badge preview">', url)
        else:
            # No src at all: an empty one would fetch this page again as an image.
            image = mark_safe('<img alt="Badge preview" hidden>')
        return format_html(
            '<div class="badge-field">{}<div class="badge-preview">{}</div></div>',
            super().render(name, value, attrs, renderer),
            image,
        )


class PrerequisitesWidget(FilteredSelectMultiple):
    """The admin's two-box selector. Its script puts the boxes first in the select's parent
    element, which for a plain form field is the row itself (before the label): a wrapper of its
    own keeps them in the input's place, as model fields get from the admin's related-widget
    wrapper."""

    def __init__(self) -> None:
        super().__init__("prerequisites", is_stacked=False)

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        return format_html(
            '<div class="related-widget-wrapper">{}</div>',
            super().render(name, value, attrs, renderer),
        )
