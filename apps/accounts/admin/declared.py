"""Dashboard inputs derived from a resource's declaration (apps/core/declarations.py).

`declared_form(LeaderboardSettings)` is a `ConfigForm` with one input per setting of a plain
kind (text, key, number, flag, choice, date, time, URL, e-mail), labelled, explained, bounded
and offered the choices the declaration states. A page's form subclasses it for what is its
own: inputs of references and structures (which need the tenant's objects), wording of choices
for people, widgets. `ConfigForm.declared_settings()` turns the valid inputs back into the
declaration, which the page hands to the service.
"""

import re
from collections.abc import Mapping, Sequence
from typing import Any

from django import forms
from django.contrib.admin.widgets import AdminDateWidget, AdminTimeWidget
from django.core import validators
from django.core.exceptions import FieldDoesNotExist
from django.db import models

from apps.accounts.admin.config_pages import ConfigForm
from apps.accounts.admin.forms import Rule, sentence, text_rules
from apps.core.api.fields import KEY_PATTERN, KEY_RULE
from apps.core.declarations import Declaration, Kind, Setting, settings_of

# Kinds whose inputs a page makes itself (they need the tenant's objects or a shape of their own).
OWN_INPUTS = (Kind.REFERENCE, Kind.REFERENCES, Kind.STRUCTURE)


def _bounds_rule(setting: Setting) -> Rule:
    """The setting's range, read when checked (an operator's setting may bound it)."""

    def rule(value: Any) -> None:
        lower, upper = setting.bounds()
        if lower is not None:
            validators.MinValueValidator(lower)(value)
        if upper is not None:
            validators.MaxValueValidator(upper)(value)

    return rule


def _line(setting: Setting) -> forms.TextInput:
    """A one-line input that stops at the setting's length, as the browser tells it."""
    attrs = {"maxlength": str(setting.max_length)} if setting.max_length else {}
    return forms.TextInput(attrs=attrs)


def _number(setting: Setting) -> forms.NumberInput:
    """A number input with the setting's fixed bounds (one an operator sets is checked only on
    the server, where it is read)."""
    attrs = {
        attr: str(bound)
        for attr, bound in (("min", setting.min_value), ("max", setting.max_value))
        if isinstance(bound, int)
    }
    return forms.NumberInput(attrs=attrs)


def _choices(setting: Setting) -> list[tuple[str, str]]:
    members: Any = setting.choices or ()
    return [(m.value, getattr(m, "label", m.value)) for m in members]


def form_field(setting: Setting) -> forms.Field:
    """The input of one setting of a plain kind."""
    common: dict[str, Any] = {
        "label": setting.label,
        "help_text": setting.help,
        "required": setting.required,
    }
    kind = setting.kind
    if kind in (Kind.TEXT, Kind.URL):
        rules = text_rules(setting.max_length) if setting.max_length else []
        if kind == Kind.URL:
            rules.append(validators.URLValidator())
        widget = forms.Textarea(attrs={"rows": 2}) if setting.multiline else _line(setting)
        return forms.CharField(validators=rules, widget=widget, **common)
    if kind == Kind.KEY:
        key_rule = validators.RegexValidator(re.compile(KEY_PATTERN, re.ASCII), sentence(KEY_RULE))
        return forms.CharField(
            strip=False, validators=[*text_rules(100), key_rule], widget=_line(setting), **common
        )
    if kind == Kind.EMAIL:
        return forms.EmailField(max_length=setting.max_length, **common)
    if kind == Kind.INTEGER:
        return forms.IntegerField(
            validators=[_bounds_rule(setting)], widget=_number(setting), **common
        )
    if kind == Kind.DECIMAL:
        return forms.DecimalField(validators=[_bounds_rule(setting)], **common)
    if kind == Kind.FLAG:
        return forms.BooleanField(**{**common, "required": False})
    if kind == Kind.CHOICE:
        blank = [] if setting.required else [("", "---------")]
        return forms.TypedChoiceField(
            choices=[*blank, *_choices(setting)], empty_value=None, **common
        )
    if kind == Kind.CHOICES:
        return forms.MultipleChoiceField(
            choices=_choices(setting), widget=forms.CheckboxSelectMultiple, **common
        )
    if kind == Kind.DATE:
        return forms.DateField(widget=AdminDateWidget, **common)
    if kind == Kind.TIME:
        return forms.TimeField(widget=AdminTimeWidget(format="%H:%M"), **common)
    raise ValueError(f"{setting.name}: a {kind} setting has no derived input")


def own_input(
    declaration: type[Declaration], name: str, field_class: type[forms.Field], **kwargs: Any
) -> Any:
    """A page's own input for the setting `name` (a reference, a structure), with the label,
    help and requiredness the declaration states unless `kwargs` say otherwise."""
    setting = settings_of(declaration)[name]
    stated = {"label": setting.label, "help_text": setting.help, "required": setting.required}
    return field_class(**{**stated, **kwargs})


def declared_form(
    declaration: type[Declaration],
    *,
    model: type[models.Model] | None = None,
    skip: Sequence[str] = (),
    choices: Mapping[str, Sequence[tuple[Any, str]]] | None = None,
    widgets: Mapping[str, Any] | None = None,
    initial: Mapping[str, Any] | None = None,
) -> type[ConfigForm]:
    """A ConfigForm with an input per plain setting of `declaration` (not those in `skip`);
    with `model`, a new object's inputs start at the model's defaults. `choices` words a
    choice's values for people (in the page's order; a "" value is the empty choice), and
    `widgets` replaces an input's widget; `initial` states a new object's inputs besides the
    model's defaults."""
    fields: dict[str, Any] = {}
    for name, setting in settings_of(declaration).items():
        if setting.kind in OWN_INPUTS or name in skip:
            continue
        field = form_field(setting)
        if choices and name in choices:
            field.choices = list(choices[name])  # type: ignore[attr-defined]
        if widgets and name in widgets:
            widget = widgets[name]
            field.widget = widget() if isinstance(widget, type) else widget
            field.widget.choices = getattr(field, "choices", ())
        if model is not None:
            default = _model_default(model, name)
            if default is not None:
                field.initial = default
        if initial and name in initial:
            field.initial = initial[name]
        fields[name] = field
    attrs = {
        **fields,
        "declaration": declaration,
        "free_text": tuple(n for n, s in settings_of(declaration).items() if s.multiline),
        "__module__": __name__,
    }
    return type(f"{declaration.__name__}Form", (ConfigForm,), attrs)


def _model_default(model: type[models.Model], name: str) -> Any:
    try:
        field = model._meta.get_field(name)
    except FieldDoesNotExist:
        return None
    default = getattr(field, "default", models.NOT_PROVIDED)
    if default is models.NOT_PROVIDED or callable(default):
        return None
    return default
