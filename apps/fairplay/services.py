"""Fair play's writes: excluding a user from every ranking of the tenant, and lifting it.

An exclusion is user data, not configuration (no change history): the user row says when, why
and by whom (apps/users/models.py). Under the user's lock (apps/users/services.py), so an event
of the user racing the exclusion is applied wholly before or wholly after it: its entries are
moved apart with the values that event gave them, or the event finds the user excluded and
moves the entries kept apart."""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from apps.accounts.history import current_actor
from apps.accounts.models import Tenant
from apps.core.errors import NotFoundError
from apps.leaderboards.services import entries_set_apart
from apps.users.facts import UserExcluded, UserReinstated
from apps.users.models import EndUser
from apps.users.services import user_lock
from apps.webhooks.services import webhooks_record

MAX_REASON = 500


@dataclass(frozen=True)
class Done:
    user: EndUser
    changed: bool  # False: the user was already excluded (or already not)


def _locked(tenant: Tenant, external_id: str) -> EndUser:
    user = user_lock(tenant, external_id)
    if user is None:
        raise NotFoundError("User not found")
    return user


def _actor() -> str:
    actor = current_actor()
    return f"{actor.kind}:{actor.name}"[:255]


def user_exclude(tenant: Tenant, external_id: str, reason: str) -> Done:
    """Leave the user out of every leaderboard (every run and breakdown group, PostgreSQL and
    Redis), league cohort and achievement rarity of the tenant, at once; their events still
    count. Excluding an excluded user changes nothing (the first reason stays)."""
    with transaction.atomic():
        user = _locked(tenant, external_id)
        if user.excluded_at is not None:
            return Done(user, changed=False)
        now = timezone.now()
        user.excluded_at, user.excluded_reason, user.excluded_by = now, reason, _actor()
        user.save(update_fields=["excluded_at", "excluded_reason", "excluded_by"])
        entries_set_apart(user, excluded=True)
        fact = UserExcluded(user.pk, now, reason, user.excluded_by)
        webhooks_record(tenant, user, [fact], now)
    return Done(user, changed=True)


def user_reinstate(tenant: Tenant, external_id: str) -> Done:
    """Lift the exclusion: the user's entries go back in place with their current values, and
    every ranking counts them again. Reinstating a user who is not excluded changes nothing."""
    with transaction.atomic():
        user = _locked(tenant, external_id)
        if user.excluded_at is None:
            return Done(user, changed=False)
        now = timezone.now()
        user.excluded_at, user.excluded_reason, user.excluded_by = None, "", ""
        user.save(update_fields=["excluded_at", "excluded_reason", "excluded_by"])
        entries_set_apart(user, excluded=False)
        webhooks_record(tenant, user, [UserReinstated(user.pk, now, _actor())], now)
    return Done(user, changed=True)
