"""The rules between the pipeline's endpoints and its services (docs/style.md principle 1): a
user identified and paid their user_creation points (POST /users, PUT and PATCH /users/{id}),
an api achievement completed by key for a user named by id (POST /achievements/{key}/complete),
and what a batch of events must pass before it is queued (POST /admin/v1/metrics/events). The
views validate the wire shapes, call these and render."""

import datetime as dt
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.achievements.choices import Trigger
from apps.achievements.errors import AchievementNotFoundError
from apps.achievements.selectors import AchievementDef, achievement_by_key
from apps.core.arguments import UNSET
from apps.core.errors import ApplicationError, ValidationError
from apps.metrics.selectors import metric_by_key
from apps.pipeline.batches import events_enqueue
from apps.pipeline.services import (
    CompletionResult,
    EventInput,
    achievement_complete,
    user_creation_points_pay,
)
from apps.users.domain import UserFields
from apps.users.selectors import users_with_email
from apps.users.services import (
    UserUpsertResult,
    attribute_values_check,
    user_create_or_lock,
    user_lock,
    user_update_fields,
    user_upsert,
)

MAX_IDEMPOTENCY_KEY = 255


def idempotency_key_check(key: str | None) -> None:
    """The Idempotency-Key header of an event or a batch, when sent."""
    if key is not None and not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY:
        raise ValidationError(f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY} characters")


# --- identifying a user ----------------------------------------------------------------------


def user_identify_paying(
    tenant: Tenant,
    user_id: str,
    fields: UserFields,
    *,
    create: bool = True,
    now: dt.datetime | None = None,
) -> UserUpsertResult:
    """Identify the user `user_id` (create=False: update them, UserNotFoundError when unknown)
    in one transaction, in two steps: `user_upsert` under the user's row lock, then, for a user
    it created, the user_creation points (`user_creation_points_pay`)."""
    now = now or timezone.now()
    with transaction.atomic():
        result = user_upsert(tenant, user_id, fields, create=create, now=now)
        if result.created:
            user_creation_points_pay(tenant, result.user, now)
        return result


# --- completing an api achievement -----------------------------------------------------------


@dataclass(frozen=True)
class KeyedCompletion:
    definition: AchievementDef
    result: CompletionResult


def achievement_complete_by_key(
    tenant: Tenant,
    *,
    key: str,
    user_id: str,
    user_fields: UserFields,
    now: dt.datetime | None = None,
) -> KeyedCompletion:
    """Complete the api achievement `key` for the user `user_id`, created with `user_fields`
    when unknown and otherwise updated with them, under the user's row lock. Only an active or
    locked achievement with the api trigger can be named (AchievementNotFoundError otherwise);
    completing it again changes nothing (`result.completion.created` is False)."""
    definition = achievement_by_key(tenant, key)
    if definition is None or definition.trigger != Trigger.API:
        raise AchievementNotFoundError(key)
    with transaction.atomic():
        user = user_lock(tenant, user_id)
        created = False
        if user is None:
            identified = user_create_or_lock(tenant, user_id, user_fields)
            user, created = identified.user, identified.created
        else:
            user_update_fields(tenant, user, user_fields)
        done = achievement_complete(tenant, user, definition, now, created=created)
        return KeyedCompletion(definition, done)


# --- batches of events -----------------------------------------------------------------------


def batch_event_check(tenant: Tenant, index: int, event: EventInput) -> None:
    """What one event of a batch needs besides a valid shape: a known metric (404) and defined
    attribute keys. The error names the event's index and keeps the status of the rule."""
    try:
        metric_by_key(tenant, event.metric_key)
        attribute_values_check(tenant, event.attributes, "event")
        attribute_values_check(tenant, event.user_fields.attributes or None, "user")
    except ApplicationError as exc:
        error = ApplicationError(f"[{index}] {exc.message}")
        error.status_code = exc.status_code
        raise error from None


def batch_submit(tenant: Tenant, events: list[EventInput], *, idempotency_key: str | None) -> int:
    """Queue a batch whose events each passed batch_event_check, once the rules that span the
    batch hold; returns how many events were accepted (those of the first batch sent with the
    same key, when the key was used before)."""
    _email_rule_check(tenant, events)
    idempotency_key_check(idempotency_key)
    return events_enqueue(tenant, events, idempotency_key)


def _email_rule_check(tenant: Tenant, events: list[EventInput]) -> None:
    """subscribeToEmails may be true only for a user with an email, judged as the events will be
    applied: in order, starting from the stored users. Checked now so an accepted event is never
    dropped by the worker later."""
    subscribing = {e.user_id for e in events if e.user_fields.subscribe_to_emails is True}
    if not subscribing:
        return
    has_email = users_with_email(tenant, subscribing)
    for index, event in enumerate(events):
        fields = event.user_fields
        if fields.email:
            has_email.add(event.user_id)
        elif fields.email is not UNSET or fields.subscribe_to_emails is False:
            has_email.discard(event.user_id)
        if fields.subscribe_to_emails is True and event.user_id not in has_email:
            raise ValidationError(
                f"[{index}] user.subscribeToEmails cannot be true for a user without an email"
            )
