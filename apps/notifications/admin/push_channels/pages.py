"""The push channel pages: the list with its flag filter and action, and the change page,
whose writes go through the push services."""

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.decorators import method_decorator
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.views.decorators.debug import sensitive_post_parameters

from apps.accounts.admin.base import TENANT_RELATED, TenantColumnMixin, TenantFilter
from apps.accounts.admin.config_pages import ConfigAdmin, Heading, Section
from apps.core.wording import counted
from apps.notifications.admin.push_channels.form import (
    KIND_FIELDS,
    KIND_HELP,
    SECRET_FIELDS,
    PushChannelForm,
    _kind_label,
)
from apps.notifications.choices import PushKind
from apps.notifications.domain import PushChannelSettings
from apps.notifications.models import PushChannel
from apps.notifications.push import configuration


class FlaggedFilter(admin.SimpleListFilter):
    title = "flag"
    parameter_name = "flagged"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "Flagged"), ("no", "Not flagged")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() in ("yes", "no"):
            return queryset.filter(flagged_at__isnull=self.value() == "no")
        return queryset


@admin.action(permissions=["change"], description="Clear the flag of selected push channels")
def clear_flag(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
    flagged = list(queryset.filter(flagged_at__isnull=False).select_related("tenant"))
    for channel in flagged:
        configuration.push_channel_update(
            channel.tenant, channel, PushChannelSettings(flagged=False)
        )
    modeladmin.message_user(
        request,
        f"Cleared the flag of {counted(len(flagged), 'push channel')}: dead tokens are pruned "
        "again."
        if flagged
        else "None of the selected channels was flagged.",
        messages.SUCCESS if flagged else messages.WARNING,
    )


# The add and change pages keep the secrets out of error reports (DEBUG pages, mails to ADMINS)
# along with the rest of the POST.
@admin.register(PushChannel)
@method_decorator(sensitive_post_parameters(*SECRET_FIELDS), name="add_page")
@method_decorator(sensitive_post_parameters(*SECRET_FIELDS), name="change_page")
class PushChannelAdmin(TenantColumnMixin, ConfigAdmin):
    config_form = PushChannelForm
    list_display = ("kind", "app_column", "status", "flag_column", "tenant_column", "created")
    list_select_related = (TENANT_RELATED,)
    list_filter = ("kind", "status", FlaggedFilter, ("tenant", TenantFilter))
    ordering = ("tenant_id", "kind", "pk")
    actions = [clear_flag, "delete_selected"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[PushChannel]:
        return super().get_queryset(request).select_related(TENANT_RELATED)

    def form_sections(self, obj: PushChannel | None) -> list[Section]:
        if obj is None:
            return [
                (None, ("kind", "status")),
                *(
                    (
                        Heading(
                            _kind_label(kind),
                            description=KIND_HELP[kind],
                            classes=f"push-kind push-kind-{kind}",
                        ),
                        names,
                    )
                    for kind, names in KIND_FIELDS.items()
                ),
            ]
        head = ("tenant_column", "kind", "public_id", "status", "created", "updated")
        sections: list[Section] = [(None, head)]
        if obj.flagged_at is not None:
            # The reason and date are above the form (pushchannel/form.html).
            sections.append(("Flag", ("clear_flag",)))
        derived = ("project_id",) if obj.kind == PushKind.FCM else ()
        provider = (*KIND_FIELDS[obj.kind], *derived, "credentials_state")
        label = Heading(_kind_label(obj.kind), description=KIND_HELP[obj.kind])
        sections.append((label, provider))
        return sections

    def create(self, request: HttpRequest, form: PushChannelForm) -> PushChannel:
        return configuration.push_channel_create(form.valid_tenant, form.valid_settings)

    def update(self, request: HttpRequest, obj: PushChannel, form: PushChannelForm) -> None:
        configuration.push_channel_update(obj.tenant, obj, form.valid_settings)

    def remove(self, request: HttpRequest, obj: PushChannel) -> None:
        configuration.push_channel_delete(obj)

    @admin.display(description="app")
    def app_column(self, obj: PushChannel) -> str:
        if obj.kind == PushKind.APNS:
            bundle = obj.settings.get("bundleId") or "-"
            return f"{bundle} (sandbox)" if obj.settings.get("sandbox") else bundle
        return str(obj.settings.get("projectId") or "-")

    @admin.display(description="flag", ordering="flagged_at")
    def flag_column(self, obj: PushChannel) -> SafeString | str:
        if obj.flagged_at is None:
            return "-"
        return format_html(
            '<span class="push-flag" title="{}" style="background: var(--error-fg, #ba2121); '
            "color: #fff; border-radius: 4px; padding: 2px 8px; font-weight: 600; "
            'cursor: help; white-space: nowrap">flagged</span>',
            obj.flag_reason or "flagged",
        )

    @admin.display(description="project id")
    def project_id(self, obj: PushChannel) -> str:
        return str(obj.settings.get("projectId") or "-")

    @admin.display(description="credentials")
    def credentials_state(self, obj: PushChannel) -> str:
        if not obj.credentials:
            return "None stored."
        return "Stored, encrypted. Write-only: never shown; enter a new one above to replace it."
