"""The streak services check the rules the admin API's serializers check, for every caller:
freezes that make sense, pauses that end after they start and last at most a year, and grants
only while freezes are on."""

import datetime as dt

import pytest

from apps.accounts.models import Tenant
from apps.streaks.configuration import streak_settings_update
from apps.streaks.domain import FreezeSettings, TenantStreakSettings
from apps.streaks.errors import StreakPauseInvalidError, StreakSettingsInvalidError
from apps.streaks.models import StreakPause, StreakSettings
from apps.streaks.services import streak_freeze_grant, streak_pause_create
from tests.factories import EndUserFactory

FAR = dt.date(2099, 1, 1)


@pytest.mark.parametrize(
    ("freezes", "message"),
    [
        (FreezeSettings(start_count=3, max_count=2), "max_count must be at least start_count"),
        (
            FreezeSettings(start_count=0, max_count=2, auto_earn_interval=7),
            "set both auto_earn_interval and auto_earn_amount, or neither",
        ),
    ],
)
def test_freezes_that_make_no_sense_are_refused(
    tenant: Tenant, freezes: FreezeSettings, message: str
) -> None:
    with pytest.raises(StreakSettingsInvalidError, match=message):
        streak_settings_update(tenant, TenantStreakSettings(freezes=freezes))
    assert not StreakSettings.objects.filter(tenant=tenant, freezes_enabled=True).exists()


@pytest.mark.parametrize(
    ("end", "message"),
    [
        (FAR - dt.timedelta(days=1), "end must not be before start"),
        (FAR + dt.timedelta(days=366), "a pause lasts at most 366 days"),
    ],
)
def test_a_pause_out_of_order_or_too_long_is_refused(
    tenant: Tenant, end: dt.date, message: str
) -> None:
    user = EndUserFactory(tenant=tenant)

    with pytest.raises(StreakPauseInvalidError, match=message):
        streak_pause_create(tenant, user, start=FAR, end=end)
    assert not StreakPause.objects.exists()


def test_no_freeze_is_granted_while_freezes_are_off(tenant: Tenant) -> None:
    user = EndUserFactory(tenant=tenant)
    streak_settings_update(tenant, TenantStreakSettings(freezes=None))

    with pytest.raises(StreakSettingsInvalidError, match="Streak freezes are not enabled"):
        streak_freeze_grant(tenant, user)


def test_a_setting_spelt_as_on_the_wire_is_refused_not_ignored() -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword argument .daysOff."):
        TenantStreakSettings(daysOff=[0])  # type: ignore[call-arg]
