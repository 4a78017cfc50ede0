"""Racing job runs on PostgreSQL, where row locks and skip-locked claims are real: every due
message is recorded once and sent once."""

from collections import Counter
from typing import Any

import pytest
import time_machine
from django.core import mail

from apps.notifications import jobs
from apps.notifications.delivery import messages_send
from apps.notifications.models import Message
from apps.pipeline import jobs as pipeline_jobs
from tests.concurrency import POSTGRES_ONLY, run_all
from tests.conftest import Client
from tests.factories import MetricFactory, OrganizationWithKey, bump
from tests.notifications.conftest import activate, at

pytestmark = [
    *POSTGRES_ONLY,
]

USERS = 60


@pytest.fixture
def inactive_users(db: Any) -> OrganizationWithKey:
    """USERS users last active on 1 March, with reactivation emails switched on."""
    org = OrganizationWithKey("Race")
    MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    activate(client, "reactivation")
    with time_machine.travel(at("2026-03-01", 10), tick=False):
        for n in range(USERS):
            response = client.post(
                "/v1/metrics/words/event",
                {"user": {"id": f"u{n}", "email": f"u{n}@example.com", "tz": "UTC"}, "value": 1},
                format="json",
            )
            assert response.status_code == 201
    mail.outbox = []
    return org


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_and_dispatchers_at_once_send_each_message_once(inactive_users):
    when = at("2026-03-04", 17, 1, tz="America/New_York")

    def sweep_and_send() -> None:
        with time_machine.travel(when, tick=False):
            pipeline_jobs.notifications_reactivation(when)
            jobs.notifications_dispatch(when)

    results = run_all([sweep_and_send, sweep_and_send])

    assert [r for r in results if isinstance(r, Exception)] == []
    assert Message.objects.count() == USERS
    assert Counter(Message.objects.values_list("status", flat=True)) == {"sent": USERS}
    recipients = Counter(to for m in mail.outbox for to in m.to)
    assert len(recipients) == USERS
    assert set(recipients.values()) == {1}


@pytest.mark.django_db(transaction=True)
def test_two_workers_given_the_same_chunk_send_each_message_once(inactive_users):
    when = at("2026-03-04", 17, 1, tz="America/New_York")
    with time_machine.travel(when, tick=False):
        pipeline_jobs.notifications_reactivation(when)
        # Undo what eager dispatch sent, to hand the same rows to two workers by hand.
    Message.objects.update(status="queued", sent_at=None, attempts=0, enqueued_at=None)
    mail.outbox = []
    ids = list(Message.objects.values_list("pk", flat=True))

    results = run_all([lambda: messages_send(ids), lambda: messages_send(ids)])

    assert sum(r.get("sent", 0) for r in results) == USERS
    assert len(mail.outbox) == USERS
