import datetime as dt

from apps.core.periodic import periodic_job
from apps.pipeline.services import queued_batches_stale
from apps.pipeline.tasks import queued_events_process_task

# A batch of 1,000 events takes seconds; one still pending after 5 minutes lost its worker.
STALE_AFTER = dt.timedelta(minutes=5)


@periodic_job("queued-events-recover", every=dt.timedelta(minutes=5))
def queued_events_recover(now: dt.datetime) -> None:
    for batch_id in queued_batches_stale(now - STALE_AFTER):
        queued_events_process_task.delay(batch_id)
