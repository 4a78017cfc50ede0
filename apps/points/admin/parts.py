"""A points system's triggers, levels and boosts as rows of the system's page: one formset of
part forms per kind, each changed row written by the configuration function the admin API's
item uses (their own pages are in part_pages)."""

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

from django import forms
from django.forms.formsets import DELETION_FIELD_NAME
from django.urls import reverse
from django.utils.text import capfirst

from apps.accounts.admin.config_pages import Line
from apps.core.errors import ApplicationError
from apps.points import configuration
from apps.points.admin.part_forms import BoostForm, LevelForm, PartChoices, PartForm
from apps.points.admin.trigger_form import TRIGGER_ROWS, TriggerForm
from apps.points.choices import TriggerType
from apps.points.domain import PointsBoostSettings, PointsLevelSettings, PointsTriggerSettings
from apps.points.models import PointsBoost, PointsLevel, PointsSystem, PointsTrigger


@dataclass(frozen=True)
class Kind:
    """One kind of part: its form, how the system's page lays out its rows, and its
    configuration functions (points_<label>_create, _update, _delete) as the admin API's
    collection calls them: given the kind's declaration, made of the form's arguments."""

    model: type[Any]
    form: type[PartForm]
    prefix: str
    label: str  # how the system's page names a row
    ordering: tuple[str, ...]
    rows: list[str | tuple[str, ...]]
    tabular: bool
    declaration: Any  # the settings the functions take (apps/points/domain.py)

    def _function(self, verb: str) -> Callable[..., Any]:
        function: Callable[..., Any] = getattr(configuration, f"points_{self.label}_{verb}")
        return function

    def _write(self, verb: str, *objects: Any, arguments: dict[str, Any]) -> Any:
        return self._function(verb)(*objects, self.declaration(**arguments))

    def create(self, tenant: Any, system: PointsSystem, **arguments: Any) -> Any:
        return self._write("create", tenant, system, arguments=arguments)

    def update(self, tenant: Any, part: Any, **arguments: Any) -> Any:
        return self._write("update", tenant, part, arguments=arguments)

    def delete(self, tenant: Any, part: Any) -> None:
        self._function("delete")(tenant, part)

    def change_url(self, part: Any) -> str:
        opts = self.model._meta
        return reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[part.pk])


TRIGGERS = Kind(
    PointsTrigger,
    TriggerForm,
    "triggers",
    "trigger",
    ("created", "pk"),
    TRIGGER_ROWS,
    False,
    declaration=PointsTriggerSettings,
)
LEVELS = Kind(
    PointsLevel,
    LevelForm,
    "levels",
    "level",
    ("points", "pk"),
    ["key", "name", "points", "description", "badge_url"],
    True,
    declaration=PointsLevelSettings,
)
BOOSTS = Kind(
    PointsBoost,
    BoostForm,
    "boosts",
    "boost",
    ("start", "pk"),
    [("name", "multiplier", "rounding"), ("start", "end"), "user_id", "user_attributes"],
    False,
    declaration=PointsBoostSettings,
)
KINDS = (TRIGGERS, LEVELS, BOOSTS)
KIND_OF: dict[type[Any], Kind] = {kind.model: kind for kind in KINDS}


def boost_audience(boost: PointsBoost) -> str:
    """Needs "user" loaded."""
    if boost.user is not None:
        return f"User {boost.user.external_id}"
    return "Users matching filters" if boost.user_attributes else "Everyone"


def trigger_condition(trigger: PointsTrigger) -> str:
    """Needs "metric" and "achievement" loaded."""
    if trigger.type == TriggerType.METRIC and trigger.metric is not None:
        return f"Every {trigger.metric_threshold} {trigger.metric.key}"
    if trigger.type == TriggerType.ACHIEVEMENT and trigger.achievement is not None:
        return f"Achievement {trigger.achievement.key or trigger.achievement.name}"
    if trigger.type == TriggerType.STREAK:
        return f"Every {trigger.streak_length} streak periods"
    if trigger.type == TriggerType.TIME:
        return f"Every {trigger.time_interval} {trigger.time_unit}"
    if trigger.type == TriggerType.USER_CREATION:
        return "When the user is created"
    return "-"


@dataclass(frozen=True)
class ShownRow:
    index: str  # "empty": the row "Add another" copies
    form: PartForm
    part: Any  # None: a new row
    change_url: str | None
    lines: list[Any]


def _line(form: PartForm, name: str | tuple[str, ...]) -> Any:
    if isinstance(name, str):
        return form[name]
    return Line([form[one] for one in name])


class RowRefused(ApplicationError):
    """A configuration function refused a row: the system's page shows it on the row."""

    def __init__(self, form: PartForm, refused: ApplicationError) -> None:
        super().__init__(refused.message)
        self.form, self.refused = form, refused


class PartRow(forms.Form):
    """What a row adds to its part's form: the stored part it shows (hidden)."""

    id = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def values(self, tenant: Any) -> dict[str, Any]:
        values: dict[str, Any] = super().values(tenant)  # type: ignore[misc]
        values.pop("id", None)
        return values


class PartRows(forms.BaseFormSet):
    """The rows of one kind of part on its system's page. Every row shares one set of choices
    (metrics, attributes) and knows its system, so rendering many rows costs no query per
    row. A stored row is found by its hidden id among the system's parts."""

    kind: Kind

    def __init__(
        self,
        *args: Any,
        system: PointsSystem,
        choices: PartChoices,
        editable: bool = True,
        **kwargs: Any,
    ) -> None:
        self.system, self.choices, self.editable = system, choices, editable
        queryset = self.kind.model.objects.filter(system=system).order_by(*self.kind.ordering)
        if self.kind.model is PointsBoost:
            queryset = queryset.select_related("user")
        self.parts = list(queryset)
        self.by_pk = {part.pk: part for part in self.parts}
        kwargs["prefix"] = self.kind.prefix
        super().__init__(*args, **kwargs)
        self.new_objects: list[Any] = []
        self.changed_objects: list[tuple[Any, list[str]]] = []
        self.deleted_objects: list[Any] = []
        if not editable:
            for form in self.forms:
                for field in form.fields.values():
                    field.disabled = True

    def initial_form_count(self) -> int:
        return super().initial_form_count() if self.is_bound else len(self.parts)

    def get_form_kwargs(self, index: int | None) -> dict[str, Any]:
        instance = None
        if index is not None and index < self.initial_form_count():
            if self.is_bound:
                posted = str(self.data.get(f"{self.prefix}-{index}-id", ""))
                # ASCII digits only, and short: int() refuses other digits ("²") and, past
                # 4,300 digits, any number.
                plain = posted.isascii() and posted.isdigit() and len(posted) <= 18
                instance = self.by_pk.get(int(posted)) if plain else None
            else:
                instance = self.parts[index]
        return {
            "tenant": self.system.tenant,
            "system": self.system,
            "choices": self.choices,
            "instance": instance,
            "initial": {"id": instance.pk} if instance is not None else {},
        }

    def clean(self) -> None:
        super().clean()
        seen: set[int] = set()
        for form in self.forms[: self.initial_form_count()]:
            if form.instance is None:  # not one of this system's parts (any more)
                raise forms.ValidationError("A row is no longer there: reload the page.")
            # A part posted twice would be deleted by one row and written back by the other.
            if form.instance.pk in seen:
                raise forms.ValidationError("A row appears twice: reload the page.")
            seen.add(form.instance.pk)

    # --- what the system's page shows (admin/points/pointssystem/form.html) ---------------------

    @property
    def kind_label(self) -> str:
        return capfirst(self.kind.label)

    @property
    def heading(self) -> str:
        return capfirst(self.kind.prefix)

    def inline_data(self) -> str:
        """The options of Django's admin/js/inlines.js ("Add another", "Remove")."""
        options = {
            "prefix": self.prefix,
            "addText": f"Add another {capfirst(self.kind.label)}",
            "deleteText": "Remove",
        }
        return json.dumps({"name": f"#{self.prefix}", "options": options})

    def shown(self) -> list[ShownRow]:
        """Each row with its inputs laid out in lines, then the empty row "Add another"
        copies (when rows may be added)."""
        entries = [(str(index), form) for index, form in enumerate(self.forms)]
        if self.editable:
            entries.append(("empty", self.empty_form))
        return [
            ShownRow(
                index,
                form,
                form.instance,
                None if form.instance is None else self.kind.change_url(form.instance),
                [_line(form, name) for name in self.kind.rows],
            )
            for index, form in entries
        ]

    def columns(self) -> list[Any]:
        """The inputs of a row, for the head of a table of rows."""
        form = self.empty_form
        return [form[name] for name in self.kind.rows if isinstance(name, str)]

    def has_changes(self) -> bool:
        return any(form.has_changed() for form in self.forms)

    def save(self) -> None:
        """Deletions, then changes, then additions (a level's key can move from a deleted row
        to a new one), each through its configuration function. Sets the lists Django's
        history entry reads."""
        kind, tenant = self.kind, self.system.tenant
        stored = self.forms[: self.initial_form_count()]
        for form in stored:
            if self._deleted(form):
                _run(form, partial(kind.delete, tenant, form.instance))
                self.deleted_objects.append(form.instance)
        for form in stored:
            if not self._deleted(form) and form.has_changed():
                _run(form, partial(kind.update, tenant, form.instance, **form.arguments))
                self.changed_objects.append((form.instance, form.changed_data))
        for form in self.forms[self.initial_form_count() :]:
            if form.has_changed():
                part = _run(form, partial(kind.create, tenant, self.system, **form.arguments))
                self.new_objects.append(part)

    def _deleted(self, form: Any) -> bool:
        return bool(self.can_delete and form.cleaned_data.get(DELETION_FIELD_NAME))


def _run(form: PartForm, work: Callable[[], Any]) -> Any:
    try:
        return work()
    except ApplicationError as exc:
        raise RowRefused(form, exc) from exc


def rows_of(kind: Kind) -> type[PartRows]:
    form = type(kind.form.__name__ + "Row", (PartRow, kind.form), {})
    base = type(kind.form.__name__ + "Rows", (PartRows,), {"kind": kind})
    rows: Any = forms.formset_factory(
        form, formset=base, extra=0, can_delete=True, can_delete_extra=False
    )
    return cast(type[PartRows], rows)


ROWS = {kind.prefix: rows_of(kind) for kind in KINDS}
