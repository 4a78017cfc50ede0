"""Inputs made of rows of (choice, value), such as attribute filters or streak conditions, with
buttons to add and remove rows (imported through base.py).

The page's script does the adding and removing (data-rows, data-add-row, data-remove-row) and
each kind's widget names it in its Media. Without JavaScript one blank row is always shown, so a
row can still be added per save (the script drops it and offers "Add" instead); the hidden
template row is disabled, so it is never sent."""

from typing import Any, ClassVar

from django import forms
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString


class RowsWidget(forms.Widget):
    """Each kind names its two inputs, its headings and its words, and renders its value input;
    the form sets `keys`, the choices offered (a stored choice no longer among them is kept, with
    `unknown` after it, so that staff see it and remove it)."""

    choice_name: ClassVar[str]  # the select is named <field name>-<choice_name>
    value_name: ClassVar[str]  # the value input <field name>-<value_name>
    choice_label: ClassVar[str]  # the choice column's heading and the select's label
    value_label: ClassVar[str]  # the value column's heading
    noun: ClassVar[str]  # one row: "Add a <noun>", "Remove this <noun>"
    unknown: ClassVar[str]  # "(deleted attribute)"

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs)
        self.keys: list[str] = []
        # How a key is named in the select, when the form knows better than the key itself:
        # names first, keys second ("Words (words)").
        self.labels: dict[str, str] = {}
        self.key_label = self.choice_label

    def empty_text(self) -> str:
        """What the field says instead when there is nothing to choose and no row."""
        raise NotImplementedError

    def value_input(self, name: str, value: str, disabled: str) -> SafeString:
        """The value input of one row, named <name>-<value_name>; `disabled` is its attribute."""
        raise NotImplementedError

    def value_from_datadict(self, data: Any, files: Any, name: str) -> list[tuple[str, str]]:
        choice, value = f"{name}-{self.choice_name}", f"{name}-{self.value_name}"
        if hasattr(data, "getlist"):
            keys, values = data.getlist(choice), data.getlist(value)
        else:
            keys, values = list(data.get(choice, [])), list(data.get(value, []))
        return list(zip(keys, values, strict=False))

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        return f"{name}-{self.choice_name}" not in data

    def _select(self, name: str, chosen: str, disabled: str) -> SafeString:
        options = [("", "---------"), *((key, self.labels.get(key, key)) for key in self.keys)]
        if chosen and chosen not in self.keys:
            options.append((chosen, f"{chosen} {self.unknown}"))
        return format_html(
            '<select name="{}-{}" aria-label="{}"{}>{}</select>',
            name,
            self.choice_name,
            self.key_label,
            disabled,
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
        disabled = " disabled" if template else ""
        return format_html(
            '<tr data-row{}><td>{}</td><td>{}</td><td><button type="button" class="rows-remove" '
            'data-remove-row title="Remove this {}">Remove</button></td></tr>',
            format_html(" {}{}", marker, " hidden" if template else "") if marker else "",
            self._select(name, key, disabled),
            self.value_input(name, value, disabled),
            self.noun,
        )

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        rows = [(str(k), str(v)) for k, v in value] if isinstance(value, list | tuple) else []
        rows = [(k, v) for k, v in rows if k or v]
        if not self.keys and not rows:
            return format_html('<p class="rows-empty">{}</p>', self.empty_text())
        return format_html(
            '<div class="rows" data-rows><table class="rows-table"><thead><tr><th>{}</th>'
            "<th>{}</th><th></th></tr></thead><tbody>{}{}{}</tbody></table>"
            '<button type="button" class="rows-add" data-add-row>Add a {}</button></div>',
            self.key_label,
            self.value_label,
            format_html_join("", "{}", ((self._row(name, k, v),) for k, v in rows)),
            self._row(name, "", "", "data-row-blank"),
            self._row(name, "", "", "data-row-template"),
            self.noun,
        )
