"""Writes of per-user streak state.

`events` is the pipeline's streak step, `adjustments` what staff do to one user's streak,
`periodic` what the jobs settle and earn, `preferences` a user's streak preferences; all of them
write the state row through `state`. Callers import from this package. The tenant's settings
are written by apps/streaks/configuration.py."""

from apps.streaks.services.adjustments import (
    streak_freeze_grant,
    streak_freezes_check,
    streak_pause_archive,
    streak_pause_create,
    streak_recount,
    streak_reset,
    streak_restore,
)
from apps.streaks.services.events import (
    StreakEventResult,
    StreakLoaded,
    StreakWrites,
    streak_apply_event,
    streak_event_compute,
    streak_event_load,
    streaks_load_many,
)
from apps.streaks.services.periodic import (
    StreakJobOutcome,
    streak_freezes_earn_locked,
    streak_settle_locked,
)
from apps.streaks.services.preferences import streak_preferences_of, streak_preferences_update

__all__ = [
    "StreakEventResult",
    "StreakJobOutcome",
    "StreakLoaded",
    "StreakWrites",
    "streak_apply_event",
    "streak_event_compute",
    "streak_event_load",
    "streak_freeze_grant",
    "streak_freezes_check",
    "streak_freezes_earn_locked",
    "streak_pause_archive",
    "streak_pause_create",
    "streak_preferences_of",
    "streak_preferences_update",
    "streak_recount",
    "streak_reset",
    "streak_restore",
    "streak_settle_locked",
    "streaks_load_many",
]
