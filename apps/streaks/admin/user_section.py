"""The streak section of the end-user page."""

from urllib.parse import urlencode

from django.contrib import admin
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.streaks.selectors import streak_history, streak_state_get, streak_view
from apps.users.admin import end_user_section, html_table
from apps.users.models import EndUser

# The end-user page shows this many periods; the period list has the rest.
RECENT_PERIODS = 10


@end_user_section
@admin.display(description="Streak")
def end_user_streak(user: EndUser) -> SafeString:
    """The streak as the API shows it now (settled in memory), then its latest periods."""
    tenant = user.tenant
    view = streak_view(tenant, user, streak_state_get(user), timezone.now())
    config = view.config
    freezes = (
        f"{view.settlement.state.freezes} of {config.freeze_max_count}"
        if config.freezes_enabled
        else "off"
    )
    summary = html_table(
        ("Length", "Started", "Expires", "Freezes", "Frequency"),
        [
            (
                view.length,
                view.settlement.state.started if view.length else None,
                view.expires,
                freezes,
                config.frequency,
            )
        ],
    )
    history = streak_history(user, view, RECENT_PERIODS)
    periods = html_table(
        ("Period start", "Period end", "Length", "Freeze used", "Pause used", "Reset at"),
        [
            (p.period_start, p.period_end, p.length, p.used_freeze, p.used_pause, p.reset_at)
            for p in reversed(history)
        ],
    )
    url = reverse("admin:streaks_streakperiod_changelist") + "?" + urlencode({"user": user.pk})
    return format_html(
        '{}<p>Last {} periods, newest first:</p>{}<p><a href="{}">All periods of this user</a></p>',
        summary,
        RECENT_PERIODS,
        periods,
        url,
    )
