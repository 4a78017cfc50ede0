"""points.boost_started and points.boost_finished, observed by a job (Trophy's timing,
reference §4.7): global and attribute-filtered boosts are told at 10:00 UTC the day before
they start and at 13:00 UTC the day after they end; a boost for one user at the exact local
start (midnight of `start`) and finish (midnight after `end`) in that user's time zone."""

import datetime as dt
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q

from apps.points.models import PointsBoost
from apps.users.domain import zone
from apps.webhooks.choices import EventType
from apps.webhooks.models import BoostNotice
from apps.webhooks.selectors import endpoints_active
from apps.webhooks.services import event_publish

UTC = dt.UTC
STARTED_AT = dt.time(10)  # UTC, the day before the start
FINISHED_AT = dt.time(13)  # UTC, the day after the end


def notice_time(boost: PointsBoost, kind: str) -> dt.datetime | None:
    if kind == "started":
        day, at = boost.start, STARTED_AT
    elif boost.end is None:
        return None  # an open-ended boost never finishes
    else:
        day, at = boost.end + dt.timedelta(days=1), FINISHED_AT
    if boost.user is not None:
        # One user's boost: its own local midnight (the end is inclusive).
        return dt.datetime.combine(day, dt.time(), tzinfo=zone(boost.user.tz))
    if kind == "started":
        day -= dt.timedelta(days=1)
    return dt.datetime.combine(day, at, tzinfo=UTC)


def payload(boost: PointsBoost, kind: str, now: dt.datetime) -> dict[str, Any]:
    system = boost.system
    return {
        "timestamp": now,
        "boost": {
            "id": str(boost.public_id),
            "name": boost.name,
            "status": "active" if kind == "started" else "finished",
            "userId": boost.user.external_id if boost.user is not None else None,
            "pointsSystemId": str(system.public_id),
            "pointsSystemKey": system.key,
            "pointsSystemName": system.name,
            "start": boost.start.isoformat(),
            "end": boost.end.isoformat() if boost.end else None,
            "multiplier": float(boost.multiplier),
            "rounding": boost.rounding,
        },
    }


def boost_notices_send(now: dt.datetime) -> int:
    """Tell every boost whose start or finish time came in the last two days and was not told
    yet (a scheduler stopped longer than that skips it)."""
    today = now.date()
    window = Q(start__range=(today - dt.timedelta(days=2), today + dt.timedelta(days=2))) | Q(
        end__range=(today - dt.timedelta(days=3), today + dt.timedelta(days=1))
    )
    boosts = (
        PointsBoost.objects.filter(window, system__status="active")
        .exclude(pk__in=BoostNotice.objects.filter(kind="finished").values("boost_id"))
        .select_related("system__tenant", "user")
    )
    sent = 0
    for boost in boosts:
        for kind, type in (
            ("started", EventType.POINTS_BOOST_STARTED),
            ("finished", EventType.POINTS_BOOST_FINISHED),
        ):
            when = notice_time(boost, kind)
            if when is None or not (now - dt.timedelta(days=2) < when <= now):
                continue
            sent += _send_once(boost, kind, type, now)
    return sent


def _send_once(boost: PointsBoost, kind: str, type: str, now: dt.datetime) -> int:
    tenant = boost.system.tenant
    try:
        with transaction.atomic():
            BoostNotice.objects.create(boost=boost, kind=kind, sent_at=now)
            if endpoints_active(tenant):
                event_publish(tenant, type, payload(boost, kind, now), now)
    except IntegrityError:
        return 0  # told already (by this job's previous run, or a concurrent one)
    return 1
