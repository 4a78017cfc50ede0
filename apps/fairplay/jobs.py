"""Fair play's periodic job: the counts of anomaly-rule windows that have ended are dropped
(their flags stay), so the counts table holds the current windows only."""

import datetime as dt

from apps.core.periodic import periodic_job
from apps.fairplay.models import AnomalyCount

# A late event (a batch applied afterwards) may still count in a window for this long after it
# ended; a window's count restarted after that could flag the user again in it, which the flag's
# unique constraint refuses (apps/fairplay/services.py).
GRACE = dt.timedelta(hours=1)


@periodic_job("fairplay-counts", every=dt.timedelta(minutes=15))
def anomaly_counts_prune(now: dt.datetime) -> int:
    """Delete the counts of windows that ended more than GRACE ago; how many."""
    deleted = 0
    for rule_id, minutes in (
        AnomalyCount.objects.values_list("rule_id", "rule__window_minutes").distinct().order_by()
    ):
        ended_before = now - GRACE - dt.timedelta(minutes=minutes)
        deleted += AnomalyCount.objects.filter(
            rule_id=rule_id, window_start__lt=ended_before
        ).delete()[0]
    return deleted
