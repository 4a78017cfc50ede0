import datetime as dt
from collections.abc import Callable

from django.conf import settings

from apps.accounts.models import Tenant
from apps.achievements.jobs import achievements_anniversaries
from apps.achievements.services import Completed
from apps.core.facts import Fact, NotificationDue
from apps.core.periodic import periodic_job
from apps.leaderboards.jobs import leaderboards_lifecycle
from apps.leaderboards.models import Leaderboard
from apps.notifications.choices import NotificationType
from apps.notifications.scheduling import (
    HookFactory,
    Hooks,
    reactivations_schedule,
    recaps_schedule,
    streak_reminders_schedule,
)
from apps.pipeline.batches import queued_events_purge_processed
from apps.pipeline.leagues import leagues_week_end
from apps.pipeline.services import facts_publish, facts_tell, points_paid_outside_event
from apps.pipeline.steps import completion_facts
from apps.points.jobs import points_time_triggers
from apps.points.ledger import SystemChange
from apps.points.services import points_for_achievements
from apps.streaks.facts import StreakFreezesChanged, StreakLost
from apps.streaks.jobs import streaks_freezes_earn, streaks_settle_due
from apps.streaks.services import StreakJobOutcome
from apps.users.models import EndUser
from apps.webhooks.choices import EventType
from apps.webhooks.leaderboards import webhooks_leaderboard_status
from apps.webhooks.selectors import tenants_listening


@periodic_job("queued-events-purge", every=dt.timedelta(hours=6))
def queued_events_purge(now: dt.datetime) -> int:
    """Processed batch rows (they hold user fields) are kept QUEUED_EVENTS_RETENTION_DAYS;
    pending ones are never purged."""
    return queued_events_purge_processed(
        now - dt.timedelta(days=settings.QUEUED_EVENTS_RETENTION_DAYS)
    )


@periodic_job("achievements-anniversaries", every=dt.timedelta(hours=1))
def achievements_anniversaries_job(now: dt.datetime) -> int:
    """Hourly, so each user's local date turns over within the hour. The completions are
    notified like those of events (the pipeline orders the reactions)."""

    def react(user: EndUser, completed: list[Completed]) -> None:
        # In the user's own transaction, under their lock (user_job_lock), as every ledger
        # write is.
        pks = tuple(c.definition.pk for c in completed)
        changes = points_for_achievements(user.tenant, user, pks, now)
        facts: list[Fact] = list(completion_facts(user, completed))
        facts += points_paid_outside_event(user.tenant, user, changes, now)
        facts_tell(user.tenant, user, facts, now)

    return len(achievements_anniversaries(now, react))


@periodic_job("points-time-triggers", every=dt.timedelta(minutes=10))
def points_time_triggers_job(now: dt.datetime) -> int:
    """Time-triggered points, with the boards they move and their notifications and webhooks,
    as an event's points have."""

    def react(user: EndUser, changes: list[SystemChange]) -> None:
        facts_tell(
            user.tenant, user, points_paid_outside_event(user.tenant, user, changes, now), now
        )

    return points_time_triggers(now, react)


def _streak_facts(user: EndUser, outcomes: list[StreakJobOutcome]) -> list[Fact]:
    facts: list[Fact] = []
    for outcome in outcomes:
        if outcome.kind == "lost":
            facts.append(StreakLost(user.pk, outcome.amount))
        elif outcome.kind == "freeze_consumed":
            facts.append(StreakFreezesChanged(user.pk, outcome.amount, 0, outcome.freezes))
        elif outcome.kind == "freeze_earned":
            facts.append(StreakFreezesChanged(user.pk, 0, outcome.amount, outcome.freezes))
    return facts


def _streak_reaction(now: dt.datetime) -> Callable[[EndUser, list[StreakJobOutcome]], None]:
    def react(user: EndUser, outcomes: list[StreakJobOutcome]) -> None:
        facts_publish(user.tenant, user, _streak_facts(user, outcomes), now)

    return react


@periodic_job("streaks-settle", every=dt.timedelta(minutes=5))
def streaks_settle_job(now: dt.datetime) -> int:
    """Streaks settled at the users' local midnight; losses and freezes used are told."""
    return len(streaks_settle_due(now, _streak_reaction(now)))


@periodic_job("streaks-freezes-earn", every=dt.timedelta(minutes=10))
def streaks_freezes_earn_job(now: dt.datetime) -> int:
    return len(streaks_freezes_earn(now, _streak_reaction(now)))


@periodic_job("leaderboards-lifecycle", every=dt.timedelta(minutes=10))
def leaderboards_lifecycle_job(now: dt.datetime) -> int:
    """Boards go live and finish; webhooks are told in the same transaction."""

    def react(board: Leaderboard, status: str) -> None:
        webhooks_leaderboard_status(board, status, now)

    return leaderboards_lifecycle(now, react)


@periodic_job("leagues-week-end", every=dt.timedelta(minutes=1))
def leagues_week_end_job(now: dt.datetime) -> int:
    """Every minute, so results and rewards follow a week's end within the minute."""
    return sum(leagues_week_end(now))


# Notification types -> the webhook event telling that one became due.
_DUE_EVENTS: dict[str, str] = {
    NotificationType.STREAK_REMINDER: EventType.EMAILS_STREAK_REMINDER_DUE,
    NotificationType.REACTIVATION: EventType.EMAILS_REACTIVATION_DUE,
    NotificationType.RECAP: EventType.EMAILS_RECAP_DUE,
}


def _due_hooks(now: dt.datetime) -> HookFactory:
    """Tell webhooks of the notifications that became due, for tenants that listen."""
    tenants: dict[int, Tenant] = {}

    def hooks_for(type: str) -> Hooks:
        def react(user: EndUser, fact: NotificationDue) -> None:
            if user.tenant_id not in tenants:
                tenants[user.tenant_id] = Tenant.objects.get(pk=user.tenant_id)
            facts_publish(tenants[user.tenant_id], user, [fact], now)

        return Hooks(tenants=frozenset(tenants_listening(_DUE_EVENTS[type])), react=react)

    return hooks_for


# Slots are hours apart; a run every five minutes sends within five minutes of 17:00 local.
SWEEP_EVERY = dt.timedelta(minutes=5)


@periodic_job("notifications-streak-reminders", every=SWEEP_EVERY)
def notifications_streak_reminders(now: dt.datetime) -> int:
    return streak_reminders_schedule(now, _due_hooks(now))


@periodic_job("notifications-reactivation", every=SWEEP_EVERY)
def notifications_reactivation(now: dt.datetime) -> int:
    return reactivations_schedule(now, _due_hooks(now))


@periodic_job("notifications-recaps", every=SWEEP_EVERY)
def notifications_recaps(now: dt.datetime) -> int:
    return recaps_schedule(now, _due_hooks(now))
