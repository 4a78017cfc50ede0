"""Points through the SDK: the admin configuration of systems and their levels, boosts and
triggers; the application reads (system, boosts, levels, level and points summaries); a user's
points, boosts and event summary; and the points that metric events, achievement completions
and the time-trigger job award (thresholds, boosts and rounding, caps, levels, deductions and
blockIfOutOfPoints, attribute filters).

Time triggers are paid by a periodic job, not by a request: those tests run the job in-process
(the live server shares the test's database) and read its effect through the SDK.
"""

import datetime as dt
import itertools
import uuid
from typing import Any

import pytest
from trophy import CreateTenantRequestItem, TrophyApi
from trophy.core import ApiError
from trophy.errors import NotFoundError, UnauthorizedError, UnprocessableEntityError
from trophy.types import (
    AdminAttribute,
    AdminPointsBoost,
    AdminPointsLevel,
    AdminPointsLevelBadge,
    AdminPointsSystem,
    AdminPointsSystemBadge,
    AdminPointsTrigger,
    CreatedAdminPointsSystem,
    CreatedMetric,
    DeletedResource,
    EventResponse,
    GetUserPointsResponse,
    MetricEventPointsResponse,
    PointsAward,
    PointsBoost,
    PointsLevel,
    PointsLevelSummaryResponseItem,
    PointsRange,
    PointsSystemResponse,
    PointsTrigger,
)
from trophy.users.types import UsersPointsEventSummaryResponseItem

from tests.contract.helpers import (
    CONTRACT_DB,
    MakeClient,
    create_attribute,
    create_metric,
    error_message,
)
from tests.factories import OrganizationWithKey

pytestmark = [pytest.mark.contract, CONTRACT_DB]

UTC = dt.UTC
BADGE = "https://cdn.example.com/badges/xp.png"


# --- helpers ----------------------------------------------------------------------------------


def today() -> dt.date:
    return dt.datetime.now(UTC).date()


def day(offset: int) -> str:
    """Today (UTC) plus `offset` days, as YYYY-MM-DD."""
    return (today() + dt.timedelta(days=offset)).isoformat()


def create_system(client: TrophyApi, key: str = "xp", **fields: Any) -> CreatedAdminPointsSystem:
    fields.setdefault("name", key.upper())
    response = client.admin.points.systems.create(request=[{"key": key, **fields}])
    assert response.issues == []
    (system,) = response.created
    assert isinstance(system, CreatedAdminPointsSystem)
    return system


def add_trigger(client: TrophyApi, system: AdminPointsSystem, **fields: Any) -> AdminPointsTrigger:
    """One trigger, active unless told otherwise."""
    fields.setdefault("status", "active")
    response = client.admin.points.triggers.create(system.id, request=[fields])
    assert response.issues == []
    (trigger,) = response.created
    assert isinstance(trigger, AdminPointsTrigger)
    return trigger


def metric_trigger(
    client: TrophyApi,
    system: AdminPointsSystem,
    metric: CreatedMetric,
    points: int,
    threshold: int,
    **fields: Any,
) -> AdminPointsTrigger:
    return add_trigger(
        client,
        system,
        type="metric",
        points=points,
        metric_id=metric.id,
        metric_threshold=threshold,
        **fields,
    )


def add_level(
    client: TrophyApi, system: AdminPointsSystem, key: str, points: int, **fields: Any
) -> AdminPointsLevel:
    fields.setdefault("name", key.title())
    response = client.admin.points.levels.create(
        system.id, request=[{"key": key, "points": points, **fields}]
    )
    assert response.issues == []
    (level,) = response.created
    assert isinstance(level, AdminPointsLevel)
    return level


def add_boost(
    client: TrophyApi, system: AdminPointsSystem, multiplier: float, **fields: Any
) -> AdminPointsBoost:
    fields.setdefault("name", f"x{multiplier}")
    fields.setdefault("start", day(0))
    response = client.admin.points.boosts.create(
        system.id, request=[{"multiplier": multiplier, **fields}]
    )
    assert response.issues == []
    (boost,) = response.created
    assert isinstance(boost, AdminPointsBoost)
    return boost


def event(
    client: TrophyApi,
    user: str,
    value: float,
    key: str = "words",
    attributes: dict[str, str] | None = None,
    **user_fields: Any,
) -> EventResponse:
    kwargs: dict[str, Any] = {} if attributes is None else {"attributes": attributes}
    response = client.metrics.event(
        key, user={"id": user, "tz": "UTC", **user_fields}, value=value, **kwargs
    )
    assert isinstance(response, EventResponse)
    assert all(isinstance(p, MetricEventPointsResponse) for p in response.points.values())
    return response


def earned(response: EventResponse, key: str = "xp") -> MetricEventPointsResponse:
    """The event's entry for one points system (it must be there)."""
    assert key in response.points, response.points
    points = response.points[key]
    assert points.key == key
    assert all(isinstance(a, PointsAward) for a in points.awards)
    assert sum(a.awarded or 0 for a in points.awards) == points.added
    return points


def total(client: TrophyApi, user: str, key: str = "xp") -> int:
    return client.users.points(user, key).total


def assert_recent(moment: dt.datetime | str | None) -> None:
    if isinstance(moment, str):
        moment = dt.datetime.fromisoformat(moment.replace("Z", "+00:00"))
    assert isinstance(moment, dt.datetime)
    assert moment.tzinfo is not None
    assert abs(dt.datetime.now(UTC) - moment) < dt.timedelta(minutes=1)


@pytest.fixture
def xp(client: TrophyApi) -> CreatedAdminPointsSystem:
    """A points system, no triggers yet."""
    return create_system(client, "xp", name="XP")


@pytest.fixture
def plan(client: TrophyApi) -> AdminAttribute:
    """A user attribute."""
    return create_attribute(client, "plan", "user")


@pytest.fixture
def device(client: TrophyApi) -> AdminAttribute:
    """An event attribute."""
    return create_attribute(client, "device", "event")


# --- admin: systems ---------------------------------------------------------------------------


def test_create_a_system_with_nested_levels_boosts_and_triggers_answers_201(
    client: TrophyApi, words: CreatedMetric
) -> None:
    response = client.admin.points.systems.with_raw_response.create(
        request=[
            {
                "name": "XP",
                "key": "xp",
                "description": "Experience",
                "badge": {"url": BADGE},
                "max_points": 1000,
                "levels": [
                    {"name": "Bronze", "key": "bronze", "points": 10},
                    {
                        "name": "Silver",
                        "key": "silver",
                        "points": 50,
                        "description": "Halfway",
                        "badge": {"url": BADGE},
                    },
                ],
                "boosts": [{"name": "Launch", "start": day(0), "end": day(6), "multiplier": 2}],
                "triggers": [
                    {"type": "metric", "points": 5, "metric_id": words.id, "metric_threshold": 10}
                ],
            }
        ]
    )

    assert response.status_code == 201
    assert response.data.issues == []
    (created,) = response.data.created
    assert isinstance(created, CreatedAdminPointsSystem)
    assert uuid.UUID(created.id)
    assert (created.name, created.key, created.description, created.status) == (
        "XP",
        "xp",
        "Experience",
        "active",
    )
    assert (created.badge, created.max_points) == (AdminPointsSystemBadge(url=BADGE), 1000)
    assert [
        (lv.name, lv.key, lv.points, lv.description, lv.badge) for lv in created.levels or []
    ] == [
        ("Bronze", "bronze", 10, "", None),
        ("Silver", "silver", 50, "Halfway", AdminPointsLevelBadge(url=BADGE)),
    ]
    (boost,) = created.boosts or []
    assert (boost.name, boost.status, boost.start, boost.end) == (
        "Launch",
        "active",
        day(0),
        day(6),
    )
    assert (boost.multiplier, boost.rounding, boost.user_id, boost.user_attributes) == (
        2,
        "down",
        None,
        [],
    )
    (trigger,) = created.triggers or []
    assert (trigger.type, trigger.points, trigger.status) == ("metric", 5, "inactive")
    assert (trigger.metric_id, trigger.metric_threshold, trigger.event_attributes) == (
        words.id,
        10,
        [],
    )
    assert (trigger.user_attributes, trigger.block_if_out_of_points) == ([], False)
    assert (trigger.achievement_id, trigger.streak_length) == (None, None)
    assert (trigger.time_unit, trigger.time_interval) == (None, None)

    fetched = client.admin.points.systems.get(created.id)
    assert isinstance(fetched, AdminPointsSystem)
    assert (fetched.id, fetched.name, fetched.key, fetched.description, fetched.status) == (
        created.id,
        "XP",
        "xp",
        "Experience",
        "active",
    )
    assert (fetched.badge, fetched.max_points) == (created.badge, 1000)
    assert client.admin.points.systems.list() == [fetched]
    assert client.admin.points.levels.list(created.id) == created.levels
    assert client.admin.points.boosts.list(created.id) == created.boosts
    assert client.admin.points.triggers.list(created.id) == created.triggers


def test_a_system_created_without_nested_items_leaves_them_out(client: TrophyApi) -> None:
    created = create_system(client, "coins", name="Coins")

    assert (created.levels, created.boosts, created.triggers) == (None, None, None)
    assert (created.description, created.badge, created.max_points) == ("", None, None)
    assert client.admin.points.levels.list(created.id) == []
    assert client.admin.points.boosts.list(created.id) == []
    assert client.admin.points.triggers.list(created.id) == []


def test_update_a_system_changes_the_given_fields_and_null_clears_badge_and_max_points(
    client: TrophyApi,
) -> None:
    created = create_system(
        client, "xp", name="XP", description="d", badge={"url": BADGE}, max_points=100
    )

    response = client.admin.points.systems.with_raw_response.update(
        request=[{"id": created.id, "name": "Experience", "badge": None, "max_points": None}]
    )

    assert response.status_code == 200
    assert response.data.issues == []
    (updated,) = response.data.updated
    assert isinstance(updated, AdminPointsSystem)
    assert (updated.id, updated.name, updated.key, updated.description) == (
        created.id,
        "Experience",
        "xp",
        "d",
    )
    assert (updated.badge, updated.max_points) == (None, None)
    assert client.admin.points.systems.get(created.id) == updated

    (capped,) = client.admin.points.systems.update(
        request=[{"id": created.id, "max_points": 50, "description": ""}]
    ).updated
    assert (capped.max_points, capped.description, capped.name) == (50, "", "Experience")


def test_update_of_unknown_systems_is_an_issue_per_item(client: TrophyApi) -> None:
    unknown = str(uuid.uuid4())

    response = client.admin.points.systems.update(
        request=[{"id": unknown, "name": "x"}, {"id": "not-a-uuid", "name": "y"}]
    )

    assert response.updated == []
    assert [(i.id, i.index, i.severity) for i in response.issues] == [
        (unknown, None, "error"),
        (None, 1, "error"),  # an item without a valid id is named by its index
    ]
    assert response.issues[0].message == "Points system not found by ID"
    assert "id" in response.issues[1].message


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ({"key": "has space"}, "key"),
        ({"key": "ok", "max_points": 0}, "maxPoints"),
        ({"key": "ok", "badge": {"url": "not a url"}}, "url"),
        ({"key": "ok", "levels": [{"name": "L", "key": "l", "points": -1}]}, "points"),
        ({"key": "ok", "boosts": [{"name": "B", "start": "2025-01-01", "multiplier": 1}]}, "mult"),
        ({"key": "ok", "triggers": [{"type": "metric", "points": 5}]}, "metricId"),
        ({"key": "ok", "triggers": [{"type": "user_creation", "points": 0}]}, "points"),
    ],
)
def test_invalid_systems_are_issues_and_create_nothing(
    client: TrophyApi, item: dict[str, Any], expected: str
) -> None:
    response = client.admin.points.systems.with_raw_response.create(
        request=[{"name": "Invalid", **item}]
    )

    assert response.status_code == 200
    assert response.data.created == []
    assert [(i.index, i.severity) for i in response.data.issues] == [(0, "error")]
    assert expected in response.data.issues[0].message
    assert client.admin.points.systems.list() == []


def test_a_system_key_is_unique(client: TrophyApi) -> None:
    create_system(client, "xp")

    response = client.admin.points.systems.with_raw_response.create(
        request=[{"name": "Again", "key": "xp"}, {"name": "Coins", "key": "coins"}]
    )

    assert response.status_code == 201
    assert [s.key for s in response.data.created] == ["coins"]
    assert [(i.index, i.severity) for i in response.data.issues] == [(0, "error")]
    assert "Key already in use" in response.data.issues[0].message


def test_list_systems_is_oldest_first_with_limit_and_skip(client: TrophyApi) -> None:
    keys = [create_system(client, f"sys-{n}").key for n in range(3)]

    assert [s.key for s in client.admin.points.systems.list()] == keys
    assert [s.key for s in client.admin.points.systems.list(limit=1, skip=1)] == ["sys-1"]
    assert client.admin.points.systems.list(skip=3) == []


def test_delete_archives_a_system_it_stops_awarding_and_disappears_from_every_read(
    client: TrophyApi, words: CreatedMetric
) -> None:
    xp = create_system(client, "xp")
    coins = create_system(client, "coins")
    metric_trigger(client, xp, words, 5, 1)
    event(client, "ada", 1)
    unknown = str(uuid.uuid4())
    # ada has xp: nothing is archived until its key confirms it (issue 27's guard rails).
    refused = client.admin.points.systems.delete(ids=[xp.id])
    assert refused.deleted == []
    assert [(i.id, i.severity) for i in refused.issues] == [(xp.id, "error")]

    response = client.admin.points.systems.with_raw_response.delete(
        ids=[xp.id, unknown, "not-a-uuid"],
        request_options={"additional_query_parameters": {"confirm": "xp"}},
    )

    assert response.status_code == 200
    assert response.data.deleted == [DeletedResource(id=xp.id)]
    assert [(i.id, i.severity) for i in response.data.issues] == [
        (unknown, "error"),
        ("not-a-uuid", "error"),
    ]
    with pytest.raises(NotFoundError) as caught:
        client.admin.points.systems.get(xp.id)
    assert error_message(caught.value) == "Points system not found by ID"
    assert [s.id for s in client.admin.points.systems.list()] == [coins.id]
    for call in (
        lambda: client.points.system("xp"),
        lambda: client.points.levels("xp"),
        lambda: client.users.points("ada", "xp"),
        lambda: client.admin.points.triggers.list(xp.id),
    ):
        with pytest.raises(NotFoundError):
            call()
    assert event(client, "ada", 1).points == {}


def test_get_of_an_unknown_or_malformed_system_id_is_404(client: TrophyApi) -> None:
    for system_id in (str(uuid.uuid4()), "not-a-uuid"):
        with pytest.raises(NotFoundError) as caught:
            client.admin.points.systems.get(system_id)
        assert error_message(caught.value) == "Points system not found by ID"
        for call in (
            lambda system_id=system_id: client.admin.points.levels.list(system_id),
            lambda system_id=system_id: client.admin.points.boosts.list(system_id),
            lambda system_id=system_id: client.admin.points.triggers.list(system_id),
            lambda system_id=system_id: client.admin.points.levels.create(
                system_id, request=[{"name": "L", "key": "l", "points": 1}]
            ),
        ):
            with pytest.raises(NotFoundError):
                call()


def test_the_points_endpoints_refuse_an_unknown_key(
    client: TrophyApi, make_client: MakeClient, xp: CreatedAdminPointsSystem
) -> None:
    anonymous = make_client("not-a-key")

    for call in (
        anonymous.admin.points.systems.list,
        lambda: anonymous.admin.points.systems.get(xp.id),
        lambda: anonymous.admin.points.systems.create(request=[{"name": "x", "key": "x"}]),
        lambda: anonymous.admin.points.levels.list(xp.id),
        lambda: anonymous.admin.points.boosts.list(xp.id),
        lambda: anonymous.admin.points.triggers.list(xp.id),
        lambda: anonymous.points.system("xp"),
        lambda: anonymous.points.levels("xp"),
        lambda: anonymous.users.points("ada", "xp"),
    ):
        with pytest.raises(UnauthorizedError) as caught:
            call()
        assert caught.value.status_code == 401


# --- admin: levels ----------------------------------------------------------------------------


def test_levels_create_get_update_list_and_delete(
    client: TrophyApi, xp: CreatedAdminPointsSystem
) -> None:
    response = client.admin.points.levels.with_raw_response.create(
        xp.id,
        request=[
            {"name": "Gold", "key": "gold", "points": 100, "badge": {"url": BADGE}},
            {"name": "Bronze", "key": "bronze", "points": 0, "description": "Start"},
            {"name": "Again", "key": "gold", "points": 5},
        ],
    )

    assert response.status_code == 201
    gold, bronze = response.data.created
    assert all(isinstance(lv, AdminPointsLevel) for lv in (gold, bronze))
    assert (gold.name, gold.key, gold.points, gold.description, gold.badge) == (
        "Gold",
        "gold",
        100,
        "",
        AdminPointsLevelBadge(url=BADGE),
    )
    assert (bronze.key, bronze.points, bronze.description, bronze.badge) == (
        "bronze",
        0,
        "Start",
        None,
    )
    assert [(i.index, i.severity) for i in response.data.issues] == [(2, "error")]
    assert "Key already in use" in response.data.issues[0].message
    assert client.admin.points.levels.get(xp.id, gold.id) == gold

    updated = client.admin.points.levels.with_raw_response.update(
        xp.id,
        request=[
            {"id": gold.id, "points": 200, "description": "Top", "badge": None},
            {"id": bronze.id, "key": "renamed"},  # the key cannot change
        ],
    )

    assert updated.status_code == 200
    (changed,) = updated.data.updated
    assert (changed.id, changed.name, changed.key, changed.points) == (gold.id, "Gold", "gold", 200)
    assert (changed.description, changed.badge) == ("Top", None)
    assert [(i.id, i.severity) for i in updated.data.issues] == [(bronze.id, "error")]
    assert "key" in updated.data.issues[0].message
    assert client.admin.points.levels.get(xp.id, bronze.id) == bronze
    assert client.admin.points.levels.list(xp.id) == [changed, bronze]
    assert client.admin.points.levels.list(xp.id, limit=1, skip=1) == [bronze]

    unknown = str(uuid.uuid4())
    deleted = client.admin.points.levels.delete(xp.id, ids=[gold.id, unknown])

    assert deleted.deleted == [DeletedResource(id=gold.id)]
    assert [(i.id, i.severity) for i in deleted.issues] == [(unknown, "error")]
    assert deleted.issues[0].message == "Level not found by ID"
    assert client.admin.points.levels.list(xp.id) == [bronze]
    with pytest.raises(NotFoundError):
        client.admin.points.levels.get(xp.id, gold.id)
    assert [lv.key for lv in client.points.levels("xp")] == ["bronze"]


def test_a_level_of_another_system_is_not_found_through_this_one(
    client: TrophyApi, xp: CreatedAdminPointsSystem
) -> None:
    coins = create_system(client, "coins")
    gold = add_level(client, coins, "gold", 100)

    with pytest.raises(NotFoundError):
        client.admin.points.levels.get(xp.id, gold.id)
    response = client.admin.points.levels.update(xp.id, request=[{"id": gold.id, "points": 1}])
    assert response.updated == []
    assert response.issues[0].message == "Level not found by ID"
    assert client.admin.points.levels.get(coins.id, gold.id).points == 100


# --- admin: boosts ----------------------------------------------------------------------------


def test_boosts_create_with_each_targeting_and_status_by_their_dates(
    client: TrophyApi, xp: CreatedAdminPointsSystem, plan: AdminAttribute
) -> None:
    client.users.create(id="ada")

    response = client.admin.points.boosts.with_raw_response.create(
        xp.id,
        request=[
            {"name": "Now", "start": day(0), "multiplier": 2},
            {"name": "Later", "start": day(3), "end": day(5), "multiplier": 1.5, "rounding": "up"},
            {
                "name": "Over",
                "start": day(-5),
                "end": day(-1),
                "multiplier": 3,
                "rounding": "nearest",
            },
            {"name": "Ada's", "start": day(0), "end": day(0), "multiplier": 0.5, "user_id": "ada"},
            {
                "name": "Pro",
                "start": day(-1),
                "multiplier": 2.25,
                "user_attributes": [{"attribute_id": plan.id, "attribute_value": "pro"}],
            },
        ],
    )

    assert response.status_code == 201
    assert response.data.issues == []
    now, later, _over, adas, pro = response.data.created
    assert all(isinstance(b, AdminPointsBoost) for b in response.data.created)
    assert [(b.name, b.status, b.start, b.end) for b in response.data.created] == [
        ("Now", "active", day(0), None),
        ("Later", "scheduled", day(3), day(5)),
        ("Over", "finished", day(-5), day(-1)),
        ("Ada's", "active", day(0), day(0)),
        ("Pro", "active", day(-1), None),
    ]
    assert [(b.multiplier, b.rounding) for b in response.data.created] == [
        (2, "down"),
        (1.5, "up"),
        (3, "nearest"),
        (0.5, "down"),
        (2.25, "down"),
    ]
    assert [b.user_id for b in response.data.created] == [None, None, None, "ada", None]
    assert [(a.attribute_id, a.attribute_value) for a in pro.user_attributes or []] == [
        (plan.id, "pro")
    ]
    assert now.user_attributes == []
    assert client.admin.points.boosts.get(xp.id, later.id) == later
    assert client.admin.points.boosts.list(xp.id) == response.data.created
    assert [b.id for b in client.admin.points.boosts.list(xp.id, limit=2, skip=3)] == [
        adas.id,
        pro.id,
    ]


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ({"multiplier": 1}, "multiplier"),
        ({"multiplier": 0}, "multiplier"),
        ({"multiplier": 100}, "multiplier"),
        ({"multiplier": -2}, "multiplier"),
        ({"multiplier": 2, "end": "2020-01-01"}, "end"),
        ({"multiplier": 2, "user_id": "ghost"}, "User does not exist"),
        ({"multiplier": 2, "rounding": "sideways"}, "rounding"),
        ({"multiplier": 2, "start": "someday"}, "start"),
        (
            {
                "multiplier": 2,
                "user_attributes": [{"attribute_id": str(uuid.uuid4()), "attribute_value": "x"}],
            },
            "not found",
        ),
    ],
)
def test_invalid_boosts_are_issues_and_create_nothing(
    client: TrophyApi, xp: CreatedAdminPointsSystem, item: dict[str, Any], expected: str
) -> None:
    response = client.admin.points.boosts.with_raw_response.create(
        xp.id, request=[{"name": "Invalid", "start": day(0), **item}]
    )

    assert response.status_code == 200
    assert response.data.created == []
    assert [(i.index, i.severity) for i in response.data.issues] == [(0, "error")]
    assert expected in response.data.issues[0].message
    assert client.admin.points.boosts.list(xp.id) == []


def test_user_id_and_user_attributes_are_mutually_exclusive(
    client: TrophyApi, xp: CreatedAdminPointsSystem, plan: AdminAttribute
) -> None:
    client.users.create(id="ada")
    refs = [{"attribute_id": plan.id, "attribute_value": "pro"}]

    created = client.admin.points.boosts.create(
        xp.id,
        request=[
            {
                "name": "Both",
                "start": day(0),
                "multiplier": 2,
                "user_id": "ada",
                "user_attributes": refs,
            }
        ],
    )
    adas = add_boost(client, xp, 2, user_id="ada")
    updated = client.admin.points.boosts.update(
        xp.id, request=[{"id": adas.id, "user_attributes": refs}]
    )

    assert created.created == []
    assert "mutually exclusive" in created.issues[0].message
    assert updated.updated == []
    assert [(i.id, i.severity) for i in updated.issues] == [(adas.id, "error")]
    assert client.admin.points.boosts.get(xp.id, adas.id) == adas


def test_update_a_boost_changes_the_given_fields(
    client: TrophyApi, xp: CreatedAdminPointsSystem, plan: AdminAttribute
) -> None:
    boost = add_boost(
        client,
        xp,
        2,
        name="Launch",
        end=day(3),
        user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}],
    )

    response = client.admin.points.boosts.with_raw_response.update(
        xp.id,
        request=[
            {
                "id": boost.id,
                "name": "Relaunch",
                "multiplier": 3.5,
                "rounding": "nearest",
                "end": None,
                "user_attributes": None,
            }
        ],
    )

    assert response.status_code == 200
    assert response.data.issues == []
    (updated,) = response.data.updated
    assert (updated.id, updated.name, updated.multiplier, updated.rounding) == (
        boost.id,
        "Relaunch",
        3.5,
        "nearest",
    )
    assert (updated.start, updated.end, updated.status, updated.user_attributes) == (
        day(0),
        None,
        "active",
        [],
    )
    assert client.admin.points.boosts.get(xp.id, boost.id) == updated

    (scheduled,) = client.admin.points.boosts.update(
        xp.id, request=[{"id": boost.id, "start": day(2)}]
    ).updated
    assert (scheduled.start, scheduled.status) == (day(2), "scheduled")

    backwards = client.admin.points.boosts.update(xp.id, request=[{"id": boost.id, "end": day(1)}])
    assert backwards.updated == []
    assert "end" in backwards.issues[0].message
    assert client.admin.points.boosts.get(xp.id, boost.id) == scheduled


def test_delete_boosts_and_report_unknown_ids(
    client: TrophyApi, xp: CreatedAdminPointsSystem
) -> None:
    gone = add_boost(client, xp, 2)
    kept = add_boost(client, xp, 3)
    unknown = str(uuid.uuid4())

    response = client.admin.points.boosts.delete(xp.id, ids=[gone.id, unknown])

    assert response.deleted == [DeletedResource(id=gone.id)]
    assert [(i.id, i.message) for i in response.issues] == [
        (unknown, "Points boost not found by ID")
    ]
    assert client.admin.points.boosts.list(xp.id) == [kept]
    with pytest.raises(NotFoundError):
        client.admin.points.boosts.get(xp.id, gone.id)


# --- admin: triggers --------------------------------------------------------------------------


def test_create_a_trigger_of_each_type_renders_only_its_own_fields(
    client: TrophyApi,
    xp: CreatedAdminPointsSystem,
    words: CreatedMetric,
    plan: AdminAttribute,
    device: AdminAttribute,
) -> None:
    (tutorial,) = client.admin.achievements.create(
        request=[{"name": "Tutorial", "trigger": "api", "key": "tutorial", "status": "active"}]
    ).created

    response = client.admin.points.triggers.with_raw_response.create(
        xp.id,
        request=[
            {
                "type": "metric",
                "points": 5,
                "metric_id": words.id,
                "metric_threshold": 10,
                "status": "active",
                "event_attributes": [{"attribute_id": device.id, "attribute_value": "mobile"}],
            },
            {"type": "streak", "points": 50, "streak_length": 7},
            {
                "type": "achievement",
                "points": 20,
                "achievement_id": tutorial.id,
                "user_attributes": [{"attribute_id": plan.id, "attribute_value": "pro"}],
            },
            {"type": "time", "points": 1, "time_unit": "hours", "time_interval": 4},
            {"type": "user_creation", "points": 100, "status": "inactive"},
            {
                "type": "metric",
                "points": -10,
                "metric_id": words.id,
                "metric_threshold": 1,
                "block_if_out_of_points": True,
            },
        ],
    )

    assert response.status_code == 201
    assert response.data.issues == []
    metric, streak, achievement, time, creation, deduction = response.data.created
    assert all(isinstance(t, AdminPointsTrigger) for t in response.data.created)
    assert [(t.type, t.points, t.status) for t in response.data.created] == [
        ("metric", 5, "active"),
        ("streak", 50, "inactive"),
        ("achievement", 20, "inactive"),
        ("time", 1, "inactive"),
        ("user_creation", 100, "inactive"),
        ("metric", -10, "inactive"),
    ]
    assert (metric.metric_id, metric.metric_threshold) == (words.id, 10)
    assert [(a.attribute_id, a.attribute_value) for a in metric.event_attributes or []] == [
        (device.id, "mobile")
    ]
    assert streak.streak_length == 7
    assert achievement.achievement_id == tutorial.id
    assert [(a.attribute_id, a.attribute_value) for a in achievement.user_attributes] == [
        (plan.id, "pro")
    ]
    assert (time.time_unit, time.time_interval) == ("hours", 4)
    assert (deduction.block_if_out_of_points, metric.block_if_out_of_points) == (True, False)
    for trigger in (streak, achievement, time, creation):
        assert (trigger.metric_id, trigger.metric_threshold, trigger.event_attributes) == (
            None,
            None,
            None,
        )
    for trigger in (metric, achievement, time, creation):
        assert trigger.streak_length is None
    for trigger in (metric, streak, time, creation):
        assert trigger.achievement_id is None
    for trigger in (metric, streak, achievement, creation):
        assert (trigger.time_unit, trigger.time_interval) == (None, None)
    assert client.admin.points.triggers.get(xp.id, achievement.id) == achievement
    assert client.admin.points.triggers.list(xp.id) == response.data.created
    assert client.admin.points.triggers.list(xp.id, limit=2, skip=4) == [creation, deduction]


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ({"type": "user_creation", "points": 0}, "points"),
        ({"type": "badge", "points": 1}, "type"),
        ({"type": "metric", "points": 1, "metric_id": "METRIC"}, "metricThreshold"),
        ({"type": "metric", "points": 1, "metric_threshold": 3}, "metricId"),
        (
            {"type": "metric", "points": 1, "metric_id": str(uuid.uuid4()), "metric_threshold": 3},
            "metricId",
        ),
        (
            {"type": "metric", "points": 1, "metric_id": "METRIC", "metric_threshold": 0},
            "metricThreshold",
        ),
        ({"type": "streak", "points": 1}, "streakLength"),
        ({"type": "streak", "points": 1, "streak_length": 0}, "streakLength"),
        ({"type": "streak", "points": 1, "streak_length": 2, "time_unit": "days"}, "timeUnit"),
        ({"type": "time", "points": 1, "time_unit": "days"}, "timeInterval"),
        ({"type": "time", "points": 1, "time_unit": "weeks", "time_interval": 1}, "timeUnit"),
        ({"type": "time", "points": 1, "time_unit": "day", "time_interval": 1}, "timeUnit"),
        ({"type": "achievement", "points": 1}, "achievementId"),
        (
            {"type": "achievement", "points": 1, "achievement_id": str(uuid.uuid4())},
            "achievementId",
        ),
        ({"type": "user_creation", "points": 1, "metric_id": "METRIC"}, "metricId"),
        ({"type": "user_creation", "points": 1, "status": "archived"}, "status"),
        (
            {
                "type": "user_creation",
                "points": 1,
                "user_attributes": [{"attribute_id": "EVENT_ATTRIBUTE", "attribute_value": "x"}],
            },
            "not found",
        ),
    ],
)
def test_invalid_triggers_are_issues_and_create_nothing(
    client: TrophyApi,
    xp: CreatedAdminPointsSystem,
    words: CreatedMetric,
    device: AdminAttribute,
    item: dict[str, Any],
    expected: str,
) -> None:
    placeholders = {"METRIC": words.id, "EVENT_ATTRIBUTE": device.id}
    item = {k: placeholders.get(v, v) if isinstance(v, str) else v for k, v in item.items()}
    for ref in item.get("user_attributes", []):
        ref["attribute_id"] = placeholders.get(ref["attribute_id"], ref["attribute_id"])

    response = client.admin.points.triggers.with_raw_response.create(xp.id, request=[item])

    assert response.status_code == 200
    assert response.data.created == []
    assert [(i.index, i.severity) for i in response.data.issues] == [(0, "error")]
    assert expected in response.data.issues[0].message
    assert client.admin.points.triggers.list(xp.id) == []


def test_update_a_trigger_keeps_omitted_fields(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric, plan: AdminAttribute
) -> None:
    trigger = metric_trigger(
        client,
        xp,
        words,
        5,
        10,
        user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}],
    )

    response = client.admin.points.triggers.with_raw_response.update(
        xp.id,
        request=[
            {"id": trigger.id, "points": 7, "metric_threshold": 5, "block_if_out_of_points": True}
        ],
    )

    assert response.status_code == 200
    assert response.data.issues == []
    (updated,) = response.data.updated
    assert (updated.id, updated.type, updated.points, updated.metric_threshold) == (
        trigger.id,
        "metric",
        7,
        5,
    )
    assert (updated.status, updated.metric_id, updated.block_if_out_of_points) == (
        "active",
        words.id,
        True,
    )
    assert updated.user_attributes == trigger.user_attributes
    assert client.admin.points.triggers.get(xp.id, trigger.id) == updated

    (cleared,) = client.admin.points.triggers.update(
        xp.id, request=[{"id": trigger.id, "user_attributes": None, "status": "inactive"}]
    ).updated
    assert (cleared.user_attributes, cleared.status, cleared.points) == ([], "inactive", 7)

    refused = client.admin.points.triggers.update(xp.id, request=[{"id": trigger.id, "points": 0}])
    assert refused.updated == []
    assert "points" in refused.issues[0].message


def test_the_type_of_a_trigger_changes_only_while_it_is_inactive(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    trigger = metric_trigger(client, xp, words, 5, 10)

    active = client.admin.points.triggers.update(
        xp.id, request=[{"id": trigger.id, "type": "streak", "streak_length": 3}]
    )

    assert active.updated == []
    assert [(i.id, i.severity) for i in active.issues] == [(trigger.id, "error")]
    assert "inactive" in active.issues[0].message
    assert client.admin.points.triggers.get(xp.id, trigger.id) == trigger

    client.admin.points.triggers.update(xp.id, request=[{"id": trigger.id, "status": "inactive"}])
    missing = client.admin.points.triggers.update(
        xp.id, request=[{"id": trigger.id, "type": "streak"}]
    )
    mixed = client.admin.points.triggers.update(
        xp.id,
        request=[{"id": trigger.id, "type": "streak", "streak_length": 3, "metric_threshold": 4}],
    )

    assert missing.updated == []
    assert "streakLength" in missing.issues[0].message
    assert mixed.updated == []
    assert "metricThreshold" in mixed.issues[0].message

    (changed,) = client.admin.points.triggers.update(
        xp.id, request=[{"id": trigger.id, "type": "streak", "streak_length": 3}]
    ).updated

    assert (changed.type, changed.streak_length, changed.points, changed.status) == (
        "streak",
        3,
        5,
        "inactive",
    )
    assert (changed.metric_id, changed.metric_threshold, changed.event_attributes) == (
        None,
        None,
        None,
    )
    assert client.admin.points.triggers.get(xp.id, trigger.id) == changed


def test_delete_a_trigger_stops_it_and_keeps_its_awards(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    trigger = metric_trigger(client, xp, words, 5, 1)
    event(client, "ada", 1)
    unknown = str(uuid.uuid4())

    response = client.admin.points.triggers.delete(xp.id, ids=[trigger.id, unknown])

    assert response.deleted == [DeletedResource(id=trigger.id)]
    assert [(i.id, i.message) for i in response.issues] == [
        (unknown, "Points trigger not found by ID")
    ]
    assert client.admin.points.triggers.list(xp.id) == []
    assert client.points.system("xp").triggers == []
    assert event(client, "ada", 1).points == {}
    (award,) = client.users.points("ada", "xp").awards
    assert award.trigger is not None
    assert (award.trigger.id, award.trigger.type, award.trigger.points) == (trigger.id, "metric", 5)


# --- GET /points/{key} ------------------------------------------------------------------------


def test_system_lists_its_active_triggers_in_the_application_shape(
    client: TrophyApi, words: CreatedMetric, plan: AdminAttribute, device: AdminAttribute
) -> None:
    xp = create_system(
        client, "xp", name="XP", description="Experience", badge={"url": BADGE}, max_points=500
    )
    (tutorial,) = client.admin.achievements.create(
        request=[{"name": "Tutorial", "trigger": "api", "key": "tutorial", "status": "active"}]
    ).created
    metric = metric_trigger(
        client,
        xp,
        words,
        5,
        10,
        event_attributes=[{"attribute_id": device.id, "attribute_value": "mobile"}],
        user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}],
    )
    streak = add_trigger(client, xp, type="streak", points=50, streak_length=7)
    achievement = add_trigger(client, xp, type="achievement", points=20, achievement_id=tutorial.id)
    time = add_trigger(client, xp, type="time", points=1, time_unit="days", time_interval=2)
    creation = add_trigger(client, xp, type="user_creation", points=100)
    add_trigger(client, xp, type="user_creation", points=1, status="inactive")

    system = client.points.system("xp")

    assert isinstance(system, PointsSystemResponse)
    assert (system.id, system.name, system.description, system.badge_url, system.max_points) == (
        xp.id,
        "XP",
        "Experience",
        BADGE,
        500,
    )
    assert all(isinstance(t, PointsTrigger) for t in system.triggers)
    assert [(t.id, t.type, t.points, t.status) for t in system.triggers] == [
        (metric.id, "metric", 5, "active"),
        (streak.id, "streak", 50, "active"),
        (achievement.id, "achievement", 20, "active"),
        (time.id, "time", 1, "active"),
        (creation.id, "user_creation", 100, "active"),
    ]
    m, s, a, t, c = system.triggers
    assert (m.metric_id, m.metric_name, m.metric_threshold) == (words.id, "Words", 10)
    assert [(kv.key, kv.value) for kv in m.event_attributes or []] == [("device", "mobile")]
    assert [(kv.key, kv.value) for kv in m.user_attributes] == [("plan", "pro")]
    assert s.streak_length_threshold == 7
    assert (a.achievement_id, a.achievement_name) == (tutorial.id, "Tutorial")
    assert (t.time_unit, t.time_interval) == ("day", 2)  # the application API spells it "day"
    for trigger in (s, a, t, c):
        assert (trigger.metric_id, trigger.metric_name, trigger.event_attributes) == (
            None,
            None,
            None,
        )
        assert trigger.user_attributes == []
    for trigger in system.triggers:
        assert_recent(trigger.created)
        assert_recent(trigger.updated)


def test_system_without_description_or_badge_and_an_unknown_key(client: TrophyApi) -> None:
    create_system(client, "coins", name="Coins")

    system = client.points.system("coins")

    assert (system.name, system.description, system.badge_url, system.max_points) == (
        "Coins",
        None,
        None,
        None,
    )
    assert system.triggers == []
    for call in (
        lambda: client.points.system("ghost"),
        lambda: client.points.boosts("ghost"),
        lambda: client.points.levels("ghost"),
        lambda: client.points.level_summary("ghost"),
        lambda: client.points.summary("ghost"),
    ):
        with pytest.raises(NotFoundError) as caught:
            call()
        assert "ghost" in error_message(caught.value)


# --- GET /points/{key}/boosts and /levels -----------------------------------------------------


def test_boosts_lists_global_boosts_and_finished_ones_only_on_request(
    client: TrophyApi, xp: CreatedAdminPointsSystem, plan: AdminAttribute
) -> None:
    client.users.create(id="ada")
    now = add_boost(client, xp, 2, name="Now", end=day(1))
    later = add_boost(client, xp, 1.5, name="Later", start=day(2), rounding="up")
    over = add_boost(client, xp, 3, name="Over", start=day(-3), end=day(-1))
    pro = add_boost(
        client,
        xp,
        1.25,
        name="Pro",
        user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}],
    )
    add_boost(client, xp, 4, name="Ada's", user_id="ada")

    current = client.points.boosts("xp")
    everything = client.points.boosts("xp", include_finished=True)

    assert all(isinstance(b, PointsBoost) for b in everything)
    assert [b.id for b in current] == [now.id, pro.id, later.id]  # by start date
    assert {b.id for b in everything} == {now.id, later.id, over.id, pro.id}
    by_id = {b.id: b for b in everything}
    assert (by_id[now.id].name, by_id[now.id].status, by_id[now.id].start, by_id[now.id].end) == (
        "Now",
        "active",
        day(0),
        day(1),
    )
    assert (by_id[now.id].multiplier, by_id[now.id].rounding) == (2, "down")
    assert (by_id[later.id].status, by_id[later.id].rounding, by_id[later.id].multiplier) == (
        "scheduled",
        "up",
        1.5,
    )
    assert (by_id[over.id].status, by_id[pro.id].end) == ("finished", None)
    assert client.points.boosts("xp", include_finished=False) == current


def test_levels_are_listed_by_threshold(client: TrophyApi, xp: CreatedAdminPointsSystem) -> None:
    gold = add_level(client, xp, "gold", 100, description="Top", badge={"url": BADGE})
    bronze = add_level(client, xp, "bronze", 0)
    silver = add_level(client, xp, "silver", 50)

    levels = client.points.levels("xp")

    assert all(isinstance(lv, PointsLevel) for lv in levels)
    assert [(lv.id, lv.key, lv.points) for lv in levels] == [
        (bronze.id, "bronze", 0),
        (silver.id, "silver", 50),
        (gold.id, "gold", 100),
    ]
    assert (levels[2].name, levels[2].description, levels[2].badge_url) == ("Gold", "Top", BADGE)
    assert (levels[0].description, levels[0].badge_url) == ("", None)


# --- GET /points/{key}/level-summary ----------------------------------------------------------


def test_level_summary_of_a_system_without_levels_is_422(
    client: TrophyApi, xp: CreatedAdminPointsSystem
) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        client.points.level_summary("xp")

    assert caught.value.status_code == 422
    assert "level" in error_message(caught.value)


def test_level_summary_counts_the_users_at_each_level(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    metric_trigger(client, xp, words, 1, 1)
    bronze = add_level(client, xp, "bronze", 5)
    silver = add_level(client, xp, "silver", 20)
    add_level(client, xp, "gold", 100)
    for user, value in (("ada", 25), ("bob", 5), ("cat", 7), ("dan", 2)):
        event(client, user, value)
    client.users.create(id="eve")

    summary = client.points.level_summary("xp")

    assert all(isinstance(item, PointsLevelSummaryResponseItem) for item in summary)
    assert [(item.level.key, item.users) for item in summary] == [
        ("bronze", 2),
        ("silver", 1),
        ("gold", 0),
    ]
    assert summary[0].level.id == bronze.id
    assert (summary[1].level.id, summary[1].level.points) == (silver.id, 20)


# --- GET /points/{key}/summary ----------------------------------------------------------------


def test_summary_buckets_users_by_total(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    metric_trigger(client, xp, words, 1, 1)
    for user, value in (("ada", 1000), ("bob", 150), ("cat", 100), ("dan", 1)):
        event(client, user, value)
    client.users.create(id="eve")

    summary = client.points.summary("xp")

    assert all(isinstance(r, PointsRange) for r in summary)
    assert [(r.from_, r.to) for r in summary] == [(0, 0)] + [
        (n * 100 + 1, (n + 1) * 100) for n in range(10)
    ]
    assert [r.users for r in summary] == [1, 2, 1, 0, 0, 0, 0, 0, 0, 0, 1]


def test_summary_has_eleven_contiguous_ranges_whatever_the_highest_total(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    # The SDK documents PointsSummaryResponse as "a list of eleven points ranges": 0-0, then
    # ten equal ranges from 1 up to (at least) the highest total.
    metric_trigger(client, xp, words, 1, 1)
    event(client, "ada", 35)
    event(client, "bob", 3)

    summary = client.points.summary("xp")

    assert len(summary) == 11, [(r.from_, r.to, r.users) for r in summary]
    assert (summary[0].from_, summary[0].to) == (0, 0)
    assert summary[1].from_ == 1
    assert all(b.from_ == a.to + 1 for a, b in itertools.pairwise(summary[1:]))
    assert len({r.to - r.from_ for r in summary[1:]}) == 1
    assert summary[-1].to >= 35
    assert sum(r.users for r in summary) == 2


def test_summary_with_user_attributes_counts_only_matching_users(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric, plan: AdminAttribute
) -> None:
    metric_trigger(client, xp, words, 1, 1)
    client.metrics.event("words", user={"id": "ada", "attributes": {"plan": "pro"}}, value=10)
    client.metrics.event("words", user={"id": "bob", "attributes": {"plan": "free"}}, value=10)
    client.users.create(id="cat", attributes={"plan": "pro"})

    pro = client.points.summary("xp", user_attributes="plan:pro")
    nobody = client.points.summary("xp", user_attributes="plan:gold")

    assert sum(r.users for r in pro) == 2
    assert (pro[0].users, [r.users for r in pro if r.from_ <= 10 <= r.to]) == (1, [1])
    assert len(nobody) == 11
    assert sum(r.users for r in nobody) == 0
    for bad in ("plan", "region:eu"):
        with pytest.raises(UnprocessableEntityError) as caught:
            client.points.summary("xp", user_attributes=bad)
        assert "userAttributes" in error_message(caught.value)


# --- the points of a metric event -------------------------------------------------------------


def test_a_metric_trigger_pays_once_per_threshold_multiple_ever_reached(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    trigger = metric_trigger(client, xp, words, 5, 10)

    first = event(client, "ada", 25)

    points = earned(first)
    assert (points.id, points.name, points.total, points.added) == (xp.id, "XP", 10, 10)
    (award,) = points.awards
    assert (award.awarded, award.total) == (10, 10)
    assert uuid.UUID(award.id or "")
    assert_recent(award.date)
    assert award.boosts == []
    assert isinstance(award.trigger, PointsTrigger)
    assert (award.trigger.id, award.trigger.type, award.trigger.points, award.trigger.status) == (
        trigger.id,
        "metric",
        5,
        "active",
    )
    assert (award.trigger.metric_id, award.trigger.metric_name, award.trigger.metric_threshold) == (
        words.id,
        "Words",
        10,
    )
    assert (award.trigger.user_attributes, award.trigger.event_attributes) == ([], [])
    assert_recent(award.trigger.created)
    assert "level" not in points.model_fields_set  # no levels: never changed

    # Down and back up to 25 pays nothing; passing 30 pays one more multiple.
    assert event(client, "ada", -10).points == {}
    assert event(client, "ada", 10).points == {}
    assert event(client, "ada", 4).points == {}
    again = event(client, "ada", 1)

    assert again.total == 30
    assert (earned(again).total, earned(again).added) == (15, 5)
    assert total(client, "ada") == 15


def test_moving_a_metric_trigger_to_another_metric_counts_that_metric_from_scratch(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    lessons = create_metric(client, "lessons")
    trigger = metric_trigger(client, xp, words, 5, 10)
    assert earned(event(client, "ada", 100)).added == 50  # ten multiples of words

    client.admin.points.triggers.update(
        xp.id, request=[{"id": trigger.id, "metric_id": lessons.id}]
    )
    moved = event(client, "ada", 10, key="lessons")

    # The first 10 lessons are the trigger's first multiple of its new metric: they pay 5. The
    # ten multiples paid for words must not be held against lessons.
    assert set(moved.points) == {"xp"}, moved.points
    assert (earned(moved).added, earned(moved).total) == (5, 55)


def test_a_replayed_event_pays_nothing_again(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    metric_trigger(client, xp, words, 5, 1)

    first = client.metrics.event("words", user={"id": "ada"}, value=2, idempotency_key="k1")
    replay = client.metrics.with_raw_response.event(
        "words", user={"id": "ada"}, value=2, idempotency_key="k1"
    )

    assert earned(first).added == 10
    assert replay.status_code == 202
    assert replay.data.points == {}
    assert total(client, "ada") == 10


def test_an_event_lists_only_the_systems_it_changed(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    coins = create_system(client, "coins", name="Coins")
    create_system(client, "karma")
    lessons = create_metric(client, "lessons")
    metric_trigger(client, xp, words, 1, 1)
    metric_trigger(client, coins, words, 3, 2)
    metric_trigger(client, coins, lessons, 7, 1)

    both = event(client, "ada", 3)
    one = event(client, "ada", 1, key="lessons")

    assert set(both.points) == {"xp", "coins"}
    assert (earned(both, "xp").added, earned(both, "coins").added) == (3, 3)
    assert earned(both, "coins").name == "Coins"
    assert set(one.points) == {"coins"}
    assert (earned(one, "coins").total, earned(one, "coins").added) == (10, 7)


def test_inactive_triggers_do_not_pay(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    trigger = metric_trigger(client, xp, words, 5, 1, status="inactive")

    assert event(client, "ada", 2).points == {}
    assert client.points.system("xp").triggers == []

    client.admin.points.triggers.update(xp.id, request=[{"id": trigger.id, "status": "active"}])

    assert earned(event(client, "bob", 1)).added == 5
    # (What ada's next event pays for the multiples she reached while it was inactive is not
    # pinned down here: today it is all of them.)
    assert earned(event(client, "ada", 1)).added >= 5


def test_a_global_boost_multiplies_awards_and_is_listed_on_them(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    metric_trigger(client, xp, words, 5, 1)
    boost = add_boost(client, xp, 2, name="Double")

    points = earned(event(client, "ada", 3))

    assert (points.added, points.total) == (30, 30)
    (award,) = points.awards
    assert award.awarded == 30
    (applied,) = award.boosts or []
    assert isinstance(applied, PointsBoost)
    assert (applied.id, applied.name, applied.multiplier, applied.rounding, applied.status) == (
        boost.id,
        "Double",
        2,
        "down",
        "active",
    )
    # Stacked boosts multiply together.
    add_boost(client, xp, 1.5, name="Half more")
    stacked = earned(event(client, "ada", 1))
    assert stacked.added == 15
    assert len(stacked.awards[0].boosts or []) == 2


def test_boost_rounding_down_up_and_nearest(client: TrophyApi, words: CreatedMetric) -> None:
    for rounding in ("down", "up", "nearest"):
        system = create_system(client, rounding)
        metric_trigger(client, system, words, 3, 1)
        add_boost(client, system, 1.1, rounding=rounding)  # 3 x 1.1 = 3.3
    half = create_system(client, "half")
    metric_trigger(client, half, words, 5, 1)
    add_boost(client, half, 1.5, rounding="nearest")  # 5 x 1.5 = 7.5

    response = event(client, "ada", 1)

    assert {key: p.added for key, p in response.points.items()} == {
        "down": 3,
        "up": 4,
        "nearest": 3,
        "half": 8,
    }


def test_scheduled_finished_and_other_users_boosts_do_not_apply(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric, plan: AdminAttribute
) -> None:
    metric_trigger(client, xp, words, 10, 1)
    client.users.create(id="ada", attributes={"plan": "free"})
    client.users.create(id="bob", attributes={"plan": "pro"})
    add_boost(client, xp, 2, start=day(1))
    add_boost(client, xp, 3, start=day(-3), end=day(-1))
    add_boost(client, xp, 1.5, user_id="bob")
    add_boost(
        client, xp, 1.2, user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}]
    )

    ada = earned(event(client, "ada", 1))
    bob = earned(event(client, "bob", 1))

    assert (ada.added, ada.awards[0].boosts) == (10, [])
    assert bob.added == 18  # 10 x 1.5 x 1.2
    assert sorted(b.multiplier for b in bob.awards[0].boosts or []) == [1.2, 1.5]


def test_deductions_are_not_boosted_and_may_take_the_balance_below_zero(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    spend = create_metric(client, "spend")
    metric_trigger(client, xp, words, 5, 1)
    metric_trigger(client, xp, spend, -4, 1)
    add_boost(client, xp, 2)
    event(client, "ada", 1)  # +10

    points = earned(event(client, "ada", 3, key="spend"))

    assert (points.added, points.total) == (-12, -2)
    assert points.awards[0].boosts == []
    assert total(client, "ada") == -2


def test_max_points_caps_awards_after_boosts(client: TrophyApi, words: CreatedMetric) -> None:
    xp = create_system(client, "xp", max_points=25)
    metric_trigger(client, xp, words, 5, 1)
    add_boost(client, xp, 2)

    first = earned(event(client, "ada", 2))
    capped = earned(event(client, "ada", 1))
    full = event(client, "ada", 1)

    assert (first.added, first.total) == (20, 20)
    assert (capped.added, capped.total, capped.max_points) == (5, 25, 25)
    assert capped.awards[0].awarded == 5
    assert full.points == {}
    assert total(client, "ada") == 25


def test_a_blocked_deduction_is_422_and_changes_nothing(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    spend = create_metric(client, "spend")
    metric_trigger(client, xp, words, 5, 1)
    metric_trigger(client, xp, spend, -10, 1, block_if_out_of_points=True)
    event(client, "ada", 1)  # 5 points

    with pytest.raises(UnprocessableEntityError) as caught:
        client.metrics.event("spend", user={"id": "ada"}, value=1)

    assert caught.value.status_code == 422
    assert "xp" in error_message(caught.value)
    points = client.users.points("ada", "xp")
    assert (points.total, len(points.awards)) == (5, 1)
    assert client.users.single_metric("ada", "spend").current == 0  # the event was not recorded

    event(client, "ada", 1)  # 10 points: now the deduction fits, down to exactly zero
    allowed = earned(event(client, "ada", 1, key="spend"))

    assert (allowed.added, allowed.total) == (-10, 0)
    assert client.users.single_metric("ada", "spend").current == 1


def test_the_level_is_in_the_event_response_only_when_it_changes(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    spend = create_metric(client, "spend")
    metric_trigger(client, xp, words, 5, 1)
    metric_trigger(client, xp, spend, -5, 1)
    bronze = add_level(client, xp, "bronze", 10)
    silver = add_level(client, xp, "silver", 20, description="Second", badge={"url": BADGE})

    below = earned(event(client, "ada", 1))  # 5
    reached = earned(event(client, "ada", 1))  # 10: bronze (thresholds are inclusive)
    same = earned(event(client, "ada", 1))  # 15
    up = earned(event(client, "ada", 2))  # 25: silver
    down = earned(event(client, "ada", 2, key="spend"))  # 15: back to bronze
    none = earned(event(client, "ada", 1, key="spend"))  # 10: still bronze
    lost = earned(event(client, "ada", 1, key="spend"))  # 5: no level

    assert "level" not in below.model_fields_set
    assert isinstance(reached.level, PointsLevel)
    assert (reached.level.id, reached.level.key, reached.level.points) == (bronze.id, "bronze", 10)
    assert "level" not in same.model_fields_set
    assert up.level is not None
    assert (up.level.id, up.level.name, up.level.description, up.level.badge_url) == (
        silver.id,
        "Silver",
        "Second",
        BADGE,
    )
    assert down.level is not None
    assert down.level.id == bronze.id
    assert "level" not in none.model_fields_set
    assert "level" in lost.model_fields_set
    assert lost.level is None


def test_the_blocking_check_looks_at_the_whole_event_not_the_order_of_the_triggers(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    # Each word costs 10 and pays 20: every event leaves the balance 10 higher per word, so
    # none of them takes it below zero. The deduction being configured first must not matter.
    metric_trigger(client, xp, words, -10, 1, block_if_out_of_points=True)
    metric_trigger(client, xp, words, 20, 1)

    response = client.metrics.with_raw_response.event("words", user={"id": "ada"}, value=1)

    assert response.status_code == 201
    points = earned(response.data)
    assert (points.added, points.total) == (10, 10)


def test_a_blocked_deduction_refuses_an_achievement_completion(
    client: TrophyApi, xp: CreatedAdminPointsSystem
) -> None:
    (unlock,) = client.admin.achievements.create(
        request=[{"name": "Unlock", "trigger": "api", "key": "unlock", "status": "active"}]
    ).created
    add_trigger(
        client,
        xp,
        type="achievement",
        points=-50,
        achievement_id=unlock.id,
        block_if_out_of_points=True,
    )
    client.users.create(id="ada")

    with pytest.raises(UnprocessableEntityError) as caught:
        client.achievements.complete("unlock", user={"id": "ada"})

    assert "xp" in error_message(caught.value)
    assert client.users.achievements("ada") == []
    assert total(client, "ada") == 0


def test_the_reported_level_follows_changes_to_the_levels(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    metric_trigger(client, xp, words, 1, 1)
    bronze = add_level(client, xp, "bronze", 10)
    event(client, "ada", 15)
    assert client.users.points("ada", "xp").level == client.points.levels("xp")[0]

    # bronze now needs more than ada has, and a new level sits below her total.
    client.admin.points.levels.update(xp.id, request=[{"id": bronze.id, "points": 20}])
    starter = add_level(client, xp, "starter", 5)

    level = client.users.points("ada", "xp").level
    assert level is not None, "ada has 15 points and starter needs 5"
    assert (level.id, level.points) == (starter.id, 5)
    assert [(i.level.key, i.users) for i in client.points.level_summary("xp")] == [
        ("starter", 1),
        ("bronze", 0),
    ]


def test_event_attribute_filters_count_only_matching_events(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric, device: AdminAttribute
) -> None:
    metric_trigger(
        client,
        xp,
        words,
        1,
        3,
        event_attributes=[{"attribute_id": device.id, "attribute_value": "mobile"}],
    )

    web = event(client, "ada", 5, attributes={"device": "web"})
    some = event(client, "ada", 2, attributes={"device": "mobile"})
    bare = event(client, "ada", 4)
    enough = event(client, "ada", 1, attributes={"device": "mobile"})

    assert [r.points for r in (web, some, bare)] == [{}, {}, {}]
    assert enough.total == 12
    points = earned(enough)
    assert (points.added, points.total) == (1, 1)
    trigger = points.awards[0].trigger
    assert trigger is not None
    assert [(kv.key, kv.value) for kv in trigger.event_attributes or []] == [("device", "mobile")]


def test_user_attribute_filters_decide_who_earns(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric, plan: AdminAttribute
) -> None:
    metric_trigger(
        client,
        xp,
        words,
        2,
        1,
        user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}],
    )

    free = client.metrics.event(
        "words", user={"id": "ada", "attributes": {"plan": "free"}}, value=1
    )
    pro = client.metrics.event("words", user={"id": "bob", "attributes": {"plan": "pro"}}, value=1)

    assert free.points == {}
    assert earned(pro).added == 2
    trigger = earned(pro).awards[0].trigger
    assert trigger is not None
    assert [(kv.key, kv.value) for kv in trigger.user_attributes] == [("plan", "pro")]


def test_a_streak_trigger_pays_when_the_streak_reaches_its_length(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    client.admin.streaks.settings.update(metrics=[{"key": "words", "threshold": 1}])
    started = add_trigger(client, xp, type="streak", points=10, streak_length=1)
    add_trigger(client, xp, type="streak", points=70, streak_length=7)

    first = event(client, "ada", 1)
    again = event(client, "ada", 1)

    assert first.current_streak.length == 1
    points = earned(first)
    assert (points.added, points.total) == (10, 10)
    trigger = points.awards[0].trigger
    assert trigger is not None
    assert (trigger.id, trigger.type, trigger.streak_length_threshold) == (started.id, "streak", 1)
    assert trigger.metric_id is None
    assert again.points == {}  # the streak was not extended again today


def test_an_achievement_trigger_pays_in_the_event_that_completes_the_achievement(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    (five,) = client.admin.achievements.create(
        request=[
            {
                "name": "Five words",
                "trigger": "metric",
                "metric_id": words.id,
                "metric_value": 5,
                "status": "active",
            }
        ]
    ).created
    trigger = add_trigger(client, xp, type="achievement", points=20, achievement_id=five.id)

    before = event(client, "ada", 3)
    completing = event(client, "ada", 3)
    after = event(client, "ada", 10)

    assert before.points == {}
    assert [a.id for a in completing.achievements] == [five.id]
    points = earned(completing)
    assert (points.added, points.total) == (20, 20)
    award_trigger = points.awards[0].trigger
    assert award_trigger is not None
    assert (award_trigger.id, award_trigger.type) == (trigger.id, "achievement")
    assert (award_trigger.achievement_id, award_trigger.achievement_name) == (five.id, "Five words")
    assert after.points == {}


def test_a_user_creation_trigger_pays_once_on_the_first_event(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    creation = add_trigger(client, xp, type="user_creation", points=100)
    metric = metric_trigger(client, xp, words, 1, 1)

    first = earned(event(client, "ada", 1))
    second = earned(event(client, "ada", 1))

    assert (first.added, first.total) == (101, 101)
    assert sorted((a.trigger.id, a.trigger.type, a.awarded) for a in first.awards if a.trigger) == (
        sorted([(creation.id, "user_creation", 100), (metric.id, "metric", 1)])
    )
    assert (second.added, second.total) == (1, 102)


def test_a_user_first_seen_through_an_achievement_completion_also_gets_user_creation_points(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    (tutorial,) = client.admin.achievements.create(
        request=[{"name": "Tutorial", "trigger": "api", "key": "tutorial", "status": "active"}]
    ).created
    add_trigger(client, xp, type="user_creation", points=100)
    add_trigger(client, xp, type="achievement", points=15, achievement_id=tutorial.id)
    metric_trigger(client, xp, words, 1, 1)

    # ada is first seen through an event, bob through a completion: both are new users.
    event(client, "ada", 1)
    client.achievements.complete("tutorial", user={"id": "ada"})
    client.achievements.complete("tutorial", user={"id": "bob"})
    event(client, "bob", 1)

    assert total(client, "ada") == 116
    assert total(client, "bob") == 116, [
        (a.trigger.type if a.trigger else None, a.awarded)
        for a in client.users.points("bob", "xp").awards
    ]


# --- achievement completion -------------------------------------------------------------------


def test_completing_an_achievement_reports_the_points_it_awarded(
    client: TrophyApi, xp: CreatedAdminPointsSystem
) -> None:
    (tutorial,) = client.admin.achievements.create(
        request=[{"name": "Tutorial", "trigger": "api", "key": "tutorial", "status": "active"}]
    ).created
    trigger = add_trigger(client, xp, type="achievement", points=15, achievement_id=tutorial.id)
    bronze = add_level(client, xp, "bronze", 10)
    add_boost(client, xp, 2)

    first = client.achievements.with_raw_response.complete("tutorial", user={"id": "ada"})

    assert first.status_code == 201
    assert set(first.data.points) == {"xp"}
    points = first.data.points["xp"]
    assert isinstance(points, MetricEventPointsResponse)
    assert (points.id, points.key, points.name, points.total, points.added) == (
        xp.id,
        "xp",
        "XP",
        30,
        30,
    )
    assert points.level is not None
    assert points.level.id == bronze.id
    (award,) = points.awards
    assert (award.awarded, award.total, len(award.boosts or [])) == (30, 30, 1)
    assert award.trigger is not None
    assert (award.trigger.id, award.trigger.type, award.trigger.achievement_id) == (
        trigger.id,
        "achievement",
        tutorial.id,
    )
    assert award.trigger.achievement_name == "Tutorial"

    again = client.achievements.with_raw_response.complete("tutorial", user={"id": "ada"})

    assert again.status_code == 200
    assert again.data.points == {}
    assert total(client, "ada") == 30


def test_completing_the_last_prerequisite_pays_the_composites_trigger_too(
    client: TrophyApi, xp: CreatedAdminPointsSystem
) -> None:
    first, second = client.admin.achievements.create(
        request=[
            {"name": "First", "trigger": "api", "key": "first", "status": "active"},
            {"name": "Second", "trigger": "api", "key": "second", "status": "active"},
        ]
    ).created
    (both,) = client.admin.achievements.create(
        request=[
            {
                "name": "Both",
                "trigger": "achievement",
                "achievement_ids": [first.id, second.id],
                "status": "active",
            }
        ]
    ).created
    add_trigger(client, xp, type="achievement", points=5, achievement_id=second.id)
    add_trigger(client, xp, type="achievement", points=50, achievement_id=both.id)

    assert client.achievements.complete("first", user={"id": "ada"}).points == {}
    last = client.achievements.complete("second", user={"id": "ada"})

    points = last.points["xp"]
    assert (points.added, points.total) == (55, 55)
    assert sorted((a.trigger.achievement_name, a.awarded) for a in points.awards if a.trigger) == [
        ("Both", 50),
        ("Second", 5),
    ]


# --- time triggers (the periodic job) ---------------------------------------------------------


def test_a_time_trigger_pays_each_elapsed_interval_once(
    client: TrophyApi, xp: CreatedAdminPointsSystem
) -> None:
    from apps.points.jobs import points_time_triggers

    trigger = add_trigger(client, xp, type="time", points=3, time_unit="hours", time_interval=2)
    client.users.create(id="ada")
    later = dt.datetime.now(UTC) + dt.timedelta(hours=6, minutes=5)

    points_time_triggers(later)
    points_time_triggers(later)  # idempotent

    points = client.users.points("ada", "xp")
    assert points.total == 9  # three whole 2-hour intervals
    (award,) = points.awards
    assert (award.awarded, award.total) == (9, 9)
    assert award.trigger is not None
    assert (award.trigger.id, award.trigger.type) == (trigger.id, "time")
    assert (award.trigger.time_unit, award.trigger.time_interval) == ("hour", 2)

    points_time_triggers(later + dt.timedelta(hours=2))
    assert total(client, "ada") == 12


# --- GET /users/{id}/points/{key} -------------------------------------------------------------


def test_user_points_has_total_current_level_and_the_newest_awards(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    trigger = metric_trigger(client, xp, words, 5, 10)
    add_level(client, xp, "bronze", 10)
    silver = add_level(client, xp, "silver", 50)
    event(client, "ada", 25)  # 10
    event(client, "ada", 100)  # 60
    client.users.create(id="bob")

    points = client.users.points("ada", "xp")
    newest = client.users.points("ada", "xp", awards=1)
    bob = client.users.points("bob", "xp")

    assert isinstance(points, GetUserPointsResponse)
    assert (points.id, points.key, points.name, points.description) == (xp.id, "xp", "XP", None)
    assert (points.badge_url, points.max_points, points.total) == (None, None, 60)
    assert points.level is not None
    assert (points.level.id, points.level.key) == (silver.id, "silver")
    assert [(a.awarded, a.total) for a in points.awards] == [(50, 60), (10, 10)]
    assert all(a.trigger is not None and a.trigger.id == trigger.id for a in points.awards)
    assert newest.awards == points.awards[:1]
    assert (bob.total, bob.level, bob.awards) == (0, None, [])


def test_user_points_validates_awards_and_404s_unknown_users_and_systems(
    client: TrophyApi, xp: CreatedAdminPointsSystem
) -> None:
    client.users.create(id="ada")

    for count in (0, 101):
        with pytest.raises(UnprocessableEntityError) as caught:
            client.users.points("ada", "xp", awards=count)
        assert "awards" in error_message(caught.value)
    for user, key in (("ghost", "xp"), ("ada", "ghost")):
        with pytest.raises(NotFoundError) as missing:
            client.users.points(user, key)
        assert "ghost" in error_message(missing.value)


def test_an_application_key_reads_only_its_own_users_points(
    client: TrophyApi, make_client: MakeClient, xp: CreatedAdminPointsSystem
) -> None:
    client.users.create(id="ada")
    client.users.create(id="bob")
    (key,) = client.admin.application_api_keys.create(request=[{"user_id": "ada"}]).created
    ada = make_client(key.key)
    today_ = day(0)

    assert ada.users.points("ada", "xp").total == 0
    assert ada.users.points_boosts("ada", "xp") == []
    assert ada.points.system("xp").id == xp.id
    for call in (
        lambda: ada.users.points("bob", "xp"),
        lambda: ada.users.points_boosts("bob", "xp"),
        lambda: ada.users.points_event_summary(
            "bob", "xp", aggregation="daily", start_date=today_, end_date=today_
        ),
    ):
        with pytest.raises(ApiError) as caught:
            call()
        assert caught.value.status_code == 403
        error_message(caught.value)


# --- GET /users/{id}/points/{key}/boosts ------------------------------------------------------


def test_user_boosts_are_the_running_global_boosts_they_qualify_for_and_their_own(
    client: TrophyApi, xp: CreatedAdminPointsSystem, plan: AdminAttribute
) -> None:
    client.users.create(id="ada", attributes={"plan": "pro"})
    client.users.create(id="bob", attributes={"plan": "free"})
    everyone = add_boost(client, xp, 2, name="Everyone")
    pro = add_boost(
        client,
        xp,
        1.5,
        name="Pro",
        user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}],
    )
    adas = add_boost(client, xp, 3, name="Ada's", user_id="ada", end=day(2))
    add_boost(client, xp, 4, name="Bob's", user_id="bob")
    add_boost(client, xp, 5, name="Scheduled", start=day(1))
    add_boost(client, xp, 6, name="Finished", start=day(-2), end=day(-1))

    ada = client.users.points_boosts("ada", "xp")
    bob = client.users.points_boosts("bob", "xp")

    assert all(isinstance(b, PointsBoost) for b in ada)
    assert sorted(b.id for b in ada) == sorted([everyone.id, pro.id, adas.id])
    mine = next(b for b in ada if b.id == adas.id)
    assert (mine.name, mine.status, mine.start, mine.end, mine.multiplier, mine.rounding) == (
        "Ada's",
        "active",
        day(0),
        day(2),
        3,
        "down",
    )
    assert sorted(b.name for b in bob) == ["Bob's", "Everyone"]
    for user, key in (("ghost", "xp"), ("ada", "ghost")):
        with pytest.raises(NotFoundError):
            client.users.points_boosts(user, key)


# --- GET /users/{id}/points/{key}/event-summary -----------------------------------------------


def test_points_event_summary_has_daily_changes_and_running_totals(
    client: TrophyApi, xp: CreatedAdminPointsSystem, words: CreatedMetric
) -> None:
    spend = create_metric(client, "spend")
    metric_trigger(client, xp, words, 5, 1)
    metric_trigger(client, xp, spend, -3, 1)
    event(client, "ada", 2)  # +10
    event(client, "ada", 1, key="spend")  # -3

    daily = client.users.points_event_summary(
        "ada", "xp", aggregation="daily", start_date=day(-2), end_date=day(1)
    )
    monthly = client.users.points_event_summary(
        "ada", "xp", aggregation="monthly", start_date=day(-40), end_date=day(0)
    )

    assert all(isinstance(item, UsersPointsEventSummaryResponseItem) for item in daily)
    assert [(item.date, item.change, item.total) for item in daily] == [
        (day(-2), 0, 0),
        (day(-1), 0, 0),
        (day(0), 7, 7),
        (day(1), 0, 7),
    ]
    assert all(dt.date.fromisoformat(item.date).day == 1 for item in monthly)
    assert (monthly[-1].change, monthly[-1].total) == (7, 7)
    assert sum(item.change for item in monthly) == 7


def test_points_event_summary_validates_its_parameters(
    client: TrophyApi, xp: CreatedAdminPointsSystem
) -> None:
    client.users.create(id="ada")

    for aggregation, start, end in (
        ("hourly", day(0), day(0)),
        ("daily", day(1), day(0)),
        ("daily", "yesterday", day(0)),
        ("daily", day(-500), day(0)),
    ):
        with pytest.raises(UnprocessableEntityError) as caught:
            client.users.points_event_summary(
                "ada", "xp", aggregation=aggregation, start_date=start, end_date=end
            )
        error_message(caught.value)
    for user, key in (("ghost", "xp"), ("ada", "ghost")):
        with pytest.raises(NotFoundError):
            client.users.points_event_summary(
                user, key, aggregation="daily", start_date=day(0), end_date=day(0)
            )


# --- tenants ----------------------------------------------------------------------------------


def test_points_systems_belong_to_their_tenant(
    client: TrophyApi, make_client: MakeClient, org: OrganizationWithKey, words: CreatedMetric
) -> None:
    client.admin.tenants.create(request=[CreateTenantRequestItem(customer_id="acme-eu", name="EU")])
    eu = make_client(org.admin_key, tenant_id="acme-eu")
    eu_xp = create_system(eu, "eu-xp")
    xp = create_system(client, "xp")
    metric_trigger(client, xp, words, 1, 1)

    assert [s.key for s in client.admin.points.systems.list()] == ["xp"]
    assert [s.key for s in eu.admin.points.systems.list()] == ["eu-xp"]
    with pytest.raises(NotFoundError):
        client.admin.points.systems.get(eu_xp.id)
    with pytest.raises(NotFoundError):
        client.admin.points.levels.list(eu_xp.id)
    with pytest.raises(NotFoundError):
        client.points.system("eu-xp")
    # The same key may be used in each tenant, and a trigger may not count another's metric.
    assert create_system(eu, "xp").key == "xp"
    (eu_words,) = [s for s in eu.admin.points.systems.list() if s.key == "xp"]
    foreign = eu.admin.points.triggers.create(
        eu_words.id,
        request=[{"type": "metric", "points": 1, "metric_id": words.id, "metric_threshold": 1}],
    )
    assert foreign.created == []
    assert "metricId" in foreign.issues[0].message
    assert set(event(client, "ada", 1).points) == {"xp"}
