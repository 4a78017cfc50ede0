"""Writes of achievements and completions.

`completing` completes achievements for one user (the event step, the API completion, the
day's anniversaries), `backdating` completes a newly active achievement for everyone who
already qualifies. Callers import from this package. Achievements themselves are written by
apps/achievements/configuration.py. Tests that patch a name the code looks up (the batch size
of backdating, the completions read while completing) patch it on the submodule that reads
it: a name patched here would not be seen there."""

from apps.achievements.services.backdating import achievement_backdate
from apps.achievements.services.completing import (
    ApiCompletion,
    Completed,
    achievement_complete_api,
    achievements_due,
    achievements_event_load,
    anniversaries_complete,
    completed_pks,
    completions_insert,
    completions_load_many,
)

__all__ = [
    "ApiCompletion",
    "Completed",
    "achievement_backdate",
    "achievement_complete_api",
    "achievements_due",
    "achievements_event_load",
    "anniversaries_complete",
    "completed_pks",
    "completions_insert",
    "completions_load_many",
]
