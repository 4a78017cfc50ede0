"""Writes of achievements and completions.

`completing` completes achievements for one user (the event step, the API completion, the
day's anniversaries), `backdating` completes a newly active achievement for everyone who
already qualifies, `configuration` writes achievements from the admin API and the dashboard.
Callers import from this package. Tests that patch a name the code looks up (the batch size
of backdating, the completions read while completing) patch it on the submodule that reads
it: a name patched here would not be seen there."""

from apps.achievements.services.backdating import achievement_backdate
from apps.achievements.services.completing import (
    ApiCompletion,
    Completed,
    achievement_complete_api,
    achievements_apply_event,
    achievements_event_load,
    anniversaries_complete,
)
from apps.achievements.services.configuration import (
    REQUIRED_FIELDS,
    TRIGGER_FIELDS,
    achievement_create,
    achievement_delete,
    achievement_update,
)

__all__ = [
    "REQUIRED_FIELDS",
    "TRIGGER_FIELDS",
    "ApiCompletion",
    "Completed",
    "achievement_backdate",
    "achievement_complete_api",
    "achievement_create",
    "achievement_delete",
    "achievement_update",
    "achievements_apply_event",
    "achievements_event_load",
    "anniversaries_complete",
]
