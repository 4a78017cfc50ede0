"""The selected tenant's streak settings: one page, written by streak_settings_update as the
admin API writes them. Changing the frequency restarts every streak, so it is confirmed first, with
the number of streaks that restart."""

from collections import defaultdict
from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.db.models import QuerySet
from django.forms.models import ModelChoiceField
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from apps.accounts.admin.base import ServiceAdmin, selected_tenant
from apps.accounts.models import Tenant
from apps.streaks import configuration
from apps.streaks.admin.settings_form import DAY_NAMES, StreakSettingsForm, _number
from apps.streaks.models import StreakCondition, StreakSettings, StreakState

CONFIRM_FREQUENCY = "_confirm_frequency"
FREQUENCY_TEMPLATE = "admin/streaks/streaksettings/frequency_confirmation.html"


def active_streaks(tenant: Tenant, frequency: str) -> QuerySet[StreakState]:
    """Streaks longer than 0 kept for `frequency`: those a change of frequency restarts (a
    state kept for another frequency is 0 already, see selectors.state_of). Lengths are as
    stored, i.e. as of each user's last settlement (the freeze job settles missed periods)."""
    return StreakState.objects.filter(
        tenant=tenant, frequency=frequency, enabled=True, length__gt=0
    )


@admin.register(StreakSettings)
class StreakSettingsAdmin(ServiceAdmin):
    form = StreakSettingsForm
    list_display = (
        "frequency",
        "evaluation_mode",
        "customization_enabled",
        "days_off_column",
        "conditions_column",
        "freezes_column",
        "updated",
    )

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[tuple[Any, Any]]:
        head = ("tenant",) if obj is None else ("updated",)
        return [
            (None, {"fields": head}),
            (
                "Streak",
                {"fields": ("frequency", "conditions", "evaluation_mode", "days_off")},
            ),
            (
                "Freezes",
                {
                    "fields": (
                        "freezes_enabled",
                        ("freeze_start_count", "freeze_max_count"),
                        ("freeze_auto_earn_interval", "freeze_auto_earn_amount"),
                    ),
                    "classes": ("streak-freezes",),
                },
            ),
            ("Users", {"fields": ("customization_enabled",)}),
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        # Settings belong to their tenant for good; another tenant gets its own row.
        return () if obj is None else ("updated",)

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        # The admin would make every field of the fieldsets a model field of the form, which
        # then copies them onto the row and checks the row's constraints with the model's
        # messages. Only the tenant is the row's; the rest is the service's arguments.
        kwargs["fields"] = ("tenant",) if obj is None else ()
        form = super().get_form(request, obj, change, **kwargs)
        return type(form.__name__, (form,), {"page_tenant": selected_tenant(request)})

    def formfield_for_foreignkey(
        self, db_field: Any, request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField | None:
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if field is not None and field.queryset is not None and db_field.name == "tenant":
            # A tenant has one settings row; a configured tenant is edited, not added again.
            field.queryset = field.queryset.filter(streak_settings__isnull=True)
        return field

    def has_add_permission(self, request: HttpRequest) -> bool:
        tenant = selected_tenant(request)
        if tenant is not None and StreakSettings.objects.filter(tenant=tenant).exists():
            return False
        return super().has_add_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # No service deletes settings: a tenant turns streaks off by clearing the conditions.
        return False

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        # One tenant is shown at a time and it has one settings row: go straight to it.
        if request.method == "GET":
            settings = self.get_queryset(request).first()
            if settings is not None and self.has_view_or_change_permission(request, settings):
                return HttpResponseRedirect(
                    reverse("admin:streaks_streaksettings_change", args=[settings.pk])
                )
            if settings is None and self.has_add_permission(request):
                return HttpResponseRedirect(reverse("admin:streaks_streaksettings_add"))
        return super().changelist_view(request, extra_context)

    # Writes

    def _update(self, tenant: Tenant, form: forms.ModelForm) -> None:
        settings_form = cast(StreakSettingsForm, form)
        configuration.streak_settings_update(tenant, **settings_form.kwargs)

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> StreakSettings:
        tenant = form.cleaned_data["tenant"]
        self._update(tenant, form)
        return StreakSettings.objects.get(tenant=tenant)

    def service_update(
        self, request: HttpRequest, current: StreakSettings, form: forms.ModelForm
    ) -> None:
        self._update(current.tenant, form)

    def save_model(
        self, request: HttpRequest, obj: Any, form: forms.ModelForm, change: bool
    ) -> None:
        old = obj.frequency if change else None
        restarting = active_streaks(obj.tenant, old).count() if old else 0
        super().save_model(request, obj, form, change)
        # The success message and the history name the settings as saved (new frequency).
        obj.refresh_from_db()
        if old is not None and obj.frequency != old:
            self.message_user(
                request,
                f"Streaks are now {obj.frequency}: {restarting} active "
                f"streak{'s' if restarting != 1 else ''} restarted from 0.",
                messages.INFO,
            )

    # Confirming a change of frequency

    def change_confirmation(self, request: HttpRequest, object_id: str) -> HttpResponse | None:
        """The confirmation page when the valid input changes the frequency; None otherwise
        (Django's view then saves, or shows the errors, or refuses as usual)."""
        if CONFIRM_FREQUENCY in request.POST:
            return None
        obj = self.get_object(request, unquote(object_id))
        if obj is None or not self.has_change_permission(request, obj):
            return None
        form = self.get_form(request, obj, change=True)(request.POST, instance=obj)
        if not form.is_valid():
            return None
        new = cast(StreakSettingsForm, form).kwargs["frequency"]
        if new == obj.frequency:
            return None
        streaks = active_streaks(obj.tenant, obj.frequency)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": obj,
            "title": "Change the streak frequency?",
            "old": obj.frequency,
            "new": new,
            "restarting": streaks.count(),
            "longest": streaks.order_by("-length").values_list("length", flat=True).first(),
            "posted": [
                (name, value)
                for name, values in request.POST.lists()
                if name != "csrfmiddlewaretoken"
                for value in values
            ],
            "confirm_name": CONFIRM_FREQUENCY,
            "change_url": reverse("admin:streaks_streaksettings_change", args=[obj.pk]),
        }
        return TemplateResponse(request, FREQUENCY_TEMPLATE, context)

    # The list (reached with a URL only: the page opens the tenant's settings)

    def get_changelist_instance(self, request: HttpRequest) -> Any:
        changelist = super().get_changelist_instance(request)
        # Conditions hang off the tenant, not the settings row, so they cannot be prefetched:
        # one query loads those of the whole page.
        rows: list[Any] = list(changelist.result_list)
        conditions = (
            StreakCondition.objects.filter(tenant_id__in=[row.tenant_id for row in rows])
            .select_related("metric")
            .order_by("metric__key")
        )
        by_tenant: dict[int, list[str]] = defaultdict(list)
        for condition in conditions:
            by_tenant[condition.tenant_id].append(
                f"{condition.metric.key}:{_number(condition.threshold)}"
            )
        for row in rows:
            row.condition_labels = by_tenant[row.tenant_id]
        return changelist

    @admin.display(description="Conditions")
    def conditions_column(self, obj: Any) -> str:
        return ", ".join(getattr(obj, "condition_labels", ())) or "-"

    @admin.display(description="Days off")
    def days_off_column(self, obj: StreakSettings) -> str:
        return ", ".join(DAY_NAMES[day][:3] for day in obj.days_off) or "-"

    @admin.display(description="Freezes")
    def freezes_column(self, obj: StreakSettings) -> str:
        if not obj.freezes_enabled:
            return "Off"
        label = f"Start {obj.freeze_start_count}, max {obj.freeze_max_count}"
        if obj.freeze_auto_earn_interval:
            label += f", +{obj.freeze_auto_earn_amount} every {obj.freeze_auto_earn_interval} d"
        return label
