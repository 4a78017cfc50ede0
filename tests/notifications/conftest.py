"""Helpers for notification tests: templates switched on through the admin API, the clock moved
with time-machine, jobs run at a given moment, and the emails Django's locmem backend kept."""

import datetime as dt
from typing import Any

import pytest
import time_machine
from django.core import mail
from django.test import TestCase

from apps.notifications import jobs
from apps.notifications.models import Message
from apps.pipeline import jobs as pipeline_jobs

UTC = dt.UTC
# Issue 23's template: a filter that goes through a 10,000-item list in each of 10,000 loop
# iterations. It took minutes to render; the work budget stops it in a fraction of a second.
COSTLY_HTML = (
    "{% set big = range(10000)|list %}"
    "{% for i in big %}{{ big|select('>', 9998)|first }}{% endfor %}"
)
TOO_MUCH_WORK = "line 1: at most 100,000 items may be gone through"


def at(day: str, hour: int = 12, minute: int = 0, tz: str = "UTC") -> dt.datetime:
    import zoneinfo

    return dt.datetime.fromisoformat(day).replace(
        hour=hour, minute=minute, tzinfo=zoneinfo.ZoneInfo(tz)
    )


def activate(client: Any, type: str, **fields: Any) -> dict[str, Any]:
    """Switch the tenant's built-in template of `type` on (and apply `fields`)."""
    templates = client.get("/admin/v1/email-templates", {"limit": 100}).json()
    template = next(t for t in templates if t["type"] == type)
    response = client.patch(
        "/admin/v1/email-templates", [{"id": template["id"], "status": "active", **fields}]
    )
    assert response.status_code == 200, response.content
    assert response.json()["issues"] == [], response.json()
    return response.json()["updated"][0]


def committed() -> Any:
    """Run what the code under test leaves for after commit (delivery is enqueued then): the
    test's own transaction never commits."""
    return TestCase.captureOnCommitCallbacks(execute=True)


def metric_achievement(
    client: Any, metric: Any, name: str = "Ten words", value: int = 10, **fields: Any
) -> dict[str, Any]:
    """An active metric achievement, completed when the user's total reaches `value`."""
    response = client.post(
        "/admin/v1/achievements",
        [
            {
                "name": name,
                "trigger": "metric",
                "metricId": str(metric.public_id),
                "metricValue": value,
                "status": "active",
                **fields,
            }
        ],
    )
    assert response.status_code == 201, response.content
    return response.json()["created"][0]


def send_event(
    client: Any,
    when: dt.datetime,
    user: str = "u1",
    value: Any = 1,
    key: str = "words",
    **fields: Any,
) -> dict[str, Any]:
    fields.setdefault("email", f"{user}@example.com")
    with time_machine.travel(when, tick=False), committed():
        response = client.post(
            f"/v1/metrics/{key}/event", {"user": {"id": user, **fields}, "value": value}
        )
    assert response.status_code == 201, response.content
    return response.json()


def run_jobs(when: dt.datetime) -> None:
    """Every notification sweep, then the dispatcher, as beat would run them at `when`."""
    with time_machine.travel(when, tick=False), committed():
        pipeline_jobs.notifications_streak_reminders(when)
        pipeline_jobs.notifications_reactivation(when)
        pipeline_jobs.notifications_recaps(when)
        jobs.notifications_dispatch(when)


def outbox_to(address: str) -> list[Any]:
    return [m for m in mail.outbox if any(address in to for to in m.to)]


def messages(**filters: Any) -> list[Message]:
    return list(Message.objects.filter(**filters).order_by("pk"))


@pytest.fixture(autouse=True)
def _empty_outbox() -> None:
    mail.outbox = []
