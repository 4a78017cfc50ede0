"""The points configuration services hold their rules themselves, whoever calls them (the admin
API, the dashboard, a management command): an archived system and its parts stay read-only, a
boost's multiplier and dates and a trigger's points are checked, and a misspelt argument is
refused rather than ignored."""

import datetime as dt
from decimal import Decimal

import pytest

from apps.accounts.models import Tenant
from apps.points import configuration
from apps.points.domain import (
    PointsBoostSettings,
    PointsLevelSettings,
    PointsSystemSettings,
    PointsTriggerSettings,
)
from apps.points.errors import PointsConfigInvalidError
from apps.points.models import PointsSystem

START = dt.date(2026, 3, 1)


@pytest.fixture
def archived(tenant: Tenant) -> PointsSystem:
    system, _ = configuration.points_system_create(
        tenant,
        PointsSystemSettings(key="xp", name="XP"),
        levels=[PointsLevelSettings(key="bronze", name="Bronze", points=10)],
        boosts=[PointsBoostSettings(name="Double", start=START, multiplier=Decimal(2))],
        triggers=[PointsTriggerSettings(type="user_creation", points=5)],
    )
    configuration.points_system_archive(tenant, system)
    return system


def test_an_archived_system_and_its_parts_are_refused_by_every_write(
    tenant: Tenant, archived: PointsSystem
) -> None:
    level, boost, trigger = archived.levels.get(), archived.boosts.get(), archived.triggers.get()
    version = Tenant.objects.get(pk=tenant.pk).config_version
    writes = [
        lambda: configuration.points_system_update(
            tenant, archived, PointsSystemSettings(name="New")
        ),
        lambda: configuration.points_level_create(
            tenant, archived, PointsLevelSettings(key="s", name="S", points=1)
        ),
        lambda: configuration.points_level_update(tenant, level, PointsLevelSettings(points=20)),
        lambda: configuration.points_level_delete(tenant, level),
        lambda: configuration.points_boost_update(
            tenant, boost, PointsBoostSettings(name="Triple")
        ),
        lambda: configuration.points_boost_delete(tenant, boost),
        lambda: configuration.points_trigger_create(
            tenant, archived, PointsTriggerSettings(type="user_creation", points=1)
        ),
        lambda: configuration.points_trigger_update(
            tenant, trigger, PointsTriggerSettings(points=7)
        ),
        lambda: configuration.points_trigger_delete(tenant, trigger),
    ]
    for write in writes:
        with pytest.raises(PointsConfigInvalidError, match="Points system xp is archived"):
            write()
    assert Tenant.objects.get(pk=tenant.pk).config_version == version
    assert (archived.levels.count(), archived.boosts.count(), archived.triggers.count()) == (
        1,
        1,
        1,
    )


def test_archiving_an_archived_system_again_changes_nothing(
    tenant: Tenant, archived: PointsSystem
) -> None:
    version = Tenant.objects.get(pk=tenant.pk).config_version

    configuration.points_system_archive(tenant, archived)

    assert Tenant.objects.get(pk=tenant.pk).config_version == version


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"multiplier": Decimal(1)}, "must be greater than 0, less than 100 and not 1"),
        ({"end": START - dt.timedelta(days=1)}, "end must not be before start"),
    ],
)
def test_a_boost_is_checked_by_the_service(tenant: Tenant, settings: dict, message: str) -> None:
    system, _ = configuration.points_system_create(
        tenant, PointsSystemSettings(key="xp", name="XP")
    )
    boost = {"name": "B", "start": START, "multiplier": Decimal(2), **settings}

    with pytest.raises(PointsConfigInvalidError, match=message):
        configuration.points_boost_create(tenant, system, PointsBoostSettings(**boost))
    assert not system.boosts.exists()


def test_a_trigger_of_no_points_is_refused_by_the_service(tenant: Tenant) -> None:
    system, _ = configuration.points_system_create(
        tenant, PointsSystemSettings(key="xp", name="XP")
    )

    with pytest.raises(PointsConfigInvalidError, match="points: must not be 0"):
        configuration.points_trigger_create(
            tenant, system, PointsTriggerSettings(type="user_creation", points=0)
        )


def test_a_new_trigger_without_its_type_is_refused(tenant: Tenant) -> None:
    system, _ = configuration.points_system_create(
        tenant, PointsSystemSettings(key="xp", name="XP")
    )

    with pytest.raises(PointsConfigInvalidError, match="type is required") as refused:
        configuration.points_trigger_create(tenant, system, PointsTriggerSettings(points=5))

    assert refused.value.fields == ("type",)
    assert not system.triggers.exists()


def test_an_argument_spelt_as_on_the_wire_is_refused_not_ignored(tenant: Tenant) -> None:
    system, _ = configuration.points_system_create(
        tenant, PointsSystemSettings(key="xp", name="XP")
    )

    with pytest.raises(TypeError, match=r"unexpected keyword argument .maxPoints."):
        configuration.points_system_update(
            tenant,
            system,
            PointsSystemSettings(maxPoints=10),  # type: ignore[call-arg]
        )
    system.refresh_from_db()
    assert system.max_points is None


def test_a_new_system_without_a_required_setting_is_refused(tenant: Tenant) -> None:
    with pytest.raises(PointsConfigInvalidError, match="name is required") as refused:
        configuration.points_system_create(tenant, PointsSystemSettings(key="xp"))

    assert refused.value.fields == ("name",)
    assert not PointsSystem.objects.filter(tenant=tenant).exists()


def test_what_a_part_was_created_with_is_set_for_good(tenant: Tenant) -> None:
    system, nested = configuration.points_system_create(
        tenant,
        PointsSystemSettings(key="xp", name="XP"),
        levels=[PointsLevelSettings(key="bronze", name="Bronze", points=10)],
        boosts=[PointsBoostSettings(name="Double", start=START, multiplier=Decimal(2))],
    )
    [level], [boost] = nested["levels"], nested["boosts"]
    refused = [
        lambda: configuration.points_system_update(tenant, system, PointsSystemSettings(key="x")),
        lambda: configuration.points_level_update(tenant, level, PointsLevelSettings(key="gold")),
        lambda: configuration.points_boost_update(
            tenant, boost, PointsBoostSettings(user_id="alice")
        ),
    ]
    for write in refused:
        with pytest.raises(PointsConfigInvalidError, match="is set for good"):
            write()

    # The stored value again is not a change.
    configuration.points_level_update(tenant, level, PointsLevelSettings(key="bronze", points=20))
    configuration.points_boost_update(tenant, boost, PointsBoostSettings(user_id=None, name="D"))
    system.refresh_from_db()
    level.refresh_from_db()
    boost.refresh_from_db()
    assert (system.key, level.key, level.points, boost.user_id, boost.name) == (
        "xp",
        "bronze",
        20,
        None,
        "D",
    )
