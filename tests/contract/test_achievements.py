"""Achievements through the SDK: the admin configuration (every trigger, statuses, badges,
attribute filters), the achievement list with completions and rarity, API completion, a user's
achievements, the achievements a metric event completes (composites included), backdating on
activation, and each metric's achievements in a user's metrics.

There is no broker in tests, so backdating runs inline right after the admin request commits:
its effect is visible as soon as the admin call has returned.
"""

import datetime as dt
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from trophy import CreateAchievementRequestItem, CreateTenantRequestItem, TrophyApi
from trophy.core import ApiError
from trophy.errors import NotFoundError, UnauthorizedError, UnprocessableEntityError
from trophy.types import (
    AchievementCompletionResponse,
    AchievementWithStatsResponse,
    AdminAchievement,
    AdminAchievementBadge,
    AdminAttribute,
    CreatedMetric,
    DeletedResource,
    EventResponse,
    MetricResponse,
    UserAchievementResponse,
    UserAchievementWithStatsResponse,
)

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
BADGE = "https://cdn.example.com/badges/first-words.png"


def create(client: TrophyApi, **fields: Any) -> AdminAchievement:
    """Create one achievement through the admin API."""
    response = client.admin.achievements.create(request=[CreateAchievementRequestItem(**fields)])
    assert response.issues == []
    (achievement,) = response.created
    assert isinstance(achievement, AdminAchievement)
    return achievement


def metric_achievement(
    client: TrophyApi, metric: CreatedMetric, value: float, name: str, **fields: Any
) -> AdminAchievement:
    fields.setdefault("status", "active")
    return create(
        client, name=name, trigger="metric", metric_id=metric.id, metric_value=value, **fields
    )


def api_achievement(client: TrophyApi, key: str, **fields: Any) -> AdminAchievement:
    fields.setdefault("status", "active")
    fields.setdefault("name", key.replace("-", " ").title())
    return create(client, trigger="api", key=key, **fields)


def composite(
    client: TrophyApi, name: str, *prerequisites: AdminAchievement, **fields: Any
) -> AdminAchievement:
    fields.setdefault("status", "active")
    return create(
        client,
        name=name,
        trigger="achievement",
        achievement_ids=[p.id for p in prerequisites],
        **fields,
    )


def set_status(client: TrophyApi, achievement: AdminAchievement, status: str) -> AdminAchievement:
    response = client.admin.achievements.update(request=[{"id": achievement.id, "status": status}])
    assert response.issues == []
    (updated,) = response.updated
    assert updated.status == status
    return updated


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
    assert all(isinstance(a, UserAchievementResponse) for a in response.achievements)
    return response


def names(achievements: list[Any]) -> list[str]:
    return [a.name for a in achievements]


def achieved(client: TrophyApi, user: str) -> dict[str, dt.datetime | None]:
    """The user's achievements (incomplete ones included) by name, with their achievedAt."""
    items = client.users.achievements(user, include_incomplete="true")
    assert all(isinstance(item, UserAchievementWithStatsResponse) for item in items)
    return {item.name: item.achieved_at for item in items}


def assert_recent(moment: dt.datetime | None) -> None:
    assert isinstance(moment, dt.datetime)
    assert moment.tzinfo is not None
    assert abs(dt.datetime.now(UTC) - moment) < dt.timedelta(minutes=1)


def ago(days: int) -> str:
    return (dt.datetime.now(UTC).date() - dt.timedelta(days=days)).isoformat()


@pytest.fixture
def plan(client: TrophyApi) -> AdminAttribute:
    """A user attribute."""
    return create_attribute(client, "plan", "user")


@pytest.fixture
def device(client: TrophyApi) -> AdminAttribute:
    """An event attribute."""
    return create_attribute(client, "device", "event")


# --- admin: create, get, list -----------------------------------------------------------------


def test_create_a_metric_achievement_answers_201_and_it_defaults_to_inactive(
    client: TrophyApi, words: CreatedMetric
) -> None:
    response = client.admin.achievements.with_raw_response.create(
        request=[
            CreateAchievementRequestItem(
                name="Wordsmith",
                trigger="metric",
                description="Write 100 words",
                metric_id=words.id,
                metric_value=100,
            )
        ]
    )

    assert response.status_code == 201
    assert response.data.issues == []
    (created,) = response.data.created
    assert isinstance(created, AdminAchievement)
    assert uuid.UUID(created.id)
    assert (created.name, created.description, created.trigger, created.status) == (
        "Wordsmith",
        "Write 100 words",
        "metric",
        "inactive",
    )
    assert (created.metric_id, created.metric_value, created.event_attributes) == (
        words.id,
        100,
        [],
    )
    assert (created.badge, created.user_attributes) == (None, [])
    # The fields of the other triggers are left out.
    assert (created.key, created.streak_length) == (None, None)
    assert (created.anniversary_years, created.achievement_ids) == (None, None)
    assert client.admin.achievements.get(created.id) == created
    assert client.admin.achievements.list() == [created]


def test_each_trigger_renders_only_its_own_fields(client: TrophyApi) -> None:
    response = client.admin.achievements.create(
        request=[
            {"name": "Unlocked", "trigger": "api", "key": "unlocked", "status": "active"},
            {"name": "Week streak", "trigger": "streak", "streak_length": 7},
            {"name": "Two years", "trigger": "anniversary", "anniversary_years": 2},
        ]
    )
    assert response.issues == []
    api, streak, anniversary = response.created
    both = composite(client, "All of it", api, streak, status="locked")

    assert (api.trigger, api.key, api.status) == ("api", "unlocked", "active")
    assert (streak.trigger, streak.streak_length, streak.status) == ("streak", 7, "inactive")
    assert (anniversary.trigger, anniversary.anniversary_years) == ("anniversary", 2)
    assert (both.trigger, both.status) == ("achievement", "locked")
    assert sorted(both.achievement_ids or []) == sorted([api.id, streak.id])
    for achievement in (api, streak, anniversary, both):
        assert (achievement.metric_id, achievement.metric_value) == (None, None)
        assert achievement.event_attributes is None
        assert achievement.user_attributes == []
    assert (streak.key, streak.anniversary_years, streak.achievement_ids) == (None, None, None)
    assert (api.streak_length, anniversary.streak_length, both.key) == (None, None, None)
    assert [a.id for a in client.admin.achievements.list()] == [
        api.id,
        streak.id,
        anniversary.id,
        both.id,
    ]
    assert client.admin.achievements.get(both.id) == both


def test_badge_description_and_attribute_filters_round_trip_and_null_clears_them(
    client: TrophyApi, words: CreatedMetric, plan: AdminAttribute, device: AdminAttribute
) -> None:
    created = metric_achievement(
        client,
        words,
        10,
        "Mobile pro",
        status="inactive",
        description="Ten words on mobile",
        badge={"url": BADGE},
        user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}],
        event_attributes=[{"attribute_id": device.id, "attribute_value": "mobile"}],
    )

    assert created.badge == AdminAchievementBadge(url=BADGE)
    assert created.description == "Ten words on mobile"
    assert [(f.attribute_id, f.attribute_value) for f in created.user_attributes] == [
        (plan.id, "pro")
    ]
    assert [(f.attribute_id, f.attribute_value) for f in created.event_attributes or []] == [
        (device.id, "mobile")
    ]
    assert client.admin.achievements.get(created.id) == created

    response = client.admin.achievements.update(
        request=[
            {
                "id": created.id,
                "description": None,
                "badge": None,
                "user_attributes": None,
                "event_attributes": None,
            }
        ]
    )

    assert response.issues == []
    (cleared,) = response.updated
    assert (cleared.description, cleared.badge) == (None, None)
    assert (cleared.user_attributes, cleared.event_attributes) == ([], [])
    assert (cleared.name, cleared.metric_id, cleared.metric_value) == ("Mobile pro", words.id, 10)
    assert client.admin.achievements.get(created.id) == cleared


def test_update_changes_only_the_given_fields(client: TrophyApi, words: CreatedMetric) -> None:
    created = metric_achievement(
        client, words, 10, "Ten", status="inactive", description="d", badge={"url": BADGE}
    )

    response = client.admin.achievements.with_raw_response.update(
        request=[{"id": created.id, "name": "Twenty", "metric_value": 20.5, "status": "active"}]
    )

    assert response.status_code == 200
    assert response.data.issues == []
    (updated,) = response.data.updated
    assert (updated.id, updated.name, updated.metric_value, updated.status) == (
        created.id,
        "Twenty",
        20.5,
        "active",
    )
    assert (updated.description, updated.badge, updated.metric_id) == (
        "d",
        AdminAchievementBadge(url=BADGE),
        words.id,
    )
    assert client.admin.achievements.get(created.id) == updated


def test_changing_the_trigger_needs_the_new_triggers_fields_and_drops_the_old_ones(
    client: TrophyApi, words: CreatedMetric
) -> None:
    created = metric_achievement(client, words, 10, "Ten")

    missing = client.admin.achievements.update(request=[{"id": created.id, "trigger": "api"}])

    assert missing.updated == []
    assert [(i.id, i.severity) for i in missing.issues] == [(created.id, "error")]
    assert "key" in missing.issues[0].message
    assert client.admin.achievements.get(created.id) == created

    changed = client.admin.achievements.update(
        request=[{"id": created.id, "trigger": "api", "key": "ten"}]
    )

    assert changed.issues == []
    (api,) = changed.updated
    assert (api.trigger, api.key, api.name, api.status) == ("api", "ten", "Ten", "active")
    assert (api.metric_id, api.metric_value, api.event_attributes) == (None, None, None)
    assert client.admin.achievements.get(created.id) == api


def test_update_refuses_fields_of_another_trigger(client: TrophyApi, words: CreatedMetric) -> None:
    created = metric_achievement(client, words, 10, "Ten")

    response = client.admin.achievements.update(
        request=[{"id": created.id, "streak_length": 3, "name": "Renamed"}]
    )

    assert response.updated == []
    assert [(i.id, i.severity) for i in response.issues] == [(created.id, "error")]
    assert "streakLength" in response.issues[0].message
    assert client.admin.achievements.get(created.id).name == "Ten"


InvalidItem = Callable[[CreatedMetric, AdminAttribute, AdminAttribute], dict[str, Any]]


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (lambda m, u, e: {"trigger": "metric", "metric_id": m.id}, "metricValue"),
        (lambda m, u, e: {"trigger": "metric", "metric_value": 5}, "metricId"),
        (
            lambda m, u, e: {
                "trigger": "metric",
                "metric_id": str(uuid.uuid4()),
                "metric_value": 5,
            },
            "metricId",
        ),
        (
            lambda m, u, e: {"trigger": "metric", "metric_id": m.id, "metric_value": 0},
            "metricValue",
        ),
        (lambda m, u, e: {"trigger": "api"}, "key"),
        (lambda m, u, e: {"trigger": "api", "key": "has space"}, "key"),
        (lambda m, u, e: {"trigger": "streak"}, "streakLength"),
        (lambda m, u, e: {"trigger": "streak", "streak_length": 0}, "streakLength"),
        (lambda m, u, e: {"trigger": "streak", "streak_length": 3, "key": "k"}, "key"),
        (lambda m, u, e: {"trigger": "anniversary"}, "anniversaryYears"),
        (lambda m, u, e: {"trigger": "achievement"}, "achievementIds"),
        (
            lambda m, u, e: {"trigger": "achievement", "achievement_ids": [str(uuid.uuid4())]},
            "achievementIds",
        ),
        (lambda m, u, e: {"trigger": "badge"}, "trigger"),
        (lambda m, u, e: {"trigger": "api", "key": "k", "status": "archived"}, "status"),
        (
            lambda m, u, e: {
                "trigger": "api",
                "key": "k",
                "user_attributes": [{"attribute_id": str(uuid.uuid4()), "attribute_value": "x"}],
            },
            "not found",
        ),
        (  # an event attribute is not a user attribute
            lambda m, u, e: {
                "trigger": "api",
                "key": "k",
                "user_attributes": [{"attribute_id": e.id, "attribute_value": "x"}],
            },
            "not found",
        ),
        (  # and a user attribute is not an event attribute
            lambda m, u, e: {
                "trigger": "metric",
                "metric_id": m.id,
                "metric_value": 1,
                "event_attributes": [{"attribute_id": u.id, "attribute_value": "x"}],
            },
            "not found",
        ),
        (lambda m, u, e: {"trigger": "api", "key": "k", "badge": {"url": "not a url"}}, "url"),
    ],
)
def test_invalid_items_are_issues_by_index_and_create_nothing(
    client: TrophyApi,
    words: CreatedMetric,
    plan: AdminAttribute,
    device: AdminAttribute,
    item: InvalidItem,
    expected: str,
) -> None:
    response = client.admin.achievements.with_raw_response.create(
        request=[{"name": "Invalid", **item(words, plan, device)}]
    )

    assert response.status_code == 200
    assert response.data.created == []
    assert [(i.index, i.severity) for i in response.data.issues] == [(0, "error")]
    assert expected in response.data.issues[0].message
    assert client.admin.achievements.list() == []


def test_an_api_key_is_unique_among_achievements(client: TrophyApi) -> None:
    first = api_achievement(client, "unlocked")
    other = api_achievement(client, "other")

    response = client.admin.achievements.with_raw_response.create(
        request=[
            {"name": "Again", "trigger": "api", "key": "unlocked"},
            {"name": "Fresh", "trigger": "api", "key": "fresh"},
            {"name": "Fresh again", "trigger": "api", "key": "fresh"},
        ]
    )

    assert response.status_code == 201
    assert [a.key for a in response.data.created] == ["fresh"]
    assert [(i.index, i.severity) for i in response.data.issues] == [(0, "error"), (2, "error")]
    assert all("Key already in use" in i.message for i in response.data.issues)

    renamed = client.admin.achievements.update(request=[{"id": other.id, "key": "unlocked"}])

    assert renamed.updated == []
    assert [(i.id, i.severity) for i in renamed.issues] == [(other.id, "error")]
    assert client.admin.achievements.get(other.id).key == "other"
    assert client.admin.achievements.get(first.id).key == "unlocked"


def test_composites_refuse_themselves_and_cycles(client: TrophyApi) -> None:
    base = api_achievement(client, "base")
    middle = composite(client, "Middle", base)
    top = composite(client, "Top", middle)

    response = client.admin.achievements.update(
        request=[
            {"id": middle.id, "achievement_ids": [top.id]},
            {"id": top.id, "achievement_ids": [top.id, base.id]},
        ]
    )

    assert response.updated == []
    assert [(i.id, i.severity) for i in response.issues] == [
        (middle.id, "error"),
        (top.id, "error"),
    ]
    assert "cycle" in response.issues[0].message
    assert "itself" in response.issues[1].message
    assert client.admin.achievements.get(middle.id).achievement_ids == [base.id]
    assert client.admin.achievements.get(top.id).achievement_ids == [middle.id]


def test_a_composite_needs_at_least_one_prerequisite(client: TrophyApi) -> None:
    # A composite completes when all of its prerequisites are completed and backdating looks
    # for users with every prerequisite: without any, it could never be completed.
    base = api_achievement(client, "base")
    top = composite(client, "Top", base)

    created = client.admin.achievements.create(
        request=[{"name": "Empty", "trigger": "achievement", "achievement_ids": []}]
    )
    updated = client.admin.achievements.update(request=[{"id": top.id, "achievement_ids": []}])

    assert created.created == []
    assert [(i.index, i.severity) for i in created.issues] == [(0, "error")]
    assert "achievementIds" in created.issues[0].message
    assert updated.updated == []
    assert [(i.id, i.severity) for i in updated.issues] == [(top.id, "error")]
    assert "achievementIds" in updated.issues[0].message
    assert client.admin.achievements.get(top.id).achievement_ids == [base.id]


def test_list_is_oldest_first_with_limit_and_skip(client: TrophyApi) -> None:
    created = [api_achievement(client, f"key-{n}") for n in range(4)]

    assert [a.id for a in client.admin.achievements.list()] == [a.id for a in created]
    assert [a.key for a in client.admin.achievements.list(limit=2, skip=1)] == ["key-1", "key-2"]
    assert client.admin.achievements.list(skip=4) == []


def test_get_of_an_unknown_or_malformed_id_is_404(client: TrophyApi) -> None:
    for achievement_id in (str(uuid.uuid4()), "not-a-uuid"):
        with pytest.raises(NotFoundError) as caught:
            client.admin.achievements.get(achievement_id)
        assert error_message(caught.value) == "Achievement not found by ID"


# --- admin: delete ----------------------------------------------------------------------------


def test_delete_removes_achievements_and_their_completions_and_reports_unknown_ids(
    client: TrophyApi,
) -> None:
    gone = api_achievement(client, "gone")
    kept = api_achievement(client, "kept")
    client.achievements.complete("gone", user={"id": "ada"})
    unknown = str(uuid.uuid4())
    # ada completed it: nothing goes until its key confirms it (issue 27's guard rails).
    refused = client.admin.achievements.delete(ids=[gone.id])
    assert refused.deleted == []
    assert [(i.id, i.severity) for i in refused.issues] == [(gone.id, "error")]

    response = client.admin.achievements.with_raw_response.delete(
        ids=[gone.id, unknown, "not-a-uuid"],
        request_options={"additional_query_parameters": {"confirm": "gone"}},
    )

    assert response.status_code == 200
    assert response.data.deleted == [DeletedResource(id=gone.id)]
    assert [(i.id, i.severity) for i in response.data.issues] == [
        (unknown, "error"),
        ("not-a-uuid", "error"),
    ]
    assert response.data.issues[0].message == "Achievement not found by ID"
    with pytest.raises(NotFoundError):
        client.admin.achievements.get(gone.id)
    assert [a.id for a in client.admin.achievements.list()] == [kept.id]
    assert client.users.achievements("ada") == []
    with pytest.raises(NotFoundError):
        client.achievements.complete("gone", user={"id": "ada"})


def test_an_achievement_that_others_require_cannot_be_deleted(client: TrophyApi) -> None:
    base = api_achievement(client, "base")
    top = composite(client, "Top", base)

    refused = client.admin.achievements.delete(ids=[base.id])

    assert refused.deleted == []
    assert [(i.id, i.severity) for i in refused.issues] == [(base.id, "error")]
    assert "achievementIds" in refused.issues[0].message
    assert client.admin.achievements.get(base.id) == base

    # Deleting the composite first (the same request, in order) frees it.
    both = client.admin.achievements.delete(ids=f"{top.id},{base.id}")

    assert [d.id for d in both.deleted] == [top.id, base.id]
    assert both.issues == []
    assert client.admin.achievements.list() == []


def test_deleting_a_metric_deletes_the_achievements_that_count_it(
    client: TrophyApi, words: CreatedMetric
) -> None:
    counted = metric_achievement(client, words, 1, "Counted")
    other = api_achievement(client, "other")

    assert client.admin.metrics.delete(ids=[words.id]).issues == []

    assert [a.id for a in client.admin.achievements.list()] == [other.id]
    with pytest.raises(NotFoundError):
        client.admin.achievements.get(counted.id)


def test_the_admin_achievement_endpoints_refuse_an_unknown_key(
    client: TrophyApi, make_client: MakeClient
) -> None:
    anonymous = make_client("not-a-key")

    for call in (
        anonymous.admin.achievements.list,
        lambda: anonymous.admin.achievements.get(str(uuid.uuid4())),
        lambda: anonymous.admin.achievements.create(request=[{"name": "x", "trigger": "api"}]),
        lambda: anonymous.admin.achievements.delete(ids=[str(uuid.uuid4())]),
        lambda: anonymous.achievements.all_(),
    ):
        with pytest.raises(UnauthorizedError) as caught:
            call()
        assert caught.value.status_code == 401


# --- GET /achievements ------------------------------------------------------------------------


def test_all_lists_active_achievements_with_completions_and_rarity(
    client: TrophyApi, words: CreatedMetric
) -> None:
    unlocked = api_achievement(client, "unlocked", description="Unlock it", badge={"url": BADGE})
    ten = metric_achievement(client, words, 10, "Ten words")
    api_achievement(client, "hidden", status="inactive")
    old = api_achievement(client, "old")
    client.achievements.complete("unlocked", user={"id": "ada"})
    client.achievements.complete("old", user={"id": "ada"})
    set_status(client, old, "locked")
    client.users.create(id="bob")
    client.users.create(id="cat")

    listed = client.achievements.all_()

    assert all(isinstance(a, AchievementWithStatsResponse) for a in listed)
    assert [a.id for a in listed] == [unlocked.id, ten.id]  # neither inactive nor locked
    first, second = listed
    assert (first.name, first.trigger, first.key, first.description, first.badge_url) == (
        "Unlocked",
        "api",
        "unlocked",
        "Unlock it",
        BADGE,
    )
    assert (first.completions, first.rarity) == (1, 33.33)  # 1 of 3 users
    assert (first.metric_id, first.metric_value, first.event_attributes) == (None, None, None)
    assert first.user_attributes == []
    assert (second.trigger, second.metric_id, second.metric_name, second.metric_value) == (
        "metric",
        words.id,
        "Words",
        10,
    )
    assert (second.event_attributes, second.key, second.badge_url) == ([], None, None)
    assert (second.completions, second.rarity) == (0, 0)


def test_all_without_users_or_achievements(client: TrophyApi) -> None:
    assert client.achievements.all_() == []

    api_achievement(client, "first")

    (only,) = client.achievements.all_()
    assert (only.completions, only.rarity) == (0, 0)


def test_all_with_user_attributes_lists_the_achievements_open_to_such_a_user(
    client: TrophyApi, plan: AdminAttribute
) -> None:
    region = create_attribute(client, "region", "user")
    api_achievement(client, "anyone")
    api_achievement(
        client, "pro-only", user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}]
    )
    api_achievement(
        client,
        "pro-in-eu",
        user_attributes=[
            {"attribute_id": plan.id, "attribute_value": "pro"},
            {"attribute_id": region.id, "attribute_value": "eu"},
        ],
    )

    everything = client.achievements.all_()
    pro = client.achievements.all_(user_attributes="plan:pro")
    pro_eu = client.achievements.all_(user_attributes="plan:pro,region:eu")
    free = client.achievements.all_(user_attributes="plan:free")

    assert [a.key for a in everything] == ["anyone", "pro-only", "pro-in-eu"]
    assert [a.key for a in pro] == ["anyone", "pro-only"]
    assert [a.key for a in pro_eu] == ["anyone", "pro-only", "pro-in-eu"]
    assert [a.key for a in free] == ["anyone"]
    assert [(f.key, f.value) for f in everything[2].user_attributes] == [
        ("plan", "pro"),
        ("region", "eu"),
    ]


def test_all_with_a_malformed_user_attributes_filter_is_422(client: TrophyApi) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        client.achievements.all_(user_attributes="plan")

    assert "userAttributes" in error_message(caught.value)


# --- POST /achievements/{key}/complete --------------------------------------------------------


def test_complete_answers_201_then_200_with_the_same_completion(client: TrophyApi) -> None:
    created = api_achievement(client, "finished-tutorial", description="Done", badge={"url": BADGE})

    first = client.achievements.with_raw_response.complete(
        "finished-tutorial", user={"id": "ada", "tz": "Europe/Paris"}
    )

    assert first.status_code == 201
    completion = first.data
    assert isinstance(completion, AchievementCompletionResponse)
    assert uuid.UUID(completion.completion_id)
    assert completion.points == {}
    achievement = completion.achievement
    assert isinstance(achievement, UserAchievementResponse)
    assert (achievement.id, achievement.name, achievement.trigger, achievement.key) == (
        created.id,
        "Finished Tutorial",
        "api",
        "finished-tutorial",
    )
    assert (achievement.description, achievement.badge_url) == ("Done", BADGE)
    assert achievement.user_attributes == []
    assert_recent(achievement.achieved_at)

    again = client.achievements.with_raw_response.complete("finished-tutorial", user={"id": "ada"})

    assert again.status_code == 200
    assert again.data.completion_id == completion.completion_id
    assert again.data.achievement.achieved_at == achievement.achieved_at
    (listed,) = client.users.achievements("ada")
    assert (listed.id, listed.achieved_at) == (created.id, achievement.achieved_at)
    assert (listed.completions, listed.rarity) == (1, 100)


def test_complete_creates_the_user_with_the_given_fields(
    client: TrophyApi, plan: AdminAttribute
) -> None:
    api_achievement(client, "welcome")

    client.achievements.complete(
        "welcome", user={"id": "ada", "name": "Ada", "attributes": {"plan": "pro"}}
    )

    user = client.users.get("ada")
    assert (user.id, user.name, user.attributes) == ("ada", "Ada", {"plan": "pro"})
    assert names(client.users.achievements("ada")) == ["Welcome"]


def test_completing_an_unknown_key_is_404(client: TrophyApi, words: CreatedMetric) -> None:
    api_achievement(client, "draft", status="inactive")

    for key in ("ghost", "draft"):
        with pytest.raises(ApiError) as caught:
            client.achievements.complete(key, user={"id": "ada"})
        assert isinstance(caught.value, NotFoundError)
        assert caught.value.status_code == 404
        assert key in error_message(caught.value)


def test_completing_a_locked_achievement_is_422_except_for_an_earlier_completion(
    client: TrophyApi,
) -> None:
    retired = api_achievement(client, "retired")
    earlier = client.achievements.complete("retired", user={"id": "ada"})
    set_status(client, retired, "locked")
    client.users.create(id="bob")

    with pytest.raises(UnprocessableEntityError) as caught:
        client.achievements.complete("retired", user={"id": "bob"})

    assert caught.value.status_code == 422
    assert "locked" in error_message(caught.value)
    assert client.users.achievements("bob") == []
    again = client.achievements.with_raw_response.complete("retired", user={"id": "ada"})
    assert again.status_code == 200
    assert again.data.completion_id == earlier.completion_id


def test_complete_refuses_a_user_outside_the_user_attribute_filters(
    client: TrophyApi, plan: AdminAttribute
) -> None:
    api_achievement(
        client, "pro-perk", user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}]
    )

    client.users.create(id="ada", attributes={"plan": "free"})

    with pytest.raises(UnprocessableEntityError) as caught:
        client.achievements.complete("pro-perk", user={"id": "ada"})

    assert "attribute" in error_message(caught.value)
    assert client.users.achievements("ada", include_incomplete="true") == []

    # The attributes sent with the completion apply before the filters are checked.
    upgraded = client.achievements.with_raw_response.complete(
        "pro-perk", user={"id": "ada", "attributes": {"plan": "pro"}}
    )

    assert upgraded.status_code == 201
    (listed,) = client.users.achievements("ada")
    assert [(f.key, f.value) for f in listed.user_attributes] == [("plan", "pro")]


@pytest.mark.parametrize(
    ("user", "expected"),
    [
        ({"id": "ada", "tz": "Mars/Base"}, "tz"),
        ({"id": "ada", "attributes": {"unknown": "x"}}, "unknown"),
        ({"id": "ada", "email": "not-an-email"}, "email"),
    ],
)
def test_complete_validates_the_user(
    client: TrophyApi, user: dict[str, Any], expected: str
) -> None:
    api_achievement(client, "welcome")

    with pytest.raises(UnprocessableEntityError) as caught:
        client.achievements.complete("welcome", user=user)

    assert expected in error_message(caught.value)
    with pytest.raises(ApiError) as missing:  # the SDK maps no error type to users.get's 404
        client.users.get("ada")
    assert missing.value.status_code == 404


def test_completing_the_last_prerequisite_completes_the_composite(client: TrophyApi) -> None:
    first = api_achievement(client, "first")
    second = api_achievement(client, "second")
    both = composite(client, "Both", first, second)

    client.achievements.complete("first", user={"id": "ada"})

    assert achieved(client, "ada")["Both"] is None

    last = client.achievements.complete("second", user={"id": "ada"})

    assert last.achievement.id == second.id
    completed = {a.id: a for a in client.users.achievements("ada")}
    assert set(completed) == {first.id, second.id, both.id}
    assert completed[both.id].achieved_at == last.achievement.achieved_at
    assert sorted(completed[both.id].achievement_ids or []) == sorted([first.id, second.id])
    assert completed[both.id].trigger == "achievement"


def test_an_application_key_acts_only_for_its_own_user(
    client: TrophyApi, make_client: MakeClient
) -> None:
    api_achievement(client, "welcome")
    (key,) = client.admin.application_api_keys.create(request=[{"user_id": "ada"}]).created
    ada = make_client(key.key)

    assert ada.achievements.complete("welcome", user={"id": "ada"}).achievement.key == "welcome"
    assert names(ada.users.achievements("ada")) == ["Welcome"]
    for call in (
        lambda: ada.achievements.complete("welcome", user={"id": "bob"}),
        lambda: ada.users.achievements("bob"),
    ):
        with pytest.raises(ApiError) as caught:
            call()
        assert caught.value.status_code == 403
        error_message(caught.value)
    assert [a.completions for a in ada.achievements.all_()] == [1]


# --- GET /users/{id}/achievements -------------------------------------------------------------


def test_user_achievements_lists_completed_ones_and_include_incomplete_adds_open_ones(
    client: TrophyApi, words: CreatedMetric, plan: AdminAttribute
) -> None:
    api_achievement(client, "done")
    metric_achievement(client, words, 10, "Ten words")
    api_achievement(client, "draft", status="inactive")
    retired = api_achievement(client, "retired")
    gone = api_achievement(client, "gone")
    api_achievement(
        client, "pro-perk", user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}]
    )
    client.users.create(id="ada", attributes={"plan": "free"})
    client.users.create(id="bob")
    done = client.achievements.complete("done", user={"id": "ada"})
    client.achievements.complete("retired", user={"id": "ada"})
    set_status(client, retired, "locked")
    set_status(client, gone, "locked")

    completed = client.users.achievements("ada")
    everything = client.users.achievements("ada", include_incomplete="true")

    assert all(isinstance(a, UserAchievementWithStatsResponse) for a in everything)
    assert names(completed) == ["Done", "Retired"]
    assert completed[0].achieved_at == done.achievement.achieved_at
    assert_recent(completed[1].achieved_at)
    assert [(a.completions, a.rarity) for a in completed] == [(1, 50), (1, 50)]
    # Open ones are added; inactive, locked-and-not-completed and filtered-out ones are not.
    assert [(a.name, a.achieved_at is None) for a in everything] == [
        ("Done", False),
        ("Ten words", True),
        ("Retired", False),
    ]
    ten = everything[1]
    assert (ten.metric_id, ten.metric_name, ten.metric_value) == (words.id, "Words", 10)
    assert (ten.completions, ten.rarity) == (0, 0)
    # bob has no plan: the pro-only one is not open to him either.
    assert names(client.users.achievements("bob", include_incomplete="true")) == [
        "Done",
        "Ten words",
    ]
    assert client.users.achievements("bob") == []


def test_user_achievements_of_an_unknown_user_is_404(client: TrophyApi) -> None:
    api_achievement(client, "done")

    with pytest.raises(NotFoundError) as caught:
        client.users.achievements("ghost", include_incomplete="true")

    assert "ghost" in error_message(caught.value)


# --- the achievements of a metric event -------------------------------------------------------


def test_an_event_lists_the_achievements_it_completes_once(
    client: TrophyApi, words: CreatedMetric
) -> None:
    five = metric_achievement(client, words, 5, "Five words", badge={"url": BADGE})
    metric_achievement(client, words, 10, "Ten words")

    below = event(client, "ada", 3)
    reached = event(client, "ada", 3)
    after = event(client, "ada", 1)

    assert (below.total, below.achievements) == (3, [])
    assert reached.total == 6
    (completed,) = reached.achievements
    assert (completed.id, completed.name, completed.trigger) == (five.id, "Five words", "metric")
    assert (completed.metric_id, completed.metric_name, completed.metric_value) == (
        words.id,
        "Words",
        5,
    )
    assert (completed.badge_url, completed.event_attributes, completed.user_attributes) == (
        BADGE,
        [],
        [],
    )
    assert_recent(completed.achieved_at)
    assert after.achievements == []
    assert names(event(client, "ada", 10).achievements) == ["Ten words"]
    assert achieved(client, "ada")["Five words"] == completed.achieved_at


def test_one_event_completes_several_achievements_and_the_composites_they_finish(
    client: TrophyApi, words: CreatedMetric
) -> None:
    one = metric_achievement(client, words, 1, "One")
    three = metric_achievement(client, words, 3, "Three")
    both = composite(client, "Both", one, three)
    composite(client, "Crowned", both)
    metric_achievement(client, words, 100, "Hundred")

    response = event(client, "ada", 5)

    assert names(response.achievements) == ["One", "Three", "Both", "Crowned"]
    assert len({a.achieved_at for a in response.achievements}) == 1
    composed = response.achievements[2]
    assert (composed.trigger, composed.metric_id) == ("achievement", None)
    assert sorted(composed.achievement_ids or []) == sorted([one.id, three.id])
    assert event(client, "ada", 5).achievements == []


def test_a_composite_completes_in_the_event_that_completes_its_last_prerequisite(
    client: TrophyApi, words: CreatedMetric
) -> None:
    tutorial = api_achievement(client, "tutorial")
    five = metric_achievement(client, words, 5, "Five")
    composite(client, "Ready", tutorial, five)
    client.achievements.complete("tutorial", user={"id": "ada"})

    before = event(client, "ada", 4)
    last = event(client, "ada", 1)

    assert before.achievements == []
    assert names(last.achievements) == ["Five", "Ready"]
    assert last.achievements[0].achieved_at == last.achievements[1].achieved_at


def test_a_composite_does_not_complete_with_an_inactive_prerequisite_missing(
    client: TrophyApi, words: CreatedMetric
) -> None:
    one = metric_achievement(client, words, 1, "One")
    draft = api_achievement(client, "draft", status="inactive")
    composite(client, "Both", one, draft)

    assert names(event(client, "ada", 1).achievements) == ["One"]
    assert "Both" in achieved(client, "ada")
    assert achieved(client, "ada")["Both"] is None


def test_inactive_and_locked_achievements_are_not_completed_by_events(
    client: TrophyApi, words: CreatedMetric
) -> None:
    metric_achievement(client, words, 1, "Draft", status="inactive")
    metric_achievement(client, words, 1, "Retired", status="locked")

    assert event(client, "ada", 5).achievements == []
    assert client.users.achievements("ada", include_incomplete="true") == []


def test_event_attribute_filters_count_only_matching_events(
    client: TrophyApi, words: CreatedMetric, device: AdminAttribute
) -> None:
    mobile = metric_achievement(
        client,
        words,
        3,
        "Mobile writer",
        event_attributes=[{"attribute_id": device.id, "attribute_value": "mobile"}],
    )

    web = event(client, "ada", 5, attributes={"device": "web"})
    some = event(client, "ada", 2, attributes={"device": "mobile"})
    bare = event(client, "ada", 4)
    enough = event(client, "ada", 1, attributes={"device": "mobile"})

    assert [r.achievements for r in (web, some, bare)] == [[], [], []]
    assert enough.total == 12
    (completed,) = enough.achievements
    assert completed.id == mobile.id
    assert [(f.key, f.value) for f in completed.event_attributes or []] == [("device", "mobile")]


def test_user_attribute_filters_decide_who_completes_by_event(
    client: TrophyApi, words: CreatedMetric, plan: AdminAttribute
) -> None:
    metric_achievement(
        client,
        words,
        1,
        "Pro writer",
        user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}],
    )

    free = client.metrics.event(
        "words", user={"id": "ada", "attributes": {"plan": "free"}}, value=1
    )
    pro = client.metrics.event("words", user={"id": "bob", "attributes": {"plan": "pro"}}, value=1)

    assert free.achievements == []
    assert names(pro.achievements) == ["Pro writer"]
    assert achieved(client, "ada") == {}

    upgraded = client.metrics.event(
        "words", user={"id": "ada", "attributes": {"plan": "pro"}}, value=1
    )

    assert names(upgraded.achievements) == ["Pro writer"]


def test_an_achievement_filtered_on_a_deleted_attribute_is_open_to_nobody(
    client: TrophyApi, plan: AdminAttribute
) -> None:
    api_achievement(
        client, "pro-perk", user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}]
    )
    client.users.create(id="ada", attributes={"plan": "pro"})

    assert client.admin.attributes.delete(ids=[plan.id]).issues == []

    assert client.users.achievements("ada", include_incomplete="true") == []
    assert client.achievements.all_(user_attributes="plan:pro") == []
    with pytest.raises(UnprocessableEntityError):
        client.achievements.complete("pro-perk", user={"id": "ada"})


def test_a_streak_achievement_completes_when_the_streak_reaches_its_length(
    client: TrophyApi, words: CreatedMetric
) -> None:
    client.admin.streaks.settings.update(metrics=[{"key": "words", "threshold": 1}])
    started = create(client, name="Started", trigger="streak", streak_length=1, status="active")
    create(client, name="Week", trigger="streak", streak_length=7, status="active")

    response = event(client, "ada", 1)

    assert response.current_streak.length == 1
    (completed,) = response.achievements
    assert (completed.id, completed.trigger, completed.streak_length) == (started.id, "streak", 1)
    assert completed.metric_id is None
    assert achieved(client, "ada")["Week"] is None


# --- backdating -------------------------------------------------------------------------------


def test_activating_an_achievement_backdates_it_for_users_who_already_qualify(
    client: TrophyApi, words: CreatedMetric
) -> None:
    five = metric_achievement(client, words, 5, "Five", status="inactive")
    event(client, "ada", 6)
    event(client, "bob", 2)

    set_status(client, five, "active")

    assert_recent(achieved(client, "ada")["Five"])
    assert achieved(client, "bob")["Five"] is None
    (listed,) = client.achievements.all_()
    assert (listed.completions, listed.rarity) == (1, 50)
    # Completed silently: later events do not list it again; others still complete it.
    assert event(client, "ada", 1).achievements == []
    assert names(event(client, "bob", 3).achievements) == ["Five"]


def test_moving_an_active_achievement_to_another_metric_backdates_it(
    client: TrophyApi, words: CreatedMetric
) -> None:
    lessons = create_metric(client, "lessons", "Lessons")
    five = metric_achievement(client, words, 5, "Five")
    event(client, "ada", 6, key="lessons")
    assert achieved(client, "ada")["Five"] is None

    (moved,) = client.admin.achievements.update(
        request=[{"id": five.id, "metric_id": lessons.id}]
    ).updated

    assert (moved.metric_id, moved.metric_value) == (lessons.id, 5)
    assert_recent(achieved(client, "ada")["Five"])
    assert names(client.users.single_metric("ada", "lessons").achievements) == ["Five"]
    assert client.users.single_metric("ada", "words").achievements == []


def test_creating_an_active_achievement_backdates_it(
    client: TrophyApi, words: CreatedMetric
) -> None:
    event(client, "ada", 6)
    event(client, "bob", 1)

    metric_achievement(client, words, 5, "Five")

    assert_recent(achieved(client, "ada")["Five"])
    assert achieved(client, "bob")["Five"] is None


def test_lowering_the_threshold_of_an_active_achievement_backdates_it(
    client: TrophyApi, words: CreatedMetric
) -> None:
    ten = metric_achievement(client, words, 10, "Ten")
    event(client, "ada", 6)
    assert achieved(client, "ada")["Ten"] is None

    client.admin.achievements.update(request=[{"id": ten.id, "metric_value": 5}])

    assert_recent(achieved(client, "ada")["Ten"])


def test_backdating_respects_user_and_event_attribute_filters(
    client: TrophyApi, words: CreatedMetric, plan: AdminAttribute, device: AdminAttribute
) -> None:
    for user, tier, where in (("ada", "pro", "mobile"), ("bob", "free", "mobile")):
        client.metrics.event(
            "words",
            user={"id": user, "attributes": {"plan": tier}},
            value=3,
            attributes={"device": where},
        )
    client.metrics.event(
        "words", user={"id": "cat", "attributes": {"plan": "pro"}}, value=3, attributes={}
    )
    client.metrics.event(
        "words",
        user={"id": "dan", "attributes": {"plan": "pro"}},
        value=3,
        attributes={"device": "web"},
    )

    metric_achievement(
        client,
        words,
        3,
        "Mobile pro",
        user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}],
        event_attributes=[{"attribute_id": device.id, "attribute_value": "mobile"}],
    )

    assert_recent(achieved(client, "ada")["Mobile pro"])
    assert achieved(client, "bob") == {}  # filtered out: not even listed as open
    assert achieved(client, "cat")["Mobile pro"] is None
    assert achieved(client, "dan")["Mobile pro"] is None
    assert [a.completions for a in client.achievements.all_()] == [1]


def test_activating_a_prerequisite_backdates_the_composites_it_finishes(
    client: TrophyApi, words: CreatedMetric
) -> None:
    tutorial = api_achievement(client, "tutorial")
    one = metric_achievement(client, words, 1, "One", status="inactive")
    composite(client, "Ready", tutorial, one)
    client.achievements.complete("tutorial", user={"id": "ada"})
    client.achievements.complete("tutorial", user={"id": "bob"})
    event(client, "ada", 1)
    assert achieved(client, "ada")["Ready"] is None

    set_status(client, one, "active")

    ada = achieved(client, "ada")
    assert_recent(ada["One"])
    assert ada["Ready"] == ada["One"]
    assert achieved(client, "bob")["Ready"] is None


def test_creating_an_active_composite_backdates_it_for_users_with_every_prerequisite(
    client: TrophyApi,
) -> None:
    first = api_achievement(client, "first")
    second = api_achievement(client, "second")
    for user, keys in (("ada", ["first", "second"]), ("bob", ["first"])):
        for key in keys:
            client.achievements.complete(key, user={"id": user})

    composite(client, "Both", first, second)

    assert_recent(achieved(client, "ada")["Both"])
    assert achieved(client, "bob")["Both"] is None


def test_an_anniversary_achievement_is_backdated_for_users_who_signed_up_long_enough_ago(
    client: TrophyApi,
) -> None:
    client.users.create(id="ada", sign_up_date=ago(800), tz="UTC")
    client.users.create(id="bob", sign_up_date=ago(100), tz="UTC")
    client.users.create(id="cat", tz="UTC")  # no sign-up date: never

    anniversary = create(
        client, name="One year", trigger="anniversary", anniversary_years=1, status="active"
    )

    assert_recent(achieved(client, "ada")["One year"])
    assert achieved(client, "bob")["One year"] is None
    assert achieved(client, "cat")["One year"] is None
    (listed,) = client.users.achievements("ada")
    assert (listed.id, listed.trigger, listed.anniversary_years) == (
        anniversary.id,
        "anniversary",
        1,
    )
    assert (listed.completions, listed.rarity) == (1, 33.33)


def test_a_streak_achievement_is_backdated_for_users_with_a_long_enough_streak(
    client: TrophyApi, words: CreatedMetric
) -> None:
    client.admin.streaks.settings.update(metrics=[{"key": "words", "threshold": 1}])
    assert event(client, "ada", 1).current_streak.length == 1
    client.users.create(id="bob")

    create(client, name="Started", trigger="streak", streak_length=1, status="active")

    assert_recent(achieved(client, "ada")["Started"])
    assert achieved(client, "bob")["Started"] is None


def test_locking_keeps_completions_and_stops_new_ones(
    client: TrophyApi, words: CreatedMetric
) -> None:
    five = metric_achievement(client, words, 5, "Five")
    done = event(client, "ada", 5).achievements[0].achieved_at

    set_status(client, five, "locked")

    assert event(client, "bob", 5).achievements == []
    assert achieved(client, "ada") == {"Five": done}
    assert achieved(client, "bob") == {}
    assert client.achievements.all_() == []

    # Re-activating backdates it for bob, and leaves ada's completion as it was.
    set_status(client, five, "active")

    assert achieved(client, "ada") == {"Five": done}
    assert_recent(achieved(client, "bob")["Five"])


# --- a user's metrics with their achievements -------------------------------------------------


def test_user_metrics_list_each_metrics_achievements_with_achieved_at(
    client: TrophyApi, words: CreatedMetric, plan: AdminAttribute
) -> None:
    lessons = create_metric(client, "lessons", "Lessons")
    five = metric_achievement(client, words, 5, "Five words")
    metric_achievement(client, words, 10, "Ten words")
    metric_achievement(client, words, 1, "Draft", status="inactive")
    metric_achievement(client, words, 1000, "Retired", status="locked")
    metric_achievement(
        client,
        words,
        1,
        "Pro words",
        user_attributes=[{"attribute_id": plan.id, "attribute_value": "pro"}],
    )
    one_lesson = metric_achievement(client, lessons, 1, "One lesson")
    api_achievement(client, "not-a-metric")
    done = client.metrics.event(
        "words", user={"id": "ada", "attributes": {"plan": "free"}}, value=6
    ).achievements

    metrics = client.users.all_metrics("ada")
    single = client.users.single_metric("ada", "words")

    assert names(done) == ["Five words"]
    assert all(isinstance(m, MetricResponse) for m in metrics)
    by_key = {m.key: m for m in metrics}
    assert by_key["words"] == single
    assert single.current == 6
    assert [(a.name, a.achieved_at) for a in single.achievements] == [
        ("Five words", done[0].achieved_at),
        ("Ten words", None),
    ]
    assert all(isinstance(a, UserAchievementResponse) for a in single.achievements)
    first = single.achievements[0]
    assert (first.id, first.trigger, first.metric_id, first.metric_value) == (
        five.id,
        "metric",
        words.id,
        5,
    )
    assert [(a.id, a.achieved_at) for a in by_key["lessons"].achievements] == [
        (one_lesson.id, None)
    ]


def test_a_locked_achievement_stays_in_the_metrics_of_users_who_completed_it(
    client: TrophyApi, words: CreatedMetric
) -> None:
    five = metric_achievement(client, words, 5, "Five")
    event(client, "ada", 5)
    client.users.create(id="bob")

    set_status(client, five, "locked")

    (achievement,) = client.users.single_metric("ada", "words").achievements
    assert achievement.id == five.id
    assert_recent(achievement.achieved_at)
    assert client.users.single_metric("bob", "words").achievements == []


def test_renaming_a_metric_renames_it_in_its_achievements(
    client: TrophyApi, words: CreatedMetric
) -> None:
    metric_achievement(client, words, 5, "Five")
    client.users.create(id="ada")
    assert client.achievements.all_()[0].metric_name == "Words"

    client.admin.metrics.update(request=[{"id": words.id, "name": "Vocabulary"}])

    assert client.achievements.all_()[0].metric_name == "Vocabulary"
    (achievement,) = client.users.single_metric("ada", "words").achievements
    assert achievement.metric_name == "Vocabulary"
    assert [a.metric_name for a in client.users.achievements("ada", include_incomplete="true")] == [
        "Vocabulary"
    ]


# --- tenants ----------------------------------------------------------------------------------


def test_achievements_belong_to_their_tenant(
    client: TrophyApi, make_client: MakeClient, org: OrganizationWithKey
) -> None:
    client.admin.tenants.create(request=[CreateTenantRequestItem(customer_id="acme-eu", name="EU")])
    eu = make_client(org.admin_key, tenant_id="acme-eu")
    eu_only = api_achievement(eu, "eu-only")
    api_achievement(client, "everywhere")

    assert [a.key for a in client.achievements.all_()] == ["everywhere"]
    assert [a.key for a in eu.achievements.all_()] == ["eu-only"]
    assert [a.key for a in client.admin.achievements.list()] == ["everywhere"]
    with pytest.raises(NotFoundError):
        client.admin.achievements.get(eu_only.id)
    with pytest.raises(NotFoundError):
        client.achievements.complete("eu-only", user={"id": "ada"})
    assert eu.achievements.complete("eu-only", user={"id": "ada"}).achievement.id == eu_only.id
    # The same key may be used in each tenant, and no tenant may require another's.
    assert api_achievement(client, "eu-only").key == "eu-only"
    across = client.admin.achievements.create(
        request=[{"name": "Across", "trigger": "achievement", "achievement_ids": [eu_only.id]}]
    )
    assert across.created == []
    assert [i.message for i in across.issues] == ["achievementIds: Achievement not found by ID"]
