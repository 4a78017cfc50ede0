"""The delivery log: every message with its end-user id and status; a message's page shows it
rendered as it would be sent now (apps/notifications/delivery.py, message_preview) and, while it
waits, lets staff cancel it or send it now (two POST actions calling the notification services)."""

from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator
from django.views.decorators.http import require_POST

from apps.accounts.admin.base import (
    TENANT_RELATED,
    ReadOnlyAdmin,
    TenantColumnMixin,
    TenantFilter,
    admin_link,
    html_table,
)
from apps.accounts.admin.forms import refusal_text
from apps.accounts.models import Tenant
from apps.accounts.staff import selected_tenant
from apps.core.errors import ApplicationError
from apps.notifications.choices import Channel, PushKind
from apps.notifications.delivery import message_preview
from apps.notifications.models import Message
from apps.notifications.services import (
    MAX_CANCEL_REASON,
    WAITING,
    message_cancel,
    message_send_now,
)

# The end-user page shows this many of the user's latest messages; the log has the rest.
RECENT_MESSAGES = 20
# Errors are long (an SMTP reply, a template line); the list shows their start.
ERROR_COLUMN_CHARS = 80
# A message is tried on each of the user's device tokens, and again on each retry: the detail
# page shows at most this many of its attempts, the latest, so that a page stays small.
ATTEMPTS_SHOWN = 100
PROVIDER_NAMES: dict[str, str] = {PushKind.APNS: "APNs", PushKind.FCM: "FCM", PushKind.EXPO: "Expo"}

# Every field of a message, its relations as links and labels.
_COLUMNS = {
    "tenant": "tenant_column",
    "user": "user_link",
    "template": "template_link",
    "push_template": "push_template_link",
}
MESSAGE_FIELDS: tuple[str, ...] = tuple(
    _COLUMNS.get(f.name, f.name) for f in Message._meta.fields if f.name != "id"
)


# Cancelling or sending a message now changes it: it takes the change permission on messages,
# although no field of it is edited by hand.
ACT_PERMISSION = "notifications.change_message"


@admin.register(Message)
class MessageAdmin(TenantColumnMixin, ReadOnlyAdmin):
    change_form_template = "admin/notifications/message/change_form.html"
    # Few columns, so that the log fits a laptop screen; the detail page has every field.
    list_display = (
        "send_at",
        "status",
        "type",
        "user_link",
        "subject",
        "error_column",
        "tenant_column",
    )
    list_display_links = ("send_at",)
    list_select_related = ("user", TENANT_RELATED)
    list_filter = ("status", "type", "channel", ("tenant", TenantFilter))
    search_fields = ("=user__external_id", "=recipient")
    search_help_text = "Search by exact end-user id or recipient address."
    # Messages are inserted when they become due, so the primary key follows `created` and its
    # index serves the newest-first list without sorting the whole log.
    ordering = ("-pk",)
    show_full_result_count = False
    fields = MESSAGE_FIELDS
    readonly_fields = (*MESSAGE_FIELDS, "push_attempts_table")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Message]:
        return (
            super()
            .get_queryset(request)
            .select_related("user", "template", "push_template", TENANT_RELATED)
        )

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        if obj is not None and obj.channel == Channel.PUSH:
            return (*MESSAGE_FIELDS, "push_attempts_table")
        return MESSAGE_FIELDS

    def get_urls(self) -> list[Any]:
        def route(name: str, act: Callable[..., str]) -> URLPattern:
            view = require_POST(self._acting(act))
            return path(
                f"<int:message_pk>/{name.replace('_', '-')}/",
                self.admin_site.admin_view(view),
                name=f"notifications_message_{name}",
            )

        actions = [route("cancel", self._cancel), route("send_now", self._send_now)]
        return [*actions, *super().get_urls()]

    def _acting(self, act: Callable[..., str]) -> Callable[..., HttpResponse]:
        """A POST action on one message of the selected tenant (another tenant's is not found),
        carried out by a service in a transaction; back to the message with what it did."""

        def view(request: HttpRequest, message_pk: int) -> HttpResponse:
            if not request.user.has_perm(ACT_PERMISSION):
                raise PermissionDenied
            message = self.get_queryset(request).filter(pk=message_pk).first()
            tenant = selected_tenant(request)
            if message is None or tenant is None:
                raise Http404("No such message")
            try:
                with transaction.atomic():
                    text = act(request, tenant, message)
            except ApplicationError as exc:
                messages.error(request, refusal_text(exc))
            else:
                messages.success(request, text)
                self.log_change(request, message, text)
            return HttpResponseRedirect(
                reverse("admin:notifications_message_change", args=[message.pk])
            )

        return view

    def _cancel(self, request: HttpRequest, tenant: Tenant, message: Message) -> str:
        reason = request.POST.get("reason", "")
        message_cancel(tenant, message, reason=reason)
        return f"Cancelled the {message.get_type_display().lower()} message to {message.user}."

    def _send_now(self, request: HttpRequest, tenant: Tenant, message: Message) -> str:
        message_send_now(tenant, message)
        return f"The {message.get_type_display().lower()} message to {message.user} is sent now."

    def form_page_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        if obj is None:
            return {}
        waiting = obj.status in WAITING
        return {
            "preview": message_preview(obj, timezone.now()),
            "may_act": waiting and request.user.has_perm(ACT_PERMISSION),
            "waiting": waiting,
            "max_reason": MAX_CANCEL_REASON,
        }

    @admin.display(description="user id", ordering="user__external_id")
    def user_link(self, obj: Message) -> SafeString:
        url = reverse("admin:users_enduser_change", args=[obj.user_id])
        return format_html('<a href="{}">{}</a>', url, obj.user.external_id)

    @admin.display(description="error")
    def error_column(self, obj: Message) -> SafeString | str:
        if not obj.error:
            return "-"
        short = Truncator(obj.error).chars(ERROR_COLUMN_CHARS)
        return format_html('<span title="{}">{}</span>', obj.error, short)

    @admin.display(description="template")
    def template_link(self, obj: Message) -> SafeString | str:
        return admin_link(obj.template) if obj.template is not None else "-"

    @admin.display(description="push template")
    def push_template_link(self, obj: Message) -> SafeString | str:
        return admin_link(obj.push_template) if obj.push_template is not None else "-"

    @admin.display(description="push attempts")
    def push_attempts_table(self, obj: Message) -> SafeString:
        """One row per device token per attempt; tokens appear only as their hash."""
        latest = list(obj.push_attempts.order_by("-created", "-pk")[: ATTEMPTS_SHOWN + 1])
        attempts = latest[:ATTEMPTS_SHOWN][::-1]  # oldest first: retries read in order
        table = html_table(
            ("time", "provider", "token hash", "ok", "status code", "reason"),
            [
                (
                    a.created,
                    PROVIDER_NAMES.get(a.provider, a.provider),
                    a.token_hash,
                    "yes" if a.ok else "no",
                    a.status_code,
                    a.reason or None,
                )
                for a in attempts
            ],
        )
        if len(latest) > ATTEMPTS_SHOWN:
            return format_html("{}<p>The latest {} attempts.</p>", table, ATTEMPTS_SHOWN)
        return table
