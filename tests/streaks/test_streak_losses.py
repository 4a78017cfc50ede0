"""Lost streaks are recorded by whatever writes the settlement that finds them (events, the
settle job, staff's operations), once, and a restore marks those it made good."""

import datetime as dt
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.metrics.models import Metric
from apps.streaks.configuration import streak_settings_update
from apps.streaks.domain import TenantStreakSettings
from apps.streaks.jobs import streak_losses_purge
from apps.streaks.models import StreakLoss
from apps.streaks.services import streak_reset, streak_restore
from apps.users.models import EndUser
from tests.factories import event_body

pytestmark = pytest.mark.django_db

MONDAY = dt.datetime(2026, 3, 9, 12, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
WORDS = [("words", 1)]


def write(api_client: Any, when: dt.datetime, user: str = "alice") -> None:
    with time_machine.travel(when, tick=False):
        response = api_client.post("/v1/metrics/words/event", event_body(user, 1))
    assert response.status_code == 201, response.content


@pytest.fixture
def weekly_streak_lost(api_client: Any, tenant: Tenant, metric: Metric) -> EndUser:
    """Alice wrote in the weeks of 22 Feb and 1 Mar, not in the week of 8 Mar."""
    streak_settings_update(tenant, TenantStreakSettings(frequency="weekly", conditions=WORDS))
    write(api_client, MONDAY - 14 * DAY)
    write(api_client, MONDAY - 7 * DAY)
    return EndUser.objects.get(external_id="alice")


def test_an_operation_by_staff_settles_first_and_records_the_loss(
    tenant: Tenant, weekly_streak_lost: EndUser
) -> None:
    streak_reset(tenant, weekly_streak_lost, now=MONDAY + 7 * DAY)
    loss = StreakLoss.objects.get()
    assert (loss.frequency, loss.length, loss.missed_period) == ("weekly", 2, dt.date(2026, 3, 8))
    # The week of 8 March ended at the start of Sunday 15 March, in the user's zone (UTC).
    assert loss.lost_at == dt.datetime(2026, 3, 15, tzinfo=dt.UTC)


def test_a_restore_marks_the_losses_it_made_good(
    api_client: Any, tenant: Tenant, weekly_streak_lost: EndUser
) -> None:
    write(api_client, MONDAY + 7 * DAY)  # settles the loss, starts again at 1
    now = MONDAY + 7 * DAY + dt.timedelta(hours=1)
    assert streak_restore(tenant, weekly_streak_lost, now=now)
    assert StreakLoss.objects.get().restored_at == now
    assert not streak_restore(tenant, weekly_streak_lost, now=now)  # nothing longer: unchanged
    assert StreakLoss.objects.get().restored_at == now


def test_a_change_of_frequency_is_not_a_loss(
    api_client: Any, tenant: Tenant, weekly_streak_lost: EndUser
) -> None:
    streak_settings_update(tenant, TenantStreakSettings(frequency="daily", conditions=WORDS))
    write(api_client, MONDAY + 7 * DAY)
    assert not StreakLoss.objects.exists()


def test_losses_are_kept_ninety_days(tenant: Tenant, weekly_streak_lost: EndUser) -> None:
    streak_reset(tenant, weekly_streak_lost, now=MONDAY + 7 * DAY)  # lost on 15 March
    lost_at = StreakLoss.objects.get().lost_at
    assert streak_losses_purge(lost_at + 90 * DAY) == 0
    assert streak_losses_purge(lost_at + 90 * DAY + dt.timedelta(seconds=1)) == 1
    assert not StreakLoss.objects.exists()
