import datetime as dt
from collections.abc import Callable

from apps.achievements.jobs import achievements_anniversaries
from apps.achievements.services import Completed
from apps.core.facts import Fact, StreakFreezesChanged, StreakLost
from apps.core.periodic import periodic_job
from apps.leaderboards.jobs import leaderboards_lifecycle
from apps.leaderboards.models import Leaderboard
from apps.notifications.services import notifications_record
from apps.pipeline.services import queued_batches_stale
from apps.pipeline.steps import completion_facts
from apps.pipeline.tasks import queued_events_process_task
from apps.streaks.jobs import streaks_freezes_earn, streaks_settle_due
from apps.streaks.services import StreakJobOutcome
from apps.users.models import EndUser
from apps.webhooks.services import webhooks_leaderboard_status, webhooks_record

# A batch of 1,000 events takes seconds; one still pending after 5 minutes lost its worker.
STALE_AFTER = dt.timedelta(minutes=5)


@periodic_job("queued-events-recover", every=dt.timedelta(minutes=5))
def queued_events_recover(now: dt.datetime) -> None:
    for batch_id in queued_batches_stale(now - STALE_AFTER):
        queued_events_process_task.delay(batch_id)


@periodic_job("achievements-anniversaries", every=dt.timedelta(hours=1))
def achievements_anniversaries_job(now: dt.datetime) -> int:
    """Hourly, so each user's local date turns over within the hour. The completions are
    notified like those of events (the pipeline orders the reactions)."""

    def react(user: EndUser, completed: list[Completed]) -> None:
        facts = completion_facts(user, completed)
        notifications_record(user.tenant, user, facts, now)
        webhooks_record(user.tenant, user, facts, now)

    return len(achievements_anniversaries(now, react))


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
        webhooks_record(user.tenant, user, _streak_facts(user, outcomes), now)

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
        webhooks_leaderboard_status(board.tenant, board.key, status, now)

    return leaderboards_lifecycle(now, react)
