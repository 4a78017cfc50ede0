"""The delivery log (read-only) and the notifications section of the end-user page."""

from urllib.parse import urlencode

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
)
from apps.notifications.models import Message
from apps.notifications.selectors import messages_for_user
from apps.users.admin import end_user_section, html_table
from apps.users.models import EndUser

# The end-user page shows this many of the user's latest messages; the log has the rest.
RECENT_MESSAGES = 20
# Errors are long (an SMTP reply, a template line); the list shows their start.
ERROR_COLUMN_CHARS = 80

# Every field of a message, its relations as links and labels.
_COLUMNS = {"tenant": "tenant_column", "user": "user_link", "template": "template_link"}
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
    fields = readonly_fields = MESSAGE_FIELDS

    def get_queryset(self, request: HttpRequest) -> QuerySet[Message]:
        return super().get_queryset(request).select_related("user", "template", TENANT_RELATED)

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
        if obj.template is None:
            return "-"
        url = reverse("admin:notifications_emailtemplate_change", args=[obj.template_id])
        return format_html('<a href="{}">{}</a>', url, obj.template)


@end_user_section
@admin.display(description="notifications")
def end_user_notifications(user: EndUser) -> SafeString:
    rows = messages_for_user(user, limit=RECENT_MESSAGES)
    table = html_table(
        ("created", "type", "status", "subject", "error"),
        [
            (m.created, m.get_type_display(), m.status, m.subject or None, m.error or None)
            for m in rows
        ],
    )
    url = reverse("admin:notifications_message_changelist") + "?" + urlencode({"user": user.pk})
    return format_html('{}<p><a href="{}">All messages of this user</a></p>', table, url)
