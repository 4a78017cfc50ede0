"""The delivery log (read-only) and the notifications section of the end-user page."""

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from apps.accounts.admin.base import (
    TENANT_RELATED,
    ReadOnlyAdmin,
    TenantColumnMixin,
    TenantFilter,
    admin_link,
    html_table,
)
from apps.notifications.choices import Channel, PushKind
from apps.notifications.models import Message

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


@admin.register(Message)
class MessageAdmin(TenantColumnMixin, ReadOnlyAdmin):
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

    @admin.display(description="user", ordering="user__external_id")
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
