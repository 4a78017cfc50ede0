"""Dashboard pages for streaks: the selected tenant's settings (a form view written by
streak_settings_update; a change of frequency is confirmed first), users' streak state, periods
and pauses (read-only lists, with actions and a pause form that call the streak services), and
the streaks lost lately, for support, with a one-click restore.
(The end-user page shows the streak: apps/pipeline/dashboard_user.)"""

from apps.streaks.admin import losses, settings, state

__all__ = ["losses", "settings", "state"]
