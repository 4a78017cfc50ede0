"""Completing an API achievement for a user outside a request of the application API.

POST /v1/achievements/{key}/complete (apps.pipeline.views.AchievementCompleteApi) runs these
steps inline, after identifying the user; the dashboard runs the same ones for a user it already
has. Only the pipeline knows their order: achievements, then points, then the notifications
and webhooks of the facts.
"""

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.achievements.selectors import AchievementDef
from apps.achievements.services import ApiCompletion, Completed, achievement_complete_api
from apps.core.facts import Fact
from apps.notifications.services import notifications_record
from apps.pipeline.steps import completion_facts
from apps.points.services import points_for_achievements
from apps.users.errors import UserNotFoundError
from apps.users.models import EndUser
from apps.users.services import user_lock
from apps.webhooks.services import webhooks_record


@dataclass(frozen=True)
class CompletionResult:
    completion: ApiCompletion
    points: dict[str, dict[str, Any]]  # by system key, as the API's `points`


def achievement_complete_for_user(
    tenant: Tenant, user: EndUser, definition: AchievementDef, now: dt.datetime | None = None
) -> CompletionResult:
    """Complete an api-trigger achievement; completing it again changes nothing (created is
    False). Raises AchievementInvalidError for a locked achievement or a user outside its
    user attribute filters."""
    now = now or timezone.now()
    with transaction.atomic():
        # The pipeline's one lock point per user: an event of the same user waits.
        locked = user_lock(tenant, user.external_id)
        if locked is None:
            raise UserNotFoundError(user.external_id)
        result = achievement_complete_api(tenant, locked, definition, now)
        if not result.created:
            return CompletionResult(result, {})
        # Achievement points triggers fire for the completion and the composites it completed.
        completed = (definition.pk, *(c.definition.pk for c in result.also_completed))
        points = points_for_achievements(tenant, locked, completed, now)
        first = Completed(definition, result.completion_id, result.completed_at)
        facts: list[Fact] = list(completion_facts(locked, [first, *result.also_completed]))
        facts += notifications_record(tenant, locked, facts, now)
        webhooks_record(tenant, locked, facts, now)
    return CompletionResult(result, points)
