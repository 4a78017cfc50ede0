"""When an outbound delivery (an email, a push message, a webhook) is tried again: one backoff
schedule, which each kind of delivery may extend."""

import datetime as dt

# After the first failure a minute, then ever longer pauses; about 9 hours in all.
BACKOFF = (
    dt.timedelta(minutes=1),
    dt.timedelta(minutes=5),
    dt.timedelta(minutes=30),
    dt.timedelta(hours=2),
    dt.timedelta(hours=6),
)


def retry_at(
    schedule: tuple[dt.timedelta, ...],
    attempts: int,
    now: dt.datetime,
    retry_after: float | None = None,
) -> dt.datetime | None:
    """After `attempts` failed attempts: when to try again by `schedule` (never before a
    receiver's Retry-After seconds, at most a day), or None when the schedule is spent."""
    if attempts > len(schedule):
        return None
    later = now + schedule[attempts - 1]
    if retry_after:
        later = max(later, now + dt.timedelta(seconds=min(retry_after, 86_400)))
    return later
