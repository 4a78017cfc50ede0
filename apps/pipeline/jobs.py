import datetime as dt

from apps.achievements.jobs import achievements_anniversaries
from apps.achievements.services import Completed
from apps.core.periodic import periodic_job
from apps.notifications.services import notifications_record
from apps.pipeline.services import queued_batches_stale
from apps.pipeline.steps import completion_facts
from apps.pipeline.tasks import queued_events_process_task
from apps.users.models import EndUser
from apps.webhooks.services import webhooks_record

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
