"""Two workers racing for the same deliveries on PostgreSQL: each attempt happens once."""

import datetime as dt

import pytest
from django.utils import timezone

from apps.webhooks.configuration import webhook_endpoint_create
from apps.webhooks.delivery import deliveries_send
from apps.webhooks.domain import WebhookEndpointSettings
from apps.webhooks.models import WebhookAttempt, WebhookDelivery
from apps.webhooks.services import event_publish
from tests.concurrency import POSTGRES_ONLY, run_all
from tests.factories import OrganizationWithKey
from tests.webhooks.receiver import Receiver

pytestmark = [
    *POSTGRES_ONLY,
]

EVENTS = 30


@pytest.mark.django_db(transaction=True)
def test_two_workers_given_the_same_deliveries_attempt_each_once(settings):
    settings.WEBHOOK_ALLOW_HTTP = True
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    org = OrganizationWithKey("Race")
    with Receiver() as receiver:
        endpoint, _ = webhook_endpoint_create(org.tenant, WebhookEndpointSettings(url=receiver.url))
        now = timezone.now()
        later = now + dt.timedelta(minutes=1)  # not due yet: nothing is sent at publishing
        for n in range(EVENTS):
            event_publish(
                org.tenant, "streak.lost", {"length": n}, now, endpoints=[endpoint], due_at=later
            )
        ids = list(WebhookDelivery.objects.values_list("pk", flat=True))

        results = run_all(
            [lambda: deliveries_send(ids, later), lambda: deliveries_send(ids, later)]
        )

        assert sum(r.get("succeeded", 0) for r in results) == EVENTS
        assert len(receiver.wait_for(EVENTS)) == EVENTS
        assert WebhookAttempt.objects.count() == EVENTS
        ids_seen = [r.headers["webhook-id"] for r in receiver.requests]
        assert len(set(ids_seen)) == EVENTS
