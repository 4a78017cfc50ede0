"""The selected tenant's streak settings: one page, written by streak_settings_update as the
admin API writes them. Changing the frequency restarts every streak, so it is confirmed first, with
the number of streaks that restart."""

from collections import defaultdict
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse

from apps.accounts.admin.config_pages import ConfigAdmin, Heading, Section
from apps.accounts.models import Tenant
from apps.accounts.staff import selected_tenant
from apps.streaks import configuration
from apps.streaks.admin.settings_form import StreakSettingsForm, _number
from apps.streaks.choices import Weekday
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
class StreakSettingsAdmin(ConfigAdmin):
    config_form = StreakSettingsForm
    list_display = (
        "frequency",
        "evaluation_mode",
        "customization_enabled",
        "days_off_column",
        "conditions_column",
        "freezes_column",
        "updated",
    )

    def form_sections(self, obj: StreakSettings | None) -> list[Section]:
        head: list[Section] = [] if obj is None else [(None, ["updated"])]
        return [
            *head,
            ("Streak", ["frequency", "conditions", "evaluation_mode", "days_off"]),
            (
                Heading("Freezes", classes="streak-freezes"),
                [
                    "freezes_enabled",
                    ("freeze_start_count", "freeze_max_count"),
                    ("freeze_auto_earn_interval", "freeze_auto_earn_amount"),
                ],
            ),
            ("Users", ["customization_enabled"]),
        ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # A tenant has one settings row; a configured tenant is edited, not added again.
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
                return HttpResponseRedirect(self.url("change", settings))
            if settings is None and self.has_add_permission(request):
                return HttpResponseRedirect(self.url("add"))
        return super().changelist_view(request, extra_context)

    # --- writes --------------------------------------------------------------------------------

    def create(self, request: HttpRequest, form: StreakSettingsForm) -> StreakSettings:
        configuration.streak_settings_update(form.valid_tenant, form.valid_settings)
        return StreakSettings.objects.get(tenant=form.valid_tenant)

    def update(self, request: HttpRequest, obj: StreakSettings, form: StreakSettingsForm) -> None:
        old = obj.frequency
        restarting = active_streaks(obj.tenant, old).count()
        configuration.streak_settings_update(obj.tenant, form.valid_settings)
        # The success message and the history name the settings as saved (new frequency).
        obj.refresh_from_db()
        if obj.frequency != old:
            self.message_user(
                request,
                f"Streaks are now {obj.frequency}: {restarting} active "
                f"streak{'s' if restarting != 1 else ''} restarted from 0.",
                messages.INFO,
            )

    def confirmation(
        self, request: HttpRequest, obj: StreakSettings | None, form: StreakSettingsForm
    ) -> HttpResponse | None:
        """A change of frequency restarts every streak: asked first, with the number of streaks
        that restart; confirming posts the same input again, with CONFIRM_FREQUENCY."""
        new = form.valid_settings.frequency
        if obj is None or CONFIRM_FREQUENCY in request.POST or new == obj.frequency:
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
            "change_url": self.url("change", obj),
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
        return ", ".join(Weekday(day).label[:3] for day in obj.days_off) or "-"

    @admin.display(description="Freezes")
    def freezes_column(self, obj: StreakSettings) -> str:
        if not obj.freezes_enabled:
            return "Off"
        label = f"Start {obj.freeze_start_count}, max {obj.freeze_max_count}"
        if obj.freeze_auto_earn_interval:
            label += f", +{obj.freeze_auto_earn_amount} every {obj.freeze_auto_earn_interval} d"
        return label
