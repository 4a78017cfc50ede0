"""Dashboard pages for streaks: the selected tenant's settings (written by the settings service
with the admin API's body; a change of frequency is confirmed first), users' streak state,
periods and pauses (read-only, with actions and a pause form that call the streak services),
and the streak section of the end-user page."""

from apps.streaks.admin import settings, state, user_section
from apps.streaks.admin.user_section import RECENT_PERIODS

__all__ = ["RECENT_PERIODS", "settings", "state", "user_section"]
