"""Activating an achievement while the broker is down, on PostgreSQL (the issue's measurement:
the activation answered 500, its retries created duplicates, and 81 of 141 qualifying users
never got the achievement)."""

import datetime as dt
from typing import Any

import pytest
import time_machine
from django.utils import timezone
from kombu.exceptions import OperationalError
from rest_framework.test import APIClient

from apps.achievements.models import Achievement, AchievementCompletion
from apps.core.models import OutboxTask
from apps.core.outbox import outbox_sweep
from apps.core.tasks import outbox_run_task
from tests.concurrency import POSTGRES_ONLY
from tests.factories import MetricFactory, OrganizationWithKey

pytestmark = [
    *POSTGRES_ONLY,
    pytest.mark.django_db(transaction=True),
]

QUALIFYING = 141


def test_an_achievement_activated_while_the_broker_is_down_reaches_every_qualifying_user(
    monkeypatch,
):
    org = OrganizationWithKey("Backdating")
    metric = MetricFactory(tenant=org.tenant, key="words")
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    events = [{"key": "words", "user": {"id": f"u{i}"}, "value": 10} for i in range(QUALIFYING)]
    events += [{"key": "words", "user": {"id": "short"}, "value": 1}]
    assert client.post("/admin/v1/metrics/events", events, format="json").status_code == 202

    def broker_down(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("Connection refused")

    with monkeypatch.context() as patch:
        patch.setattr(outbox_run_task, "apply_async", broker_down)
        created = client.post(
            "/admin/v1/achievements",
            [
                {
                    "name": "Ten words",
                    "trigger": "metric",
                    "metricId": str(metric.public_id),
                    "metricValue": 10,
                    "status": "active",
                }
            ],
            format="json",
        )
        assert created.status_code == 201, created.content  # saved: nothing to retry
        with time_machine.travel(timezone.now() + dt.timedelta(minutes=2)):
            assert outbox_sweep(timezone.now()) == 1  # still down
    assert Achievement.objects.count() == 1
    assert not AchievementCompletion.objects.exists()

    with time_machine.travel(timezone.now() + dt.timedelta(minutes=10)):
        assert outbox_sweep(timezone.now()) == 1
    completed = AchievementCompletion.objects.values_list("user__external_id", flat=True)
    assert sorted(completed) == sorted(f"u{i}" for i in range(QUALIFYING))
    assert all(AchievementCompletion.objects.values_list("backdated", flat=True))
    assert not OutboxTask.objects.exists()
