"""Writes of webhooks: the outbox events that the pipeline's facts become (endpoints:
configuration.py).

`webhooks_record` runs inside the transaction of the change that caused the events: an event
that rolls back never leaves. Delivery is enqueued after commit (apps.webhooks.delivery).
"""

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.achievements.facts import AchievementCompleted
from apps.core.api.renderers import json_dumps
from apps.core.facts import Fact, NotificationDue
from apps.core.outbox import outbox_enqueue
from apps.core.secrets import decrypt_json
from apps.leaderboards.facts import RankChanged
from apps.leagues.facts import LeagueFinished, LeagueScored
from apps.points.facts import PointsChanged
from apps.quests.facts import QuestCompleted, QuestProgressed, QuestsRenewed
from apps.streaks.facts import StreakExtended, StreakFreezesChanged, StreakLost
from apps.users.facts import UserExcluded, UserFlagged, UserReinstated
from apps.users.models import EndUser
from apps.webhooks import payloads
from apps.webhooks.choices import EventType
from apps.webhooks.models import (
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookOnce,
    WebhookThrottle,
)
from apps.webhooks.selectors import endpoints_active

# The HKDF label under which apps.core.secrets encrypts these secrets (a label, not a secret).
SECRET_PURPOSE = "webhook secrets"  # noqa: S105
# Trophy's throttle: at most one such event per key per 15 minutes, carrying the latest state.
THROTTLE = dt.timedelta(minutes=15)
THROTTLED = frozenset(
    {
        EventType.POINTS_CHANGED,
        EventType.LEADERBOARD_CHANGED,
        EventType.LEADERBOARD_RANK_CHANGED,
        EventType.LEAGUE_RANK_CHANGED,
    }
)

# --- endpoints -------------------------------------------------------------------------------


def endpoint_secrets(endpoint: WebhookEndpoint, now: dt.datetime) -> list[str]:
    """The secrets that sign a delivery now: the current one, and the previous one for 24
    hours after a rotation."""
    secrets = [decrypt_json(endpoint.secret, SECRET_PURPOSE)]
    expires = endpoint.previous_secret_expires_at
    if endpoint.previous_secret and expires is not None and now < expires:
        secrets.append(decrypt_json(endpoint.previous_secret, SECRET_PURPOSE))
    return secrets


# --- events ----------------------------------------------------------------------------------


def _serialized(type: str, payload: dict[str, Any]) -> str:
    # The API's own JSON rendering: decimals as exact numbers, datetimes in UTC with Z.
    return json_dumps({"type": type, **payload}).decode()


def event_publish(
    tenant: Tenant,
    type: str,
    payload: dict[str, Any],
    now: dt.datetime,
    *,
    endpoints: list[WebhookEndpoint] | None = None,
    due_at: dt.datetime | None = None,
    force: bool = False,
    dispatch: bool = True,
) -> WebhookEvent | None:
    """Write an event and one delivery per subscribed endpoint (every one of `endpoints` with
    `force`); None when nobody listens. A delivery due now is dispatched after commit, unless
    the caller dispatches once for several events (`dispatch=False`, webhooks_record)."""
    candidates = endpoints if endpoints is not None else endpoints_active(tenant)
    targets = [e for e in candidates if force or e.subscribed(type)]
    if not targets:
        return None
    due_at = due_at or now
    event = WebhookEvent.objects.create(
        tenant=tenant, type=type, body=_serialized(type, payload), created=now, due_at=due_at
    )
    WebhookDelivery.objects.bulk_create(
        [
            WebhookDelivery(
                tenant=tenant, event=event, endpoint=e, next_attempt_at=due_at, created=now
            )
            for e in targets
        ]
    )
    if dispatch and due_at <= now:
        dispatch_enqueue()
    return event


def dispatch_enqueue() -> None:
    """Dispatch the due deliveries after commit: one dispatch sends every delivery due then."""
    from apps.webhooks.tasks import webhooks_dispatch_task

    outbox_enqueue(webhooks_dispatch_task)


def event_publish_throttled(
    tenant: Tenant,
    type: str,
    key: str,
    payload: dict[str, Any],
    now: dt.datetime,
    *,
    dispatch: bool = True,
) -> WebhookEvent | None:
    """Throttled types: the first change of a window goes out at once; later changes inside
    the window are folded into one event sent at the window's end, carrying the latest state
    (which opens the next window)."""
    if not any(e.subscribed(type) for e in endpoints_active(tenant)):
        return None
    with transaction.atomic():
        throttle, _ = WebhookThrottle.objects.select_for_update().get_or_create(
            tenant=tenant, key=f"{type}:{key}", defaults={"window_ends_at": now}
        )
        if throttle.window_ends_at <= now:
            throttle.window_ends_at, throttle.pending_event = now + THROTTLE, None
            throttle.save()
            return event_publish(tenant, type, payload, now, dispatch=dispatch)
        pending = throttle.pending_event
        if pending is not None and pending.due_at > now:
            pending.body = _serialized(type, payload)
            pending.save(update_fields=["body"])
            return pending
        event = event_publish(tenant, type, payload, now, due_at=throttle.window_ends_at)
        throttle.pending_event = event
        throttle.window_ends_at += THROTTLE
        throttle.save()
        return event


@dataclass
class _Told:
    """The webhook events one change publishes, for one user: their deliveries due now are
    handed to one dispatch after commit, not one each."""

    tenant: Tenant
    user: EndUser
    endpoints: list[WebhookEndpoint]
    now: dt.datetime
    due_now: bool = False

    def listens(self, type: str) -> bool:
        return any(e.subscribed(type) for e in self.endpoints)

    def publish(self, type: str, body: dict[str, Any], due_at: dt.datetime | None = None) -> None:
        self._note(event_publish(self.tenant, type, body, self.now, due_at=due_at, dispatch=False))

    def publish_throttled(self, type: str, key: str, body: dict[str, Any]) -> None:
        self._note(event_publish_throttled(self.tenant, type, key, body, self.now, dispatch=False))

    def _note(self, event: WebhookEvent | None) -> None:
        if event is not None and event.due_at <= self.now:
            self.due_now = True


def webhooks_record(
    tenant: Tenant, user: EndUser, facts: Iterable[Fact], now: dt.datetime | None = None
) -> None:
    """Turn an event's facts into outbox events, inside its transaction. The payloads are
    built from the facts alone (apps/webhooks/payloads.py). Costs one cached check when the
    tenant has no endpoint."""
    endpoints = endpoints_active(tenant)
    if not endpoints:
        return
    told = _Told(tenant, user, endpoints, now or timezone.now())
    for fact in facts:
        if isinstance(fact, AchievementCompleted) and not fact.backdated:
            body = payloads.achievement_completed(tenant, user, fact)
            told.publish(EventType.ACHIEVEMENT_COMPLETED, body)
        elif isinstance(fact, StreakExtended):
            type = EventType.STREAK_STARTED if fact.started else EventType.STREAK_EXTENDED
            if told.listens(type):
                told.publish(type, payloads.streak(tenant, user, fact))
        elif isinstance(fact, StreakLost):
            body = {"user": payloads.user(tenant, user), "length": fact.length}
            told.publish(EventType.STREAK_LOST, body)
        elif isinstance(fact, StreakFreezesChanged):
            _freezes(told, fact)
        elif isinstance(fact, NotificationDue):
            _notification_due(told, fact)
        elif isinstance(fact, PointsChanged):
            _points(told, fact)
        elif isinstance(fact, RankChanged) and fact.moved:
            _ranks(told, fact)
        elif isinstance(fact, LeagueScored):
            _league(told, fact)
        elif isinstance(fact, LeagueFinished):
            told.publish(EventType.LEAGUE_FINISHED, payloads.league_finished(tenant, user, fact))
        elif isinstance(fact, QuestCompleted | QuestProgressed | QuestsRenewed):
            _quest(told, fact)
        elif isinstance(fact, UserExcluded):
            told.publish(EventType.USER_EXCLUDED, payloads.user_excluded(tenant, user, fact))
        elif isinstance(fact, UserFlagged):
            told.publish(EventType.USER_FLAGGED, payloads.user_flagged(tenant, user, fact))
        elif isinstance(fact, UserReinstated):
            told.publish(EventType.USER_REINSTATED, payloads.user_reinstated(tenant, user, fact))
    if told.due_now:
        dispatch_enqueue()


def _points(told: _Told, fact: PointsChanged) -> None:
    tenant, user = told.tenant, told.user
    if told.listens(EventType.POINTS_CHANGED):
        body = payloads.points_changed(tenant, user, fact)
        key = f"{user.pk}:{fact.change.system.key}"
        told.publish_throttled(EventType.POINTS_CHANGED, key, body)
    if told.listens(EventType.POINTS_LEVEL_CHANGED):
        level = payloads.level_changed(tenant, user, fact)
        if level is not None:
            told.publish(EventType.POINTS_LEVEL_CHANGED, level)


def _ranks(told: _Told, fact: RankChanged) -> None:
    """The user's rank changed (per user and board), and so did the board (per board); both
    throttled."""
    type = EventType.LEADERBOARD_RANK_CHANGED
    board = fact.standing.board
    if told.listens(type):
        body = payloads.rank_changed(told.tenant, told.user, fact)
        told.publish_throttled(type, f"{told.user.pk}:{board.key}", body)
    if told.listens(EventType.LEADERBOARD_CHANGED):
        body = payloads.board_with_rankings(board, "active", told.now)
        told.publish_throttled(EventType.LEADERBOARD_CHANGED, board.key, body)


def _league(told: _Told, fact: LeagueScored) -> None:
    """league.joined once a week; league.rank_changed when the user's rank in their cohort
    moved, throttled per user and league as Trophy's rank webhooks are."""
    type = EventType.LEAGUE_JOINED if fact.move.joined else EventType.LEAGUE_RANK_CHANGED
    if not told.listens(type):
        return
    body, moved = payloads.league_scored(told.tenant, told.user, fact)
    if fact.move.joined:
        told.publish(type, body)
    elif moved:
        told.publish_throttled(type, f"{told.user.pk}:league:{fact.move.league.key}", body)


def _quest(told: _Told, fact: QuestCompleted | QuestProgressed | QuestsRenewed) -> None:
    """quest.completed (once per user, quest and period: the step completes it once),
    quests.renewed (the user's first progress in a new period), and quest.progressed,
    throttled per user, quest and period as Trophy's rank webhooks are: at most one per 15
    minutes, carrying the latest progress."""
    tenant, user = told.tenant, told.user
    if isinstance(fact, QuestsRenewed):
        if told.listens(EventType.QUESTS_RENEWED):
            told.publish(EventType.QUESTS_RENEWED, payloads.quests_renewed(tenant, user, fact))
    elif isinstance(fact, QuestCompleted):
        if told.listens(EventType.QUEST_COMPLETED):
            told.publish(EventType.QUEST_COMPLETED, payloads.quest_progress(tenant, user, fact))
    elif told.listens(EventType.QUEST_PROGRESSED):
        body = payloads.quest_progress(tenant, user, fact)
        key = f"{user.pk}:quest:{fact.quest.key}:{fact.row.period_first.isoformat()}"
        told.publish_throttled(EventType.QUEST_PROGRESSED, key, body)


def _notification_due(told: _Told, fact: NotificationDue) -> None:
    """emails.*_due, once per user and thing, delivered at the time the notification is due
    (an achievement completed at 10:00 is due at 17:00 local)."""
    type = f"emails.{fact.type.removesuffix('_completed')}_due"
    if not told.listens(type):
        return
    tenant, user, now = told.tenant, told.user, told.now
    try:
        with transaction.atomic():
            WebhookOnce.objects.create(
                tenant=tenant, key=f"due:{user.pk}:{fact.key}"[:300], created=now
            )
    except IntegrityError:
        return  # told already
    found = payloads.notification_due(tenant, user, fact)
    if found is not None:
        told.publish(found[0], found[1], due_at=max(now, fact.due_at))


def _freezes(told: _Told, fact: StreakFreezesChanged) -> None:
    who = payloads.user(told.tenant, told.user)
    if fact.consumed:
        body = {"user": who, "consumed": fact.consumed, "freezes": fact.freezes}
        told.publish(EventType.STREAK_FREEZE_CONSUMED, body)
    if fact.earned:
        body = {"user": who, "earned": fact.earned, "freezes": fact.freezes}
        told.publish(EventType.STREAK_FREEZE_EARNED, body)


def webhook_test_send(endpoint: WebhookEndpoint, now: dt.datetime | None = None) -> WebhookEvent:
    """A test event to this endpoint only, whatever its event filter: an
    achievement.completed with sample data."""
    now = now or timezone.now()
    event = event_publish(
        endpoint.tenant,
        EventType.ACHIEVEMENT_COMPLETED,
        payloads.sample_achievement_completed(now),
        now,
        endpoints=[endpoint],
        force=True,
    )
    assert event is not None  # noqa: S101 - forced to its one endpoint
    return event
