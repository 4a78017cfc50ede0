"""Fair play's writes: excluding a user from every ranking of the tenant, and lifting it.

An exclusion is user data, not configuration (no change history): the user row says when, why
and by whom (apps/users/models.py). Under the user's lock (apps/users/services.py), so an event
of the user racing the exclusion is applied wholly before or wholly after it: its entries are
moved apart with the values that event gave them, or the event finds the user excluded and
moves the entries kept apart."""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.history import current_actor
from apps.accounts.models import Tenant
from apps.core.errors import NotFoundError
from apps.core.facts import Fact
from apps.fairplay import sql
from apps.fairplay.choices import FlagStatus
from apps.fairplay.domain import passed, window_of
from apps.fairplay.models import UserFlag
from apps.fairplay.selectors import anomaly_rules
from apps.leaderboards.services import entries_set_apart
from apps.users.facts import UserExcluded, UserFlagged, UserReinstated
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


# --- anomaly flags ------------------------------------------------------------------------------


def anomalies_check(
    tenant: Tenant,
    user: EndUser,
    *,
    now: dt.datetime,
    metric_pk: int | None,
    value: Decimal | None,
    points_added: dict[int, int],
) -> list[Fact]:
    """The event path's check of the tenant's anomaly rules, for a user whose lock the caller
    holds: each rule the event counts in adds to the user's total in the rule's current window
    (one statement a rule); a total that passes the rule's threshold flags the user, once a
    window (one more statement), told as a UserFlagged fact. No statement at all for a tenant
    without active rules (the configuration snapshot)."""
    facts: list[Fact] = []
    for rule in anomaly_rules(tenant):
        amount = rule.counts(metric_pk, value, points_added)
        if amount is None:
            continue
        start, end = window_of(now, rule.window_minutes)
        total = sql.count_add(rule.pk, user.pk, start, amount)
        if not passed(total - amount, total, rule.threshold):
            continue
        try:
            # A savepoint: a window whose count was pruned (jobs.py) and restarted by a late
            # event may have flagged the user already, and the flag is once a window.
            with transaction.atomic():
                flag = UserFlag.objects.create(
                    tenant=tenant,
                    rule_id=rule.pk,
                    user=user,
                    window_start=start,
                    window_end=end,
                    observed=total,
                    threshold=rule.threshold,
                    flagged_at=now,
                )
        except IntegrityError:
            continue
        facts.append(
            UserFlagged(
                user.pk, flag.pk, rule.key, rule.name, start, end, total, rule.threshold, now
            )
        )
    return facts


def flag_resolve(tenant: Tenant, flag_pk: int, *, exclude: bool) -> UserFlag:
    """Close an open flag: dismiss it, or exclude its user (user_exclude, with the rule and the
    evidence as the reason). A closed flag stays as it is."""
    with transaction.atomic():
        flag = (
            UserFlag.objects.select_for_update(of=("self",))
            .select_related("rule", "user")
            .filter(tenant=tenant, pk=flag_pk)
            .first()
        )
        if flag is None:
            raise NotFoundError("Flag not found")
        if flag.status != FlagStatus.OPEN:
            return flag
        if exclude:
            reason = (
                f"Flagged by {flag.rule.name}: {flag.observed.normalize():f} in the window from "
                f"{flag.window_start:%Y-%m-%d %H:%M} UTC (more than {flag.threshold.normalize():f})"
            )
            user_exclude(tenant, flag.user.external_id, reason[:MAX_REASON])
        flag.status = FlagStatus.EXCLUDED if exclude else FlagStatus.DISMISSED
        flag.resolved_at, flag.resolved_by = timezone.now(), _actor()
        flag.save(update_fields=["status", "resolved_at", "resolved_by"])
    return flag
