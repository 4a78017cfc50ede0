"""A points system's levels, boosts and triggers as inline rows of the system's page, each row
written by the same configuration function as the admin API's item (their own pages are in
part_pages)."""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any, ClassVar, cast

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.forms.formsets import DELETION_FIELD_NAME
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest

from apps.accounts.admin.base import ServiceForm
from apps.accounts.models import Tenant
from apps.core.errors import ApplicationError
from apps.points import configuration, selectors
from apps.points.admin.part_forms import BoostForm, LevelForm, PartChoices
from apps.points.admin.trigger_form import TriggerForm
from apps.points.choices import SystemStatus, TriggerType
from apps.points.models import PointsBoost, PointsLevel, PointsSystem, PointsTrigger

# Set on the request when a configuration function refused an inline row: {form prefix: message}.
ROW_REFUSALS = "_points_row_refusals"


@dataclass(frozen=True)
class Writes:
    """The configuration functions of one kind of part, as the admin API's collection calls
    them: create(tenant, system, **arguments), update(tenant, part, **arguments),
    delete(tenant, part)."""

    create: Callable[..., Any]
    update: Callable[..., Any]
    delete: Callable[..., Any]


WRITES: dict[type, Writes] = {
    PointsLevel: Writes(
        configuration.points_level_create,
        configuration.points_level_update,
        configuration.points_level_delete,
    ),
    PointsBoost: Writes(
        configuration.points_boost_create,
        configuration.points_boost_update,
        configuration.points_boost_delete,
    ),
    PointsTrigger: Writes(
        configuration.points_trigger_create,
        configuration.points_trigger_update,
        configuration.points_trigger_delete,
    ),
}


def active_systems(tenant: Tenant | None) -> QuerySet[PointsSystem]:
    return selectors.points_systems_active(tenant).order_by("key")


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


class RowRefused(ApplicationError):
    """A configuration function refused an inline row: the system's page shows the message on
    the row (PointsSystemAdmin.refusal_keep), not on the system's form."""

    def __init__(self, prefix: str, refused: ApplicationError) -> None:
        super().__init__(refused.message)
        self.prefix = prefix
        self.refused = refused


class PartFormSet(BaseInlineFormSet):
    """The rows of one kind of part. Every row shares one set of choices (metrics, attributes)
    and knows its system, so rendering many rows costs no query per row."""

    refusals: ClassVar[dict[str, ApplicationError]] = {}

    @cached_property
    def part_choices(self) -> PartChoices:
        return PartChoices.of(self.instance.tenant)

    def get_form_kwargs(self, index: int | None) -> dict[str, Any]:
        kwargs = super().get_form_kwargs(index)
        kwargs.update(system=self.instance, choices=self.part_choices)
        if index is not None:
            kwargs["refusal"] = self.refusals.get(self.add_prefix(index))
        return kwargs

    def clean(self) -> None:
        super().clean()
        # A refused deletion: Django skips the errors of rows marked for deletion.
        for form in self.deleted_forms:
            refusal = getattr(form, "refusal", None)
            if refusal:
                raise forms.ValidationError(refusal)

    def save_through_services(self, tenant: Tenant) -> None:
        """Deletions, then changes, then additions (a level's key can move from a deleted row to
        a new one), each through its configuration function. Sets the lists Django's history
        entry reads, as `save()` would."""
        writes = WRITES[cast(type, self.model)]
        system = self.instance
        deleted: list[Any] = []
        changed: list[tuple[Any, list[str]]] = []
        created: list[Any] = []
        existing = [form for form in self.initial_forms if self._is_own(form)]
        for form in existing:
            if self._deleted(form):
                _run(form, partial(writes.delete, tenant, form.instance))
                deleted.append(form.instance)
        for form in existing:
            if not self._deleted(form) and form.has_changed():
                _run(form, partial(writes.update, tenant, form.instance, **_kwargs(form)))
                changed.append((form.instance, form.changed_data))
        for form in self.extra_forms:
            if form.has_changed() and not self._deleted(form):
                created.append(_run(form, partial(writes.create, tenant, system, **_kwargs(form))))
        self.new_objects, self.changed_objects, self.deleted_objects = created, changed, deleted

    def _deleted(self, form: Any) -> bool:
        return bool(self.can_delete and form.cleaned_data.get(DELETION_FIELD_NAME))

    def _is_own(self, form: Any) -> bool:
        # A row naming another system's part gets a fresh instance from Django: never written.
        return form.instance.pk is not None and form.instance.system_id == self.instance.pk


def _run(form: Any, work: Callable[[], Any]) -> Any:
    try:
        return work()
    except ApplicationError as exc:
        raise RowRefused(form.prefix, exc) from exc


class PartInline(admin.options.InlineModelAdmin):
    """Rows of the system's page. Saved by PointsSystemAdmin.save_related; an archived system
    shows tables instead (see PointsSystemAdmin)."""

    formset = PartFormSet
    extra = 0
    show_change_link = True

    def get_formset(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> Any:
        # Only the system is a model field: the rest is the configuration function's arguments,
        # never copied onto the row nor checked with the model's messages (see ServiceForm).
        # (An empty list would mean "no restriction" to the model validation.)
        kwargs["fields"] = ("system",)
        formset = cast(type[PartFormSet], super().get_formset(request, obj, **kwargs))
        formset.refusals = getattr(request, ROW_REFUSALS, {})
        return formset

    def _editable(self, obj: Any) -> bool:
        return obj is None or obj.status != SystemStatus.ARCHIVED

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._editable(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._editable(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._editable(obj) and super().has_delete_permission(request, obj)


class TriggerInline(PartInline, admin.StackedInline):
    model = PointsTrigger
    form = TriggerForm
    verbose_name = "trigger"
    verbose_name_plural = "triggers"
    ordering = ("created", "pk")
    fieldsets = (
        (
            None,
            {
                "fields": (
                    ("type", "status"),
                    "points",
                    ("metric", "metric_threshold"),
                    "event_attributes",
                    "achievement",
                    "streak_length",
                    ("time_interval", "time_unit"),
                    "user_attributes",
                    "block_if_out_of_points",
                )
            },
        ),
    )


class LevelInline(PartInline, admin.TabularInline):
    model = PointsLevel
    form = LevelForm
    verbose_name = "level"
    verbose_name_plural = "levels"
    ordering = ("points", "pk")
    fields = ("key", "name", "points", "description", "badge_url")


class BoostInline(PartInline, admin.StackedInline):
    model = PointsBoost
    form = BoostForm
    verbose_name = "boost"
    verbose_name_plural = "boosts"
    ordering = ("start", "pk")
    fieldsets = (
        (
            None,
            {
                "fields": (
                    ("name", "multiplier", "rounding"),
                    ("start", "end"),
                    "user_id",
                    "user_attributes",
                )
            },
        ),
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[PointsBoost]:
        return super().get_queryset(request).select_related("user")


def _kwargs(form: forms.ModelForm) -> dict[str, Any]:
    return cast(ServiceForm, form).kwargs
