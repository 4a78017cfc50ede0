"""Writes of end-users (identification is an upsert); attribute definitions: configuration.py."""

import datetime as dt
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.core.arguments import UNSET
from apps.core.db import CompiledSelect, insert
from apps.core.errors import ValidationError
from apps.core.replicas import users_written
from apps.users.domain import UserFields, control_assign, local_date
from apps.users.errors import AttributeKeysInvalidError, UserNotFoundError
from apps.users.models import EndUser
from apps.users.selectors import attribute_definitions

# The fields of UserFields that an update sets on the model as they are.
_PLAIN_FIELDS = ("name", "email", "tz", "subscribe_to_emails", "sign_up_date")


@dataclass(frozen=True)
class UserUpsertResult:
    user: EndUser
    created: bool


def attribute_values_check(tenant: Tenant, values: Mapping[str, Any] | None, kind: str) -> None:
    """Only keys defined as attributes of this kind are accepted; the error lists the others."""
    if not values:
        return
    definitions = attribute_definitions(tenant)
    allowed = definitions.user_keys if kind == "user" else definitions.event_keys
    unknown = sorted(key for key in values if key not in allowed)
    if unknown:
        raise AttributeKeysInvalidError(unknown, kind)


def _apply_fields(user: EndUser, fields: UserFields) -> list[str]:
    """Set the supplied fields on `user`; returns the model fields that changed."""
    changed: list[str] = []
    for attr in _PLAIN_FIELDS:
        value = getattr(fields, attr)
        if value is not UNSET and getattr(user, attr) != value:
            setattr(user, attr, value)
            changed.append(attr)
    if user.subscribe_to_emails is False and user.email is not None:
        # Trophy's rule: an unsubscribed user's email address is not kept.
        user.email = None
        if "email" not in changed:
            changed.append("email")
    if fields.device_tokens is not UNSET:
        tokens = list(dict.fromkeys(fields.device_tokens or ()))
        if tokens != user.device_tokens:
            user.device_tokens = tokens
            changed.append("device_tokens")
    if fields.attributes:
        # Attributes merge per key: a user's other attributes are kept; null removes a key.
        merged = dict(user.attributes)
        for key, value in fields.attributes.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        if merged != user.attributes:
            user.attributes = merged
            changed.append("attributes")
    return changed


def _check_rules(user: EndUser, fields: UserFields, now: dt.datetime) -> None:
    if fields.subscribe_to_emails is True and not user.email:
        raise ValidationError(
            "{subscribe_to_emails} cannot be true for a user without an email",
            fields="subscribe_to_emails",
            code="invalid",
        )
    signed_up = user.sign_up_date
    if (
        fields.sign_up_date is not UNSET
        and signed_up is not None
        and signed_up > local_date(now, user.tz)
    ):
        raise ValidationError(
            "{sign_up_date} must not be in the future in the user's time zone",
            fields="sign_up_date",
            code="out_of_range",
        )


# Hand-compiled (apps/core/db.py): the ORM took longer to build this than PostgreSQL to run it.
_USER_FOR_UPDATE = CompiledSelect(EndUser, "{m[tenant]} = %s AND {m[external_id]} = %s", True)


def user_lock(tenant: Tenant, external_id: str) -> EndUser | None:
    """Take the user's row lock, held until the surrounding transaction ends: the one lock
    point per user, which serializes that user's events and every other writer of the user's
    state (jobs, admin operations, preferences), so each reads what the last one committed.
    None when unknown. Whoever locks a user writes them (or creates them): reads concerning
    the user go to the primary for a few seconds after the commit (apps/core/replicas.py)."""
    users_written(tenant.pk, [external_id])
    user: EndUser | None = _USER_FOR_UPDATE.first([tenant.pk, external_id])
    return user


def user_lock_pk(user_pk: int, *, skip_locked: bool = False) -> EndUser | None:
    """user_lock by primary key, with the user's tenant. `skip_locked`: None rather than wait
    when the user is busy (user_job_lock)."""
    user = (
        EndUser.objects.select_for_update(skip_locked=skip_locked, of=("self",))
        .select_related("tenant")
        .filter(pk=user_pk)
        .first()
    )
    if user is not None:
        users_written(user.tenant_id, [user.external_id])
    return user


def users_lock(tenant: Tenant, external_ids: Sequence[str]) -> dict[str, EndUser]:
    """user_lock for several users at once (a friendship's two ends), taken in primary-key
    order, so that two callers locking overlapping sets never wait on each other in a cycle;
    the users found, by their id."""
    users_written(tenant.pk, external_ids)
    users = (
        EndUser.objects.select_for_update(of=("self",))
        .filter(tenant=tenant, external_id__in=list(external_ids))
        .order_by("pk")
    )
    return {user.external_id: user for user in users}


@contextmanager
def user_job_lock(user_pk: int) -> Iterator[EndUser | None]:
    """A background job's turn with one user: a transaction of its own that holds the user's
    row lock (user_lock), so the job's writes and the user's events never interleave and each
    user's work commits alone. The user is None when unknown or busy: a job skips a user whose
    lock an event holds rather than queue behind live traffic (a job waiting on one busy user
    would hold up the whole batch behind it), and comes back to them on its next run, so a job
    that uses this must find its users by what is due and be safe to repeat."""
    with transaction.atomic():
        yield user_lock_pk(user_pk, skip_locked=True)


def users_each_locked(
    users: QuerySet[EndUser], work: Callable[[EndUser], None], *, batch: int = 500
) -> None:
    """Run `work` for each user of `users` in a transaction of the user's own, under their lock
    (user_job_lock), skipping those busy with an event: how a job works through its due users.
    Users are read `batch` primary keys at a time, in order, the query asked again from the
    last one, so a user who stopped being due meanwhile is not taken."""
    last_pk = 0
    while True:
        pks = list(users.filter(pk__gt=last_pk).order_by("pk").values_list("pk", flat=True)[:batch])
        if not pks:
            return
        last_pk = pks[-1]
        for pk in pks:
            with user_job_lock(pk) as user:
                if user is not None:
                    work(user)


def user_new(
    tenant: Tenant, external_id: str, fields: UserFields, *, now: dt.datetime, active: bool
) -> EndUser:
    """The unsaved user that user_create_or_lock inserts (a batch inserts many at once):
    the supplied fields checked and applied, the control group assigned."""
    attribute_values_check(tenant, fields.attributes or None, "user")
    user = EndUser(
        tenant=tenant,
        external_id=external_id,
        control=control_assign(str(tenant.public_id), external_id, tenant.control_ratio),
    )
    _apply_fields(user, fields)
    _check_rules(user, fields, now)
    if active:  # the event's activity, recorded with the row (user_activity_mark)
        user.last_active_at, user.last_active_on = now, local_date(now, user.tz)
    return user


def user_create_or_lock(
    tenant: Tenant,
    external_id: str,
    fields: UserFields,
    *,
    now: dt.datetime | None = None,
    active: bool = False,
) -> UserUpsertResult:
    """Create the user with the supplied fields (`active`: active at `now`, an event's user).
    If a concurrent request created it first, wait for and take its row lock and return it
    unchanged (created=False), so the caller can decide what to apply to it (the pipeline
    checks idempotency first). One statement: the insert skips a conflicting row."""
    now = now or timezone.now()
    user = user_new(tenant, external_id, fields, now=now, active=active)
    users_written(tenant.pk, [external_id])
    if insert(user, unless_conflict=("tenant", "external_id")):
        return UserUpsertResult(user=user, created=True)
    existing = user_lock(tenant, external_id)
    assert existing is not None  # noqa: S101 - the unique constraint just said it exists
    return UserUpsertResult(user=existing, created=False)


def user_update_fields(
    tenant: Tenant, user: EndUser, fields: UserFields, *, now: dt.datetime | None = None
) -> EndUser:
    """Change only the supplied fields of an existing (locked) user."""
    attribute_values_check(tenant, fields.attributes or None, "user")
    changed = _apply_fields(user, fields)
    _check_rules(user, fields, now or timezone.now())
    if changed:
        user.save(update_fields=[*changed, "updated"])
    return user


def user_identify(
    tenant: Tenant,
    external_id: str,
    fields: UserFields,
    *,
    existing: EndUser | None,
    now: dt.datetime | None = None,
) -> UserUpsertResult:
    """Create the user when `existing` is None, otherwise change only the supplied fields."""
    if existing is None:
        result = user_create_or_lock(tenant, external_id, fields, now=now)
        if result.created:
            return result
        existing = result.user
    return UserUpsertResult(
        user=user_update_fields(tenant, existing, fields, now=now), created=False
    )


def user_upsert(
    tenant: Tenant,
    external_id: str,
    fields: UserFields,
    *,
    create: bool = True,
    now: dt.datetime | None = None,
) -> UserUpsertResult:
    """Identify a user (PUT /users/{id}, POST /users) or update one (PATCH, create=False),
    under the user's row lock in the caller's transaction. What else a new user gets (the
    user_creation points) is the caller's next step: the pipeline's `user_identify_paying`
    (apps/pipeline/intake.py) serves those routes."""
    now = now or timezone.now()
    existing = user_lock(tenant, external_id)
    if existing is None and not create:
        raise UserNotFoundError(external_id)
    return user_identify(tenant, external_id, fields, existing=existing, now=now)


def device_tokens_prune(user_pk: int, tokens: set[str]) -> list[str]:
    """Remove dead device tokens, under the user's row lock: an identify adding tokens at the
    same moment either comes first (and its tokens are kept) or waits for this."""
    with transaction.atomic():
        user = user_lock_pk(user_pk)
        if user is None:
            return []
        kept = [t for t in user.device_tokens or [] if t not in tokens]
        removed = [t for t in user.device_tokens or [] if t in tokens]
        if removed:
            user.device_tokens = kept
            user.save(update_fields=["device_tokens", "updated"])
        return removed


def user_activity_mark(user: EndUser, at: dt.datetime, local_day: dt.date) -> None:
    """Record the user's latest activity and its local date. Writes only on the user's first
    activity of a day: later events of the day change nothing that is read by date, and an
    older moment (a batch event processed late) never moves the date back."""
    if user_activity_noted(user, at, local_day):
        EndUser.objects.filter(pk=user.pk).update(last_active_at=at, last_active_on=local_day)


def user_activity_noted(user: EndUser, at: dt.datetime, local_day: dt.date) -> bool:
    """Set the activity on the loaded user when it is their first of the day; whether it was
    (then the row needs the same change)."""
    if user.last_active_on is not None and local_day <= user.last_active_on:
        return False
    user.last_active_at, user.last_active_on = at, local_day
    return True
