"""What the dashboard pages listing end-users' rows share (streaks, periods, pauses, awards,
totals, leaderboard records, completions): each row links to its end-user's page, and the list is
searched by exact end-user id. Those tables grow with every end-user, so the list never counts the
whole table and, unless a page says otherwise, shows the newest rows first by primary key, which
follows time for rows inserted as they happen."""

from typing import Any, ClassVar

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.users.models import EndUser


def end_user_link(user: EndUser) -> SafeString:
    """A link to the end-user's dashboard page, named by their id in the customer's app."""
    url = reverse("admin:users_enduser_change", args=[user.pk])
    return format_html('<a href="{}">{}</a>', url, user.external_id)


class EndUserRowsMixin(admin.ModelAdmin):
    """The column `user_link` needs "user" loaded with the rows (list_select_related)."""

    search_fields = ("=user__external_id",)
    search_help_text = "Search by exact end-user id."
    ordering: ClassVar[tuple[str, ...] | None] = ("-pk",)
    show_full_result_count = False

    @admin.display(description="User", ordering="user__external_id")
    def user_link(self, obj: Any) -> SafeString:
        return end_user_link(obj.user)
