"""The rules that configuration forms (`ConfigForm`, apps/accounts/admin/config_pages.py) apply
to their inputs, imported from here by every app's pages: keys, lengths, counts, ranges, URLs
and attribute values. The limits are those the domain declares for the admin API too (the
apps' domain modules, apps/core/api/fields.py); each interface applies them in its own terms,
and the service checks the rest exactly as it does for the admin API.
"""

import re
from collections.abc import Callable, Iterable
from typing import Any

from django import forms
from django.core import validators

from apps.core.api.fields import (
    KEY_PATTERN,
    KEY_RULE,
    MAX_ATTRIBUTE_VALUE,
    control_characters_error,
)
from apps.core.errors import ApplicationError

Rule = Callable[[Any], None]


def sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def refusal_text(error: ApplicationError, label: Callable[[str], str] | None = None) -> str:
    """A service's refusal for staff: each field it names written by `label` (by default its
    Python name in words, "achievement ids"), as a sentence."""
    return sentence(error.worded(label or (lambda field: field.replace("_", " "))))


def key_field(max_length: int) -> forms.RegexField:
    """Keys typed in the dashboard follow the same rule as keys sent to the admin API. ASCII:
    Python's \\d alone also matches other scripts' digits, such as Arabic-Indic ones."""
    return forms.RegexField(
        re.compile(KEY_PATTERN, re.ASCII),
        max_length=max_length,
        # A key with stray spaces is refused rather than silently trimmed into another key.
        strip=False,
        error_messages={"invalid": "must contain only letters, digits, - and _"},
    )


def text_rules(max_length: int) -> list[Rule]:
    return [
        validators.MaxLengthValidator(
            max_length, f"Ensure this field has no more than {max_length} characters."
        )
    ]


def items_rules(max_items: int) -> list[Rule]:
    return [
        validators.MaxLengthValidator(
            max_items, f"Ensure this field has no more than {max_items} elements."
        )
    ]


def attribute_value_problems(values: Iterable[str]) -> list[str | None]:
    """Each attribute filter value's problem (None: none), as the admin API finds it: control
    characters first and alone, then the length."""
    problems: list[str | None] = []
    for value in values:
        problem = control_characters_error("attributeValue", value)
        if problem is None and len(value) > MAX_ATTRIBUTE_VALUE:
            problem = f"Ensure this field has no more than {MAX_ATTRIBUTE_VALUE} characters."
        problems.append(problem)
    return problems


def url_problems(value: str, max_length: int = 2000) -> list[str]:
    """A URL's problems as the admin API finds them in a badge or logo ({"url"}): control
    characters first and alone, then the length and the form."""
    if (problem := control_characters_error("url", value)) is not None:
        return [problem]
    problems: list[str] = []
    rules: list[Rule] = [*text_rules(max_length), validators.URLValidator()]
    for rule in rules:
        try:
            rule(value)
        except forms.ValidationError as exc:
            problems += exc.messages
    return problems


def range_rules(lower: int | None, upper: int | None) -> list[Rule]:
    rules: list[Rule] = []
    if lower is not None:
        rules.append(validators.MinValueValidator(lower))
    if upper is not None:
        rules.append(validators.MaxValueValidator(upper))
    return rules


def key_rules() -> list[Rule]:
    """A configuration key (apps/core/api/fields.py key_field)."""
    return [*text_rules(100), validators.RegexValidator(re.compile(KEY_PATTERN), KEY_RULE)]


class ParsedField(forms.Field):
    """A field whose stored value and input differ in form (rows, lines of text): changed when
    the two parse differently, or when the input does not parse."""

    def has_changed(self, initial: Any, data: Any) -> bool:
        try:
            return bool(self.to_python(initial) != self.to_python(data))
        except forms.ValidationError:
            return True
