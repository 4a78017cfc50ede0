"""Undoing events (issue 31 item 2): an administrator takes recorded events back, and what the
steps derived from them is set right, for each user in one transaction under the user's lock.

The events stay (an idempotent retry of one is answered as a replay and counts nothing); an
`UndoneEvent` row marks each, with who undid it and why, so undoing it again does nothing.
What is recomputed, from the user's remaining events (the README's "Undoing events" says the
same to users):

- metric totals and daily rollups (the events' values and counts taken off their days);
- metric points triggers: the trigger's mark becomes the highest multiple the remaining events
  reach (never above the mark it had); each award beyond it is taken back by a reversing award
  (`undo:<award id>`, never a deletion) and its dedupe key is set aside (`~undone:<undo id>`)
  so that reaching that multiple again pays; an award that straddled the new mark is replaced
  by one for the multiples still reached; totals and levels follow the ledger;
- with `revoke_achievements`, metric achievements of the undone events' metrics that the
  remaining events no longer reach, and the composites built on them: the completion is deleted
  (the rarity counts follow) and the points their achievement triggers paid are reversed;
  without it they are kept, with their points;
- leaderboards: the user's entry in each active metric board's current run loses the undone
  events that counted in it, and on each points board the undo's points change (both rank
  stores); leagues: the user's week in each active league likewise (never a join);
- the current streak (apps/streaks: `streak_recount`): a counted period whose remaining
  changes no longer meet the conditions stops counting, and the streak is counted again from
  what is left (the streak boards follow).

Left as they are (and said so): periods of earlier streaks, freezes consumed, streak
triggers' points and streak achievements, points of time triggers, finished leaderboard runs
and league weeks, and notifications already sent.
"""

import datetime as dt
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import transaction
from django.db.models import F

from apps.accounts.history import current_actor
from apps.accounts.models import Tenant
from apps.achievements.choices import Trigger
from apps.achievements.models import AchievementCompletion
from apps.achievements.selectors import achievement_definitions
from apps.core.bulk import Issues
from apps.core.errors import ValidationError
from apps.core.facts import Fact
from apps.leaderboards.services import leaderboards_take_back
from apps.leagues.selectors import leagues_active
from apps.leagues.services import LeagueMove, leagues_apply_event
from apps.metrics.models import MetricDailyChange, MetricEvent, MetricTotal, UndoneEvent
from apps.metrics.selectors import metric_filtered_total
from apps.pipeline import steps
from apps.pipeline.services import facts_publish
from apps.points import domain as points_domain
from apps.points.choices import TriggerType
from apps.points.ledger import Ledger, SystemChange
from apps.points.models import PointsAward, PointsTriggerMark
from apps.points.selectors import SystemDef, TriggerDef, points_config
from apps.streaks.facts import StreakLost
from apps.streaks.services import streak_recount
from apps.users.domain import attributes_match
from apps.users.models import EndUser
from apps.users.services import user_lock_pk

MAX_UNDO_EVENTS = 1000  # events one request may undo


@dataclass
class UserUndo:
    """What undoing one user's events did."""

    user: EndUser
    undo_id: uuid.UUID
    events: list[MetricEvent]
    totals: dict[int, Decimal] = field(default_factory=dict)  # by metric pk
    points: list[SystemChange] = field(default_factory=list)
    revoked: list[int] = field(default_factory=list)  # achievement pks
    streak: tuple[int, int] | None = None  # the streak's length before and after, if changed


def events_undo(
    tenant: Tenant,
    events: Sequence[MetricEvent],
    *,
    reason: str,
    revoke_achievements: bool,
    now: dt.datetime,
) -> list[UserUndo]:
    """Undo these events of the tenant, one transaction per user. Events undone already
    (before, or by a concurrent undo) are skipped; a user none of whose events is left to undo
    is not in the answer."""
    by_user: dict[int, list[int]] = defaultdict(list)
    for event in events:
        by_user[event.user_id].append(event.pk)
    done = []
    for user_pk in sorted(by_user):
        with transaction.atomic():
            result = _user_undo(tenant, user_pk, by_user[user_pk], reason, revoke_achievements, now)
        if result is not None:
            done.append(result)
    return done


def _user_undo(
    tenant: Tenant,
    user_pk: int,
    event_pks: list[int],
    reason: str,
    revoke: bool,
    now: dt.datetime,
) -> UserUndo | None:
    user = user_lock_pk(user_pk)
    if user is None or user.tenant_id != tenant.pk:
        return None
    # Under the lock: what a concurrent undo marked has committed, and is skipped.
    events = list(
        MetricEvent.objects.filter(pk__in=event_pks, tenant=tenant, undone__isnull=True).order_by(
            "occurred_at", "pk"
        )
    )
    if not events:
        return None
    undo = UserUndo(user, uuid.uuid4(), events)
    actor = current_actor()
    UndoneEvent.objects.bulk_create(
        UndoneEvent(
            tenant=tenant,
            event=e,
            user=user,
            undo_id=undo.undo_id,
            reason=reason,
            revoke_achievements=revoke,
            actor_kind=actor.kind,
            actor=actor.name[:255],
            staff_id=actor.staff_id,
            api_key_id=actor.api_key_id,
            undone_at=now,
        )
        for e in events
    )
    metric_pks = _metrics_take_back(user, events, undo)
    undo.streak = streak_recount(tenant, user, [e.local_date for e in events], metric_pks, now)
    revoked = _achievements_revoke(tenant, user, metric_pks, undo) if revoke else []
    undo.points = _points_take_back(tenant, user, metric_pks, revoked, undo, now)
    added = {c.system.pk: c.added for c in undo.points}
    standings = leaderboards_take_back(
        tenant,
        user,
        now=now,
        events=[(e.metric_id, e.value, e.occurred_at) for e in events],
        points_added=added,
    )
    moves = _leagues_take_back(tenant, user, events, added, now)
    facts: list[Fact] = []
    if undo.streak is not None and undo.streak[1] == 0:
        facts.append(StreakLost(user.pk, undo.streak[0]))
    facts += [
        *steps.points_facts(user.pk, undo.points),
        *steps.rank_facts(user.pk, standings),
        *steps.league_facts(user.pk, moves),
    ]
    if facts:
        facts_publish(tenant, user, facts, now)
    return undo


def _metrics_take_back(user: EndUser, events: list[MetricEvent], undo: UserUndo) -> set[int]:
    """Take the events' values off the user's totals and daily rollups; returns the metrics."""
    by_metric: dict[int, Decimal] = defaultdict(Decimal)
    by_day: dict[tuple[int, dt.date], tuple[Decimal, int]] = {}
    for e in events:
        by_metric[e.metric_id] += e.value
        value, count = by_day.get((e.metric_id, e.local_date), (Decimal(0), 0))
        by_day[(e.metric_id, e.local_date)] = (value + e.value, count + 1)
    for metric_pk, value in by_metric.items():
        MetricTotal.objects.filter(user=user, metric_id=metric_pk).update(total=F("total") - value)
    for (metric_pk, day), (value, count) in by_day.items():
        MetricDailyChange.objects.filter(user=user, metric_id=metric_pk, date=day).update(
            change=F("change") - value, events=F("events") - count
        )
    undo.totals = dict(
        MetricTotal.objects.filter(user=user, metric_id__in=by_metric).values_list(
            "metric_id", "total"
        )
    )
    return set(by_metric)


def _achievements_revoke(
    tenant: Tenant, user: EndUser, metric_pks: set[int], undo: UserUndo
) -> list[int]:
    """Delete the completions of metric achievements on these metrics that the remaining
    events no longer reach, then of composites that required a revoked one."""
    definitions = achievement_definitions(tenant)
    done = set(
        AchievementCompletion.objects.filter(user=user).values_list("achievement_id", flat=True)
    )
    revoked: set[int] = set()
    for d in definitions.values():
        if d.pk not in done or d.trigger != Trigger.METRIC or d.metric_pk not in metric_pks:
            continue
        if d.metric_value is None or d.event_filters is None:
            continue
        if d.event_filters:
            reached = metric_filtered_total(user, d.metric_pk, d.event_filters)
        else:
            reached = undo.totals.get(d.metric_pk, Decimal(0))
        if reached < d.metric_value:
            revoked.add(d.pk)
    grew = bool(revoked)
    while grew:
        grew = False
        for d in definitions.values():
            composite = d.trigger == Trigger.ACHIEVEMENT
            if composite and d.pk in done and d.pk not in revoked and d.prerequisites & revoked:
                revoked.add(d.pk)
                grew = True
    if revoked:
        AchievementCompletion.objects.filter(user=user, achievement_id__in=revoked).delete()
    undo.revoked = sorted(revoked)
    return undo.revoked


def _metric_mark(user: EndUser, trigger: TriggerDef, metric_pk: int, mark: int) -> int:
    """The highest multiple of the trigger's threshold the user's remaining events reach, in
    their order (never above the mark paid so far)."""
    rows = (
        MetricEvent.objects.filter(user=user, metric_id=metric_pk, undone__isnull=True)
        .order_by("occurred_at", "pk")
        .values_list("value", "attributes")
    )
    running, best = Decimal(0), 0
    for value, attributes in rows.iterator():
        if trigger.event_filters and not attributes_match(trigger.event_filters, attributes):
            continue
        running += value
        best = max(best, points_domain.multiples_reached(running, trigger.metric_threshold or 1))
    return min(mark, best)


def _reached(award: PointsAward, trigger_pk: int) -> int | None:
    prefix = f"metric:{trigger_pk}:"
    tail = award.dedupe_key[len(prefix) :]
    return int(tail) if award.dedupe_key.startswith(prefix) and tail.isdigit() else None


def _points_take_back(
    tenant: Tenant,
    user: EndUser,
    metric_pks: set[int],
    revoked: list[int],
    undo: UserUndo,
    now: dt.datetime,
) -> list[SystemChange]:
    plan: list[tuple[SystemDef, TriggerDef]] = [
        (s, t)
        for s in points_config(tenant).values()
        for t in s.triggers
        if (t.type == TriggerType.METRIC and t.metric_pk in metric_pks)
        or (t.type == TriggerType.ACHIEVEMENT and t.achievement_pk in revoked)
    ]
    if not plan:
        return []
    ledger = Ledger(tenant, user, now)
    ledger.load(list({s.pk: s for s, _ in plan}.values()))
    awards = list(
        PointsAward.objects.filter(user=user, trigger_id__in=[t.pk for _, t in plan]).order_by(
            "created", "pk"
        )
    )
    marks = {
        m.trigger_id: m
        for m in PointsTriggerMark.objects.filter(user=user, trigger_id__in=[t.pk for _, t in plan])
    }
    set_aside: list[PointsAward] = []
    for system, t in plan:
        mine = [a for a in awards if a.trigger_id == t.pk]
        if t.type == TriggerType.ACHIEVEMENT:
            set_aside += [
                a for a in mine if a.dedupe_key == f"achievement:{t.pk}:{t.achievement_pk}"
            ]
            continue
        mark = marks.get(t.pk)
        if mark is None or t.metric_pk is None:
            continue
        new_mark = _metric_mark(user, t, t.metric_pk, mark.mark)
        if new_mark == mark.mark:
            continue
        kept_high = 0
        for a in mine:
            reached = _reached(a, t.pk)
            if reached is None:
                continue
            if reached > new_mark:
                set_aside.append(a)
            else:
                kept_high = max(kept_high, reached)
        if kept_high < new_mark:  # an award straddled the new mark: pay what is still reached
            ledger.award(system, t, t.points * (new_mark - kept_high), f"metric:{t.pk}:{new_mark}")
        PointsTriggerMark.objects.filter(pk=mark.pk).update(mark=new_mark)
    systems = {s.pk: s for s, _ in plan}
    for award in set_aside:
        ledger.reverse(systems[award.system_id], award, f"undo:{award.public_id}")
        # The key is free again: reaching that multiple (or completing again) pays again.
        PointsAward.objects.filter(pk=award.pk).update(
            dedupe_key=f"{award.dedupe_key}~undone:{undo.undo_id}"[:200]
        )
    return ledger.flush()


def _leagues_take_back(
    tenant: Tenant,
    user: EndUser,
    events: Iterable[MetricEvent],
    points_added: dict[int, int],
    now: dt.datetime,
) -> list[LeagueMove]:
    """The user's current week in each active league loses the undone events of that week and
    the undo's points change; a finished week is left as it is, and no one joins."""
    moves = []
    weeks = {
        league.metric_pk: league.week(now)
        for league in leagues_active(tenant)
        if league.metric_pk is not None
    }
    for metric_pk, week in weeks.items():
        value = sum(
            (
                e.value
                for e in events
                if e.metric_id == metric_pk and week.start <= e.occurred_at < week.end
            ),
            Decimal(0),
        )
        if value:
            moves += leagues_apply_event(
                tenant, user, now=now, metric_pk=metric_pk, value=-value, join=False
            )
    if points_added:
        moves += leagues_apply_event(tenant, user, now=now, points_added=points_added, join=False)
    return moves


@dataclass
class Targets:
    """The events a request names, and what it named that is not there (per item)."""

    events: list[MetricEvent] = field(default_factory=list)
    issues: Issues = field(default_factory=Issues)


def _undone_already(events: list[MetricEvent]) -> set[int]:
    return set(
        UndoneEvent.objects.filter(event_id__in=[e.pk for e in events]).values_list(
            "event_id", flat=True
        )
    )


def undo_targets_by_id(tenant: Tenant, event_ids: Sequence[str]) -> Targets:
    found = {
        str(e.public_id): e
        for e in MetricEvent.objects.filter(tenant=tenant, public_id__in=event_ids).select_related(
            "user"
        )
    }
    undone = _undone_already(list(found.values()))
    targets = Targets()
    for event_id in dict.fromkeys(event_ids):
        event = found.get(event_id)
        if event is None:
            targets.issues.error("no event with this id", id=event_id)
        elif event.pk in undone:
            targets.issues.warning("undone already", id=event_id)
        else:
            targets.events.append(event)
    return targets


def undo_targets_by_key(tenant: Tenant, keys: Sequence[dict[str, str]]) -> Targets:
    """Each item names a user's events by the idempotency key they were sent with (and the
    metric, optionally)."""
    targets = Targets()
    seen: set[int] = set()
    for index, item in enumerate(keys):
        query = MetricEvent.objects.filter(
            tenant=tenant,
            user__external_id=item["userId"],
            idempotency_key=item["idempotencyKey"],
        ).select_related("user")
        if "metric" in item:
            query = query.filter(metric__key=item["metric"])
        events = list(query)
        undone = _undone_already(events)
        if not events:
            targets.issues.error("no event of this user with this idempotency key", index=index)
        elif all(e.pk in undone for e in events):
            targets.issues.warning("undone already", index=index)
        for e in events:
            if e.pk not in undone and e.pk not in seen:
                seen.add(e.pk)
                targets.events.append(e)
    return targets


def undo_targets_in_range(
    tenant: Tenant,
    user_id: str,
    since: dt.datetime,
    until: dt.datetime,
    metric_key: str | None = None,
) -> Targets:
    """All of a user's events (of one metric, optionally) from `since` to `until` (exclusive)
    not undone yet. Raises ValidationError beyond MAX_UNDO_EVENTS."""
    targets = Targets()
    query = MetricEvent.objects.filter(
        tenant=tenant,
        user__external_id=user_id,
        occurred_at__gte=since,
        occurred_at__lt=until,
        undone__isnull=True,
    ).select_related("user")
    if metric_key is not None:
        query = query.filter(metric__key=metric_key)
    events = list(query.order_by("occurred_at", "pk")[: MAX_UNDO_EVENTS + 1])
    if len(events) > MAX_UNDO_EVENTS:
        raise ValidationError(
            f"more than {MAX_UNDO_EVENTS} events in this range: undo a shorter range at a time"
        )
    if not events:
        targets.issues.warning("no event of this user left to undo in this range", userId=user_id)
    targets.events = events
    return targets
