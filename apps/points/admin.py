"""Dashboard pages for points: systems and their levels, boosts and triggers (editable through
the configuration functions, with the admin API's validation), the award ledger and totals
(read-only), and the points section of the end-user page.

Levels, boosts and triggers have pages of their own rather than inlines on the system page: each
save is then one configuration call, refused as a whole with its message on the form, where an
inline formset would need one service call per row inside a save Django expects to succeed.
"""

from collections.abc import Callable, Iterator
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar, cast
from urllib.parse import urlencode

from django import forms
from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.forms.models import ModelChoiceField
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from rest_framework import serializers as drf
from rest_framework.settings import api_settings

from apps.accounts.admin.base import (
    TENANT_RELATED,
    ReadOnlyAdmin,
    ServiceAdmin,
    TenantColumnMixin,
    TenantFilter,
    tenant_label,
)
from apps.accounts.models import Tenant
from apps.achievements.models import Achievement
from apps.core.errors import ValidationError
from apps.metrics.models import Metric
from apps.points import configuration
from apps.points.choices import Rounding, SystemStatus, TimeUnit, TriggerStatus, TriggerType
from apps.points.models import (
    PointsAward,
    PointsBoost,
    PointsLevel,
    PointsSystem,
    PointsTotal,
    PointsTrigger,
)
from apps.points.serializers import (
    BoostCreateSerializer,
    BoostUpdateSerializer,
    LevelCreateSerializer,
    LevelUpdateSerializer,
    SystemCreateSerializer,
    SystemUpdateSerializer,
    TriggerCreateSerializer,
    TriggerUpdateSerializer,
)
from apps.users.admin import end_user_section, html_table
from apps.users.choices import AttributeType
from apps.users.models import EndUser
from apps.users.selectors import attribute_definitions

# The end-user page shows this many of the user's latest awards; the award list has the rest.
RECENT_AWARDS = 10

# Labels of levels, boosts and triggers name their system and its tenant: keys repeat across
# tenants.
SYSTEM_RELATED = f"system__{TENANT_RELATED}"


def _system_label(system: PointsSystem) -> str:
    return f"{system.key} ({tenant_label(system.tenant)})"


def _active_systems() -> QuerySet[PointsSystem]:
    # The admin API cannot reach an archived system's levels, boosts or triggers either.
    return (
        PointsSystem.objects.filter(status=SystemStatus.ACTIVE)
        .select_related(TENANT_RELATED)
        .order_by("tenant_id", "key")
    )


def _refuse_if_archived(system: PointsSystem) -> None:
    if system.status == SystemStatus.ARCHIVED:
        raise ValidationError(f"Points system {system.key} is archived")


def _link(obj: Any, text: Any) -> SafeString:
    opts = obj._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, text)


def _errors(detail: Any, prefix: str = "") -> Iterator[tuple[str | None, str]]:
    """DRF's error detail as (top-level API key, message) pairs; nested keys (a filter's
    attributeValue, the badge's url) stay in the message."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            if prefix:
                for _, message in _errors(value):
                    yield prefix, f"{key}: {message}"
            else:
                yield from _errors(value, str(key))
    elif isinstance(detail, list):
        for value in detail:
            yield from _errors(value, prefix)
    else:
        yield prefix or None, str(detail)


class AttributeFilterField(forms.CharField):
    """Attribute filters as staff type them, one `key:value` per line; the form turns keys into
    the attribute ids the admin API speaks."""

    widget = forms.Textarea(attrs={"rows": 2})

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(
            "help_text", "One filter per line, as key:value, e.g. “plan:pro”. Empty: everyone."
        )
        super().__init__(required=False, **kwargs)

    def to_python(self, value: Any) -> list[tuple[str, str]]:  # type: ignore[override]
        pairs = []
        for line in str(super().to_python(value)).splitlines():
            if not line.strip():
                continue
            # Keys cannot contain a colon, so the first one ends the key; values may hold more.
            key, sep, attribute_value = line.partition(":")
            if not sep:
                raise forms.ValidationError(f"“{line.strip()}”: write each filter as key:value")
            pairs.append((key.strip(), attribute_value.strip()))
        return pairs

    def has_changed(self, initial: Any, data: Any) -> bool:
        try:
            return bool(self.to_python(initial) != self.to_python(data))
        except forms.ValidationError:
            return True


def _filters_text(tenant: Tenant, refs: list[dict[str, str]], kind: str) -> str:
    keys = {
        pid: key
        for (t, key), pid in attribute_definitions(tenant).ids_by_type_key.items()
        if t == kind
    }
    # A deleted attribute shows as its id: the line no longer matches anyone and must go.
    return "\n".join(
        f"{keys.get(ref['attributeId'], ref['attributeId'])}:{ref['attributeValue']}"
        for ref in refs
    )


class ConfigForm(forms.ModelForm):
    """A configuration page as the body of the admin API's create or update call. Only the
    owner (tenant or system) is a model field, and only when adding (see the pages' get_form):
    the rest is validated by the API's serializer and written by a configuration function, never
    copied onto the row by the form, so the model's own messages never replace the API's."""

    create_serializer: ClassVar[type[drf.Serializer]]
    update_serializer: ClassVar[type[drf.Serializer]]
    # Form field -> admin API key, for the body and for placing the serializer's errors.
    api_keys: ClassVar[dict[str, str]]
    create_only: ClassVar[tuple[str, ...]] = ("key",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.api_data: dict[str, Any] = {}
        if self.instance.pk:
            for name in self.create_only:
                self.fields.pop(name, None)
            self.initial = {**self.initial_from(self.instance), **self.initial}

    def config_tenant(self) -> Tenant | None:
        """The tenant whose configuration the form edits (each form names its own)."""
        return getattr(self.instance, "tenant", None)

    def initial_from(self, obj: Any) -> dict[str, Any]:
        """Form values for an existing object in the admin API's terms (forms override)."""
        return {}

    def body(self, cleaned: dict[str, Any], tenant: Tenant) -> dict[str, Any]:
        return {key: cleaned[name] for name, key in self.api_keys.items() if name in self.fields}

    def attribute_refs(self, name: str, tenant: Tenant, kind: str) -> list[dict[str, str]]:
        ids = attribute_definitions(tenant).ids_by_type_key
        pairs = self.cleaned_data[name]
        unknown = sorted({key for key, _ in pairs if (kind, key) not in ids})
        if unknown:
            self.add_error(name, f"unknown {kind} attribute keys: {', '.join(unknown)}")
        return [
            {"attributeId": ids[(kind, key)], "attributeValue": value}
            for key, value in pairs
            if (kind, key) in ids
        ]

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        tenant = self.config_tenant()
        if self.errors or tenant is None:
            return cleaned
        body = self.body(cleaned, tenant)
        if self.errors:
            return cleaned
        if self.instance.pk:
            public_id = str(getattr(self.instance, "public_id", ""))
            serializer = self.update_serializer(data={"id": public_id, **body})
        else:
            serializer = self.create_serializer(data=body)
        if serializer.is_valid():
            self.api_data = dict(serializer.validated_data)
            return cleaned
        fields = {key: name for name, key in self.api_keys.items() if name in self.fields}
        for key, message in _errors(serializer.errors):
            if key in fields:
                self.add_error(fields[key], message)
            elif key in (None, api_settings.NON_FIELD_ERRORS_KEY):
                self.add_error(None, message)
            else:
                self.add_error(None, f"{key}: {message}")
        return cleaned


def _badge(url: str) -> dict[str, str] | None:
    return {"url": url} if url else None


class SystemForm(ConfigForm):
    name = forms.CharField()
    key = forms.CharField(strip=False, help_text="How the API names the system; set for good.")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    badge_url = forms.CharField(required=False, label="badge URL")
    max_points = forms.IntegerField(required=False, help_text="Empty: no maximum.")

    create_serializer = SystemCreateSerializer
    update_serializer = SystemUpdateSerializer
    api_keys = {
        "name": "name",
        "key": "key",
        "description": "description",
        "badge_url": "badge",
        "max_points": "maxPoints",
    }

    class Meta:
        model = PointsSystem
        fields = ("tenant",)

    def config_tenant(self) -> Tenant | None:
        return self.instance.tenant if self.instance.pk else self.cleaned_data.get("tenant")

    def initial_from(self, obj: PointsSystem) -> dict[str, Any]:
        return {
            "name": obj.name,
            "description": obj.description,
            "badge_url": obj.badge_url or "",
            "max_points": obj.max_points,
        }

    def body(self, cleaned: dict[str, Any], tenant: Tenant) -> dict[str, Any]:
        return {**super().body(cleaned, tenant), "badge": _badge(cleaned["badge_url"])}


class SystemPartForm(ConfigForm):
    """Levels, boosts and triggers: the system is chosen when adding and kept for good."""

    def config_tenant(self) -> Tenant | None:
        if self.instance.pk:
            return self.instance.system.tenant
        system = self.cleaned_data.get("system")
        return system.tenant if system is not None else None


class LevelForm(SystemPartForm):
    name = forms.CharField()
    key = forms.CharField(strip=False, help_text="How the API names the level; set for good.")
    points = forms.IntegerField(help_text="Users with at least this many points reach the level.")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    badge_url = forms.CharField(required=False, label="badge URL")

    create_serializer = LevelCreateSerializer
    update_serializer = LevelUpdateSerializer
    api_keys = {
        "name": "name",
        "key": "key",
        "points": "points",
        "description": "description",
        "badge_url": "badge",
    }

    class Meta:
        model = PointsLevel
        fields = ("system",)

    def initial_from(self, obj: PointsLevel) -> dict[str, Any]:
        return {
            "name": obj.name,
            "points": obj.points,
            "description": obj.description,
            "badge_url": obj.badge_url or "",
        }

    def body(self, cleaned: dict[str, Any], tenant: Tenant) -> dict[str, Any]:
        return {**super().body(cleaned, tenant), "badge": _badge(cleaned["badge_url"])}


class BoostForm(SystemPartForm):
    name = forms.CharField()
    start = forms.DateField()
    end = forms.DateField(required=False, help_text="Inclusive. Empty: no end.")
    # Unbounded here: the serializer's range is the rule, and its message names it.
    multiplier = forms.DecimalField()
    rounding = forms.ChoiceField(choices=Rounding.choices, initial=Rounding.DOWN)
    user_id = forms.CharField(
        required=False,
        label="user id",
        help_text="A boost for this end-user only; set for good. Empty: everyone who matches "
        "the attribute filters.",
    )
    user_attributes = AttributeFilterField()

    create_serializer = BoostCreateSerializer
    update_serializer = BoostUpdateSerializer
    api_keys = {
        "name": "name",
        "start": "start",
        "end": "end",
        "multiplier": "multiplier",
        "rounding": "rounding",
        "user_id": "userId",
        "user_attributes": "userAttributes",
    }
    create_only = ("user_id",)

    class Meta:
        model = PointsBoost
        fields = ("system",)

    def initial_from(self, obj: PointsBoost) -> dict[str, Any]:
        return {
            "name": obj.name,
            "start": obj.start,
            "end": obj.end,
            "multiplier": obj.multiplier.normalize(),
            "rounding": obj.rounding,
            "user_attributes": _filters_text(
                obj.system.tenant, obj.user_attributes, AttributeType.USER
            ),
        }

    def body(self, cleaned: dict[str, Any], tenant: Tenant) -> dict[str, Any]:
        body = super().body(cleaned, tenant)
        if "userId" in body:
            body["userId"] = body["userId"] or None
        body["userAttributes"] = self.attribute_refs("user_attributes", tenant, AttributeType.USER)
        return body


class TriggerForm(SystemPartForm):
    type = forms.ChoiceField(
        choices=TriggerType.choices,
        help_text="Only the fields of this type are saved. The type of an active trigger "
        "cannot change: deactivate it first.",
    )
    points = forms.IntegerField(help_text="Negative: a deduction.")
    status = forms.ChoiceField(choices=TriggerStatus.choices, initial=TriggerStatus.ACTIVE)
    user_attributes = AttributeFilterField()
    block_if_out_of_points = forms.BooleanField(
        required=False, help_text="Deductions only: refuse the event rather than go below 0."
    )
    metric = forms.ModelChoiceField(queryset=Metric.objects.none(), required=False)
    metric_threshold = forms.IntegerField(required=False, help_text="Paid at every multiple.")
    event_attributes = AttributeFilterField(help_text="One filter per line, as key:value.")
    achievement = forms.ModelChoiceField(queryset=Achievement.objects.none(), required=False)
    streak_length = forms.IntegerField(required=False, help_text="Paid at every multiple.")
    time_unit = forms.TypedChoiceField(
        choices=[("", "---------"), *TimeUnit.choices], required=False, empty_value=None
    )
    time_interval = forms.IntegerField(required=False)

    create_serializer = TriggerCreateSerializer
    update_serializer = TriggerUpdateSerializer
    api_keys = {
        "type": "type",
        "points": "points",
        "status": "status",
        "user_attributes": "userAttributes",
        "block_if_out_of_points": "blockIfOutOfPoints",
        "metric": "metricId",
        "metric_threshold": "metricThreshold",
        "event_attributes": "eventAttributes",
        "achievement": "achievementId",
        "streak_length": "streakLength",
        "time_unit": "timeUnit",
        "time_interval": "timeInterval",
    }
    create_only = ()

    class Meta:
        model = PointsTrigger
        fields = ("system",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        metrics = Metric.objects.select_related(TENANT_RELATED).order_by("tenant_id", "key")
        achievements = Achievement.objects.select_related(TENANT_RELATED).order_by(
            "tenant_id", "name"
        )
        if self.instance.pk:
            tenant = self.instance.system.tenant
            metrics, achievements = (
                metrics.filter(tenant=tenant),
                achievements.filter(tenant=tenant),
            )
        metric_field: Any = self.fields["metric"]
        metric_field.queryset = metrics
        metric_field.label_from_instance = lambda m: f"{m.key} ({tenant_label(m.tenant)})"
        achievement_field: Any = self.fields["achievement"]
        achievement_field.queryset = achievements
        achievement_field.label_from_instance = lambda a: (
            f"{a.key or a.name} ({tenant_label(a.tenant)})"
        )

    def initial_from(self, obj: PointsTrigger) -> dict[str, Any]:
        tenant = obj.system.tenant
        return {
            "type": obj.type,
            "points": obj.points,
            "status": obj.status,
            "user_attributes": _filters_text(tenant, obj.user_attributes, AttributeType.USER),
            "block_if_out_of_points": obj.block_if_out_of_points,
            "metric": obj.metric_id,
            "metric_threshold": obj.metric_threshold,
            "event_attributes": _filters_text(tenant, obj.event_attributes, AttributeType.EVENT),
            "achievement": obj.achievement_id,
            "streak_length": obj.streak_length,
            "time_unit": obj.time_unit,
            "time_interval": obj.time_interval,
        }

    def body(self, cleaned: dict[str, Any], tenant: Tenant) -> dict[str, Any]:
        body = super().body(cleaned, tenant)
        for name in ("metric", "achievement"):
            chosen = cleaned[name]
            if chosen is not None and chosen.tenant_id != tenant.pk:
                self.add_error(name, "belongs to another tenant than the points system")
        body["userAttributes"] = self.attribute_refs("user_attributes", tenant, AttributeType.USER)
        body["eventAttributes"] = self.attribute_refs(
            "event_attributes", tenant, AttributeType.EVENT
        )
        for key in ("metricId", "achievementId"):
            body[key] = str(body[key].public_id) if body[key] is not None else None
        # The form shows every type's fields; what is left in another type's fields after
        # switching type is not part of the trigger (the API would refuse it).
        own = configuration.TRIGGER_FIELDS[TriggerType(cleaned["type"])]
        other = {f for fields in configuration.TRIGGER_FIELDS.values() for f in fields} - set(own)
        return {key: value for key, value in body.items() if key not in other}


class SystemFilter(admin.RelatedFieldListFilter):
    """System keys repeat across tenants, so each choice names its tenant; one query."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> list:
        systems = PointsSystem.objects.select_related(TENANT_RELATED).order_by("tenant_id", "key")
        return [(s.pk, _system_label(s)) for s in systems]


@admin.register(PointsSystem)
class PointsSystemAdmin(TenantColumnMixin, ServiceAdmin):
    form = SystemForm
    list_display = ("key", "name", "status", "max_points", "tenant_column", "created")
    list_select_related = (TENANT_RELATED,)
    list_filter = ("status", ("tenant", TenantFilter))
    search_fields = ("key", "name")

    def get_queryset(self, request: HttpRequest) -> QuerySet[PointsSystem]:
        return super().get_queryset(request).select_related(TENANT_RELATED)

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[tuple[Any, Any]]:
        settings = ("name", "description", "badge_url", "max_points")
        if obj is None:
            return [(None, {"fields": ("tenant", "key", *settings)})]
        return [
            (
                None,
                {
                    "fields": ("tenant_column", "key", "status", "public_id", "created"),
                    "description": "Deleting a system archives it: it stops awarding and "
                    "leaves the API, and its ledger is kept.",
                },
            ),
            ("Settings", {"fields": settings}),
            ("Levels", {"fields": ("levels_table",)}),
            ("Boosts", {"fields": ("boosts_table",)}),
            ("Triggers", {"fields": ("triggers_table",)}),
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        if obj is None:
            return ()
        return (
            "tenant_column",
            "key",
            "status",
            "public_id",
            "created",
            "levels_table",
            "boosts_table",
            "triggers_table",
        )

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        kwargs["fields"] = ("tenant",) if obj is None else ()
        return super().get_form(request, obj, change, **kwargs)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.status == SystemStatus.ARCHIVED:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.status == SystemStatus.ARCHIVED:
            return False
        return super().has_delete_permission(request, obj)

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> PointsSystem:
        system, _ = configuration.system_create(form.cleaned_data["tenant"], _api_data(form))
        return system

    def service_update(
        self, request: HttpRequest, current: PointsSystem, form: forms.ModelForm
    ) -> None:
        configuration.system_update(current.tenant, current, _api_data(form))

    def service_delete(self, request: HttpRequest, obj: PointsSystem) -> None:
        # An archived system in a bulk selection is already where deleting would take it.
        if obj.status != SystemStatus.ARCHIVED:
            configuration.system_archive(obj.tenant, obj)

    def _part_table(
        self,
        model: type[models.Model],
        obj: PointsSystem,
        headers: tuple[str, ...],
        rows: list[tuple],
    ) -> SafeString:
        opts = model._meta
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_add")
        return format_html(
            '{}<p><a href="{}?{}">Add a {}</a></p>',
            html_table(headers, rows),
            url,
            urlencode({"system": obj.pk}),
            opts.verbose_name,
        )

    @admin.display(description="levels")
    def levels_table(self, obj: PointsSystem) -> SafeString:
        levels = obj.levels.order_by("points", "pk")
        rows = [(_link(lv, lv.key), lv.name, lv.points) for lv in levels]
        return self._part_table(PointsLevel, obj, ("key", "name", "points"), rows)

    @admin.display(description="boosts")
    def boosts_table(self, obj: PointsSystem) -> SafeString:
        boosts = obj.boosts.select_related("user").order_by("start", "pk")
        rows = [
            (_link(b, b.name), b.multiplier, b.start, b.end, _boost_audience(b)) for b in boosts
        ]
        headers = ("name", "multiplier", "start", "end", "for")
        return self._part_table(PointsBoost, obj, headers, rows)

    @admin.display(description="triggers")
    def triggers_table(self, obj: PointsSystem) -> SafeString:
        triggers = obj.triggers.select_related("metric", "achievement").order_by("created", "pk")
        rows = [(_link(t, t.type), t.points, t.status, _trigger_condition(t)) for t in triggers]
        return self._part_table(PointsTrigger, obj, ("type", "points", "status", "when"), rows)


def _boost_audience(boost: PointsBoost) -> str:
    """Needs "user" loaded."""
    if boost.user is not None:
        return f"user {boost.user.external_id}"
    return "users matching filters" if boost.user_attributes else "everyone"


def _trigger_condition(trigger: PointsTrigger) -> str:
    """Needs "metric" and "achievement" loaded."""
    if trigger.type == TriggerType.METRIC and trigger.metric is not None:
        return f"every {trigger.metric_threshold} {trigger.metric.key}"
    if trigger.type == TriggerType.ACHIEVEMENT and trigger.achievement is not None:
        return f"achievement {trigger.achievement.key or trigger.achievement.name}"
    if trigger.type == TriggerType.STREAK:
        return f"every {trigger.streak_length} streak periods"
    if trigger.type == TriggerType.TIME:
        return f"every {trigger.time_interval} {trigger.time_unit}"
    if trigger.type == TriggerType.USER_CREATION:
        return "when the user is created"
    return "-"


class SystemPartAdmin(ServiceAdmin):
    """Levels, boosts and triggers: written by the configuration functions of their system's
    tenant; parts of an archived system are read-only, as the admin API no longer reaches them."""

    tenant_lookup = "system__tenant"

    list_select_related: ClassVar[tuple[str, ...]] = (SYSTEM_RELATED,)
    list_filter: ClassVar[tuple[Any, ...]] = (("system", SystemFilter),)
    head: ClassVar[tuple[str, ...]] = ("system_column", "public_id")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).select_related(SYSTEM_RELATED)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return () if obj is None else self.head

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        kwargs["fields"] = ("system",) if obj is None else ()
        return super().get_form(request, obj, change, **kwargs)

    def formfield_for_foreignkey(
        self, db_field: Any, request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField | None:
        if db_field.name == "system":
            kwargs["queryset"] = _active_systems()
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if field is not None and db_field.name == "system":
            field.label_from_instance = _system_label  # type: ignore[assignment]
        return field

    # (create, update, delete): the configuration functions of this part.
    writes: ClassVar[tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]]

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> Any:
        system = form.cleaned_data["system"]
        return self.writes[0](system.tenant, system, _api_data(form))

    def service_update(self, request: HttpRequest, current: Any, form: forms.ModelForm) -> None:
        _refuse_if_archived(current.system)
        self.writes[1](current.system.tenant, current, _api_data(form))

    def service_delete(self, request: HttpRequest, obj: Any) -> None:
        _refuse_if_archived(obj.system)
        self.writes[2](obj.system.tenant, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.system.status == SystemStatus.ARCHIVED:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.system.status == SystemStatus.ARCHIVED:
            return False
        return super().has_delete_permission(request, obj)

    @admin.display(description="points system", ordering="system__key")
    def system_column(self, obj: Any) -> str:
        return _system_label(obj.system)


@admin.register(PointsLevel)
class PointsLevelAdmin(SystemPartAdmin):
    form = LevelForm
    list_display = ("key", "name", "points", "system_column")
    search_fields = ("key", "name")
    ordering = ("system_id", "points", "pk")

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        settings = ("name", "points", "description", "badge_url")
        if obj is None:
            return ("system", "key", *settings)
        return (*self.head, "key", *settings)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return () if obj is None else (*self.head, "key")

    writes = (configuration.level_create, configuration.level_update, configuration.level_delete)


@admin.register(PointsBoost)
class PointsBoostAdmin(SystemPartAdmin):
    form = BoostForm
    list_display = ("name", "multiplier", "rounding", "start", "end", "audience", "system_column")
    list_select_related = (SYSTEM_RELATED, "user")
    search_fields = ("name",)
    ordering = ("-start", "-pk")

    def get_queryset(self, request: HttpRequest) -> QuerySet[PointsBoost]:
        return super().get_queryset(request).select_related("user")

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        settings = ("name", "start", "end", "multiplier", "rounding")
        if obj is None:
            return ("system", *settings, "user_id", "user_attributes")
        return (*self.head, *settings, "audience", "user_attributes")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return () if obj is None else (*self.head, "audience")

    @admin.display(description="for")
    def audience(self, obj: PointsBoost) -> str:
        return _boost_audience(obj)

    writes = (configuration.boost_create, configuration.boost_update, configuration.boost_delete)


@admin.register(PointsTrigger)
class PointsTriggerAdmin(SystemPartAdmin):
    form = TriggerForm
    list_display = ("type", "points", "status", "condition", "system_column", "created")
    list_select_related = (SYSTEM_RELATED, "metric", "achievement")
    list_filter = ("type", "status", ("system", SystemFilter))
    ordering = ("-pk",)
    head = ("system_column", "public_id", "created", "updated")

    def get_queryset(self, request: HttpRequest) -> QuerySet[PointsTrigger]:
        return super().get_queryset(request).select_related("metric", "achievement")

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[tuple[Any, Any]]:
        return [
            (None, {"fields": ("system",) if obj is None else self.head}),
            (
                "Trigger",
                {"fields": ("type", "points", "status", "user_attributes")},
            ),
            ("Metric triggers", {"fields": ("metric", "metric_threshold", "event_attributes")}),
            ("Achievement triggers", {"fields": ("achievement",)}),
            ("Streak triggers", {"fields": ("streak_length",)}),
            ("Time triggers", {"fields": ("time_unit", "time_interval")}),
            ("Deductions", {"fields": ("block_if_out_of_points",)}),
        ]

    @admin.display(description="when")
    def condition(self, obj: PointsTrigger) -> str:
        return _trigger_condition(obj)

    writes = (
        configuration.trigger_create,
        configuration.trigger_update,
        configuration.trigger_delete,
    )


def _api_data(form: forms.ModelForm) -> dict[str, Any]:
    return cast(ConfigForm, form).api_data


# --- the ledger -----------------------------------------------------------------------------


class LedgerColumnsMixin:
    """Needs "user" and "system" in list_select_related."""

    @admin.display(description="user", ordering="user__external_id")
    def user_link(self, obj: Any) -> SafeString:
        return _link(obj.user, obj.user.external_id)

    @admin.display(description="points system", ordering="system__key")
    def system_key(self, obj: Any) -> str:
        if obj.system.status == SystemStatus.ARCHIVED:
            return f"{obj.system.key} (archived)"
        return str(obj.system.key)


def _trigger_type(award: PointsAward) -> str:
    # The snapshot, not the trigger: a deleted trigger's awards keep what it was.
    return str((award.trigger_snapshot or {}).get("type", "-"))


def _multiplier(value: Any) -> str:
    # Multipliers are kept as JSON numbers: 2.0 reads as 2.
    try:
        return format(Decimal(str(value)).normalize(), "f")
    except InvalidOperation:
        return str(value)


def _boosts(award: PointsAward) -> str:
    return (
        ", ".join(f"{b.get('name')} x{_multiplier(b.get('multiplier'))}" for b in award.boosts)
        or "-"
    )


@admin.register(PointsAward)
class PointsAwardAdmin(LedgerColumnsMixin, TenantColumnMixin, ReadOnlyAdmin):
    list_display = (
        "created",
        "user_link",
        "system_key",
        "awarded",
        "total_after",
        "trigger_type",
        "boosts_column",
        "tenant_column",
    )
    list_select_related = ("user", "system", TENANT_RELATED)
    list_filter = (
        ("system", SystemFilter),
        ("created", admin.DateFieldListFilter),
        ("tenant", TenantFilter),
    )
    search_fields = ("=user__external_id",)
    search_help_text = "Search by exact end-user id."
    # Awards are inserted as they are paid, so the primary key follows time and its index
    # serves the newest-first list without sorting the whole ledger.
    ordering = ("-pk",)
    show_full_result_count = False
    fields = (
        "public_id",
        "tenant_column",
        "user_link",
        "system_key",
        "awarded",
        "total_after",
        "trigger_type",
        "boosts_column",
        "created",
        "local_date",
        "dedupe_key",
        "trigger_snapshot",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[PointsAward]:
        return super().get_queryset(request).select_related("user", "system", TENANT_RELATED)

    @admin.display(description="trigger type")
    def trigger_type(self, obj: PointsAward) -> str:
        return _trigger_type(obj)

    @admin.display(description="boosts")
    def boosts_column(self, obj: PointsAward) -> str:
        return _boosts(obj)


@admin.register(PointsTotal)
class PointsTotalAdmin(LedgerColumnsMixin, TenantColumnMixin, ReadOnlyAdmin):
    list_display = ("user_link", "system_key", "total", "level_column", "tenant_column")
    # The user column links to the end-user; the total opens the row.
    list_display_links = ("total",)
    list_select_related = ("user", "system", "level", TENANT_RELATED)
    list_filter = (("system", SystemFilter), ("tenant", TenantFilter))
    search_fields = ("=user__external_id",)
    search_help_text = "Search by exact end-user id."
    ordering = ("-pk",)
    show_full_result_count = False
    fields = (
        "tenant_column",
        "user_link",
        "system_key",
        "total",
        "level_column",
        "first_activity_at",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[PointsTotal]:
        return (
            super().get_queryset(request).select_related("user", "system", "level", TENANT_RELATED)
        )

    @admin.display(description="level", ordering="level__points")
    def level_column(self, obj: PointsTotal) -> str:
        return f"{obj.level.key} ({obj.level.name})" if obj.level is not None else "-"


@end_user_section
@admin.display(description="points")
def end_user_points(user: EndUser) -> SafeString:
    """The user's total in each system, then their latest awards: two queries."""
    totals = (
        PointsTotal.objects.filter(user=user)
        .select_related("system", "level")
        .order_by("system__key")
    )
    totals_table = html_table(
        ("points system", "name", "total", "level"),
        [
            (
                _link(t, t.system.key),
                t.system.name,
                t.total,
                t.level.name if t.level is not None else None,
            )
            for t in totals
        ],
    )
    awards = (
        PointsAward.objects.filter(user=user)
        .select_related("system")
        .order_by("-created", "-pk")[:RECENT_AWARDS]
    )
    awards_table = html_table(
        ("date", "points system", "awarded", "total after", "trigger type", "boosts"),
        [
            (a.created, a.system.key, a.awarded, a.total_after, _trigger_type(a), _boosts(a))
            for a in awards
        ],
    )
    url = reverse("admin:points_pointsaward_changelist") + "?" + urlencode({"user": user.pk})
    return format_html(
        '{}<p>Last {} awards, newest first:</p>{}<p><a href="{}">All awards of this user</a></p>',
        totals_table,
        RECENT_AWARDS,
        awards_table,
        url,
    )
