"""Form plumbing of the dashboard's configuration pages (imported through base.py).

A configuration page is a form whose inputs are the keyword arguments of a service
(`ServiceForm`): the form checks what staff typed, `service_kwargs` makes the call's arguments, and
the service checks the rest exactly as it does for the admin API. Neither the page nor the API
imitates the other: the limits both enforce are declared once (the apps' domain modules, the
settings) and each interface applies them in its own terms. A service's refusal names its fields
in Python's words (apps/core/errors.py): the page shows it next to the input that gives that
argument and writes each field as the input's label (`ServiceForm.refusal_add`).
"""

import re
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from django import forms
from django.core import validators
from django.forms.utils import pretty_name

from apps.accounts.models import Tenant
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


def refusing_control_characters(form: type[forms.ModelForm]) -> type[forms.ModelForm]:
    """The API's rule for display strings, in dashboard forms too: no control characters in a
    one-line input; text areas (descriptions, templates) may hold line breaks and tabs."""

    class Checked(form):  # type: ignore[valid-type,misc]
        def clean(self) -> dict[str, Any]:
            cleaned: dict[str, Any] = super().clean()
            for name, value in list(cleaned.items()):  # add_error removes the entry
                field = self.fields.get(name)
                if not isinstance(value, str) or field is None:
                    continue
                free_text = isinstance(field.widget, forms.Textarea)
                if (problem := control_characters_error(name, value, free_text)) is not None:
                    self.add_error(name, f"This field {problem}.")
            return cleaned

    Checked.__name__ = form.__name__
    return Checked


# --- limits in the admin API's words ---------------------------------------------------------


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


class ServiceForm(forms.ModelForm):
    """A configuration page whose inputs are a service's arguments (see the module docstring).

    Only the owner (a tenant, a points system) is a model field, and only when adding (see the
    pages' get_form): the rest is never copied onto the row by the form, so the model's own
    messages never replace the service's. Once every input is valid, `clean` makes the call's
    arguments (`service_kwargs`), then applies the limits of `rules` (form field -> checks) and
    the form's `check_rules`; `kwargs` then holds the arguments."""

    rules: ClassVar[dict[str, list[Rule]]] = {}
    create_only: ClassVar[tuple[str, ...]] = ("key",)
    # Form field -> the service's argument it gives, where the two are named apart (a choice of
    # metric gives `metric_id`); every other input is the argument of its own name.
    arguments: ClassVar[dict[str, str]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kwargs: dict[str, Any] = {}
        if self.instance.pk:
            for name in self.create_only:
                self.fields.pop(name, None)
            self.initial = {**self.initial_from(self.instance), **self.initial}

    def config_tenant(self) -> Tenant | None:
        """The tenant whose configuration the form edits (each form names its own)."""
        return getattr(self.instance, "tenant", None)

    def initial_from(self, obj: Any) -> dict[str, Any]:
        """The form's values for a stored object (forms override)."""
        return {}

    def input_of(self, argument: str) -> str | None:
        """The input that gives the service's argument `argument` (None: none on this page)."""
        for name, given in self.arguments.items():
            if given == argument and name in self.fields:
                return name
        return argument if argument in self.fields else None

    def label(self, argument: str) -> str:
        """How a message names the argument: the label of its input, quoted."""
        name = ServiceForm.input_of(self, argument)  # not a twin input a page may place it on
        if name is None:
            return argument.replace("_", " ")
        return f"“{self.fields[name].label or pretty_name(name)}”"

    def refusal_text(self, error: ApplicationError) -> str:
        return refusal_text(error, self.label)

    def inputs_named(self, error: ApplicationError) -> list[str]:
        """The inputs of this page that give the arguments `error` is about."""
        return [name for name in map(self.input_of, error.fields) if name is not None]

    def refusal_add(self, error: ApplicationError) -> None:
        """A service's (or a domain rule's) refusal next to the first input it names, on the
        form when it names none of this page's inputs. Next to its input, a message that opens
        with that input's name ("{achievement_ids}: ...", "{service_account}.token_uri ...")
        drops it."""
        inputs = self.inputs_named(error)
        target = inputs[0] if inputs else None
        text = self.refusal_text(error)
        if target is not None:
            opening = "{" + error.fields[0] + "}"
            rest = error.template.removeprefix(opening)
            if rest != error.template and rest.startswith(": "):
                text = sentence(text[len(self.label(error.fields[0])) + 2 :])
            elif rest != error.template and rest.startswith("."):
                text = text[len(self.label(error.fields[0])) + 1 :]
        self.add_error(target, text)

    def service_kwargs(self) -> dict[str, Any]:
        """The arguments of the service call, from valid input (forms implement)."""
        raise NotImplementedError

    def check_rules(self) -> None:
        """Checks across inputs that the page shares with the admin API (forms override; the
        arguments are in `kwargs`)."""

    def checks(self, name: str) -> bool:
        """Whether the input `name` is part of the call, so its limits apply (forms whose
        inputs are not all sent override)."""
        return name in self.fields

    def checked_value(self, name: str) -> Any:
        """What the call gets for the input `name` (a form that reads a value from elsewhere,
        such as an uploaded file, overrides)."""
        return self.cleaned_data.get(name)

    def clean(self) -> dict[str, Any]:
        super().clean()
        if self.errors or self.config_tenant() is None:
            return self.cleaned_data
        self.kwargs = self.service_kwargs()  # may refuse input too (an unknown attribute)
        for check in (self._check_text, self._check_limits, self.check_rules):
            if self.errors:
                break
            check()
        if self.errors:
            self.kwargs = {}
        return self.cleaned_data

    def _check_text(self) -> None:
        """No control characters in what the service stores as text, as the admin API refuses
        them (text areas, such as descriptions, may hold line breaks and tabs)."""
        for name, field in self.fields.items():
            value = self.checked_value(name)
            free_text = isinstance(field.widget, forms.Textarea)
            problem = (
                control_characters_error(name, value, free_text) if isinstance(value, str) else None
            )
            if problem is not None and self.checks(name) and not self.has_error(name):
                self.add_error(name, sentence(problem))

    def _check_limits(self) -> None:
        for name, rules in self.rules.items():
            value = self.checked_value(name)
            if not self.checks(name) or value in (None, ""):
                continue
            for rule in rules:
                try:
                    rule(value)
                except forms.ValidationError as exc:
                    for text in exc.messages:
                        self.add_error(name, sentence(text))
