"""Achievements through the public and admin APIs: every trigger kind, attribute filters,
statuses, backdating, composites, rarity, the completion endpoint, replays, admin validation,
tenant isolation and the event endpoint's query count."""

import datetime as dt
from typing import Any

import pytest
import time_machine
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from apps.achievements import services
from apps.achievements.jobs import achievements_anniversaries
from apps.achievements.models import Achievement, AchievementCompletion
from apps.users.models import EndUser
from tests.factories import AttributeFactory, MetricFactory, bump

ADMIN = "/admin/v1/achievements"
UTC = dt.UTC


def at(day: str, hour: int = 12, minute: int = 0) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(hour=hour, minute=minute, tzinfo=UTC)


class Admin:
    """The admin achievements collection, with after-commit work (backdating) run as it would
    be after the request's transaction commits."""

    def __init__(self, client: Any, capture: Any) -> None:
        self.client = client
        self.capture = capture

    def post(self, items: list[dict[str, Any]]) -> Any:
        with self.capture(execute=True):
            return self.client.post(ADMIN, items)

    def patch(self, items: list[dict[str, Any]]) -> Any:
        with self.capture(execute=True):
            return self.client.patch(ADMIN, items)

    def create(self, **item: Any) -> dict[str, Any]:
        response = self.post([item])
        assert response.status_code == 201, response.content
        body = response.json()
        assert body["issues"] == [], body
        return body["created"][0]

    def create_issue(self, **item: Any) -> dict[str, Any]:
        response = self.post([item])
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["created"] == [], body
        assert len(body["issues"]) == 1, body
        return body["issues"][0]

    def update(self, id: str, **fields: Any) -> dict[str, Any]:
        response = self.patch([{"id": id, **fields}])
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["issues"] == [], body
        return body["updated"][0]

    def update_issue(self, id: str, **fields: Any) -> dict[str, Any]:
        response = self.patch([{"id": id, **fields}])
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["updated"] == [], body
        assert len(body["issues"]) == 1, body
        return body["issues"][0]

    def delete(self, *ids: str, query: str = "") -> dict[str, Any]:
        with self.capture(execute=True):
            response = self.client.delete(f"{ADMIN}?ids={','.join(ids)}{query}")
        assert response.status_code == 200, response.content
        return response.json()

    # Shorthands for the common kinds, active unless told otherwise.

    def metric(self, metric: Any, value: Any, name: str | None = None, **item: Any) -> dict:
        item.setdefault("status", "active")
        return self.create(
            name=name or f"{value} {metric.key}",
            trigger="metric",
            metricId=str(metric.public_id),
            metricValue=value,
            **item,
        )

    def api(self, key: str, **item: Any) -> dict:
        item.setdefault("status", "active")
        return self.create(name=item.pop("name", key), trigger="api", key=key, **item)

    def streak(self, length: int, **item: Any) -> dict:
        item.setdefault("status", "active")
        return self.create(
            name=item.pop("name", f"streak {length}"),
            trigger="streak",
            streakLength=length,
            **item,
        )

    def composite(self, *prerequisites: dict, **item: Any) -> dict:
        item.setdefault("status", "active")
        return self.create(
            name=item.pop("name", "composite"),
            trigger="achievement",
            achievementIds=[p["id"] for p in prerequisites],
            **item,
        )

    def anniversary(self, years: int, **item: Any) -> dict:
        item.setdefault("status", "active")
        return self.create(
            name=item.pop("name", f"{years} years"),
            trigger="anniversary",
            anniversaryYears=years,
            **item,
        )


@pytest.fixture
def admin(api_client, django_capture_on_commit_callbacks) -> Admin:
    return Admin(api_client, django_capture_on_commit_callbacks)


@pytest.fixture
def other_admin(other_tenant_client, django_capture_on_commit_callbacks) -> Admin:
    return Admin(other_tenant_client, django_capture_on_commit_callbacks)


@pytest.fixture
def plan(tenant):
    attribute = AttributeFactory(tenant=tenant, key="plan", type="user")
    bump(tenant)
    return attribute


@pytest.fixture
def source(tenant):
    attribute = AttributeFactory(tenant=tenant, key="source", type="event")
    bump(tenant)
    return attribute


def ref(attribute: Any, value: str) -> dict[str, str]:
    return {"attributeId": str(attribute.public_id), "attributeValue": value}


def event(
    client: Any,
    user: str = "u1",
    value: Any = 1,
    key: str = "words",
    attributes: dict[str, str] | None = None,
    idempotency_key: str | None = None,
    status: int = 201,
    user_attributes: dict[str, str] | None = None,
    **user_fields: Any,
) -> dict[str, Any]:
    if user_attributes is not None:
        user_fields["attributes"] = user_attributes
    body: dict[str, Any] = {"user": {"id": user, **user_fields}, "value": value}
    if attributes is not None:
        body["attributes"] = attributes
    headers = {"HTTP_IDEMPOTENCY_KEY": idempotency_key} if idempotency_key else {}
    response = client.post(f"/v1/metrics/{key}/event", body, **headers)
    assert response.status_code == status, response.content
    return response.json()


def complete(client: Any, key: str, user: str = "u1", status: int = 201, **user_fields: Any):
    response = client.post(
        f"/v1/achievements/{key}/complete", {"user": {"id": user, **user_fields}}
    )
    assert response.status_code == status, response.content
    return response.json()


def names(achievements: list[dict[str, Any]]) -> list[str]:
    return [a["name"] for a in achievements]


def user_achievements(client: Any, user: str = "u1", **params: Any) -> dict[str, Any]:
    response = client.get(f"/v1/users/{user}/achievements", params)
    assert response.status_code == 200, response.content
    return {a["name"]: a for a in response.json()}


def all_achievements(client: Any, **params: Any) -> dict[str, Any]:
    response = client.get("/v1/achievements", params)
    assert response.status_code == 200, response.content
    return {a["name"]: a for a in response.json()}


def completions(user: str | None = None, **filters: Any) -> list[tuple[str, str, bool]]:
    rows = AchievementCompletion.objects.filter(**filters)
    if user is not None:
        rows = rows.filter(user__external_id=user)
    return sorted(rows.values_list("user__external_id", "achievement__name", "backdated"))


def configure_streaks(client: Any) -> None:
    response = client.patch(
        "/admin/v1/streaks/settings",
        {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}]},
    )
    assert response.status_code == 200, response.content


# --- metric trigger ------------------------------------------------------------------------


class TestMetricTrigger:
    @time_machine.travel(at("2026-03-10"), tick=False)
    def test_completes_when_the_total_reaches_the_value(self, api_client, admin, metric):
        created = admin.metric(metric, 10, name="Ten words", description="Write ten")
        assert event(api_client, value=4)["achievements"] == []
        body = event(api_client, value=6)
        assert body["total"] == 10
        assert body["achievements"] == [
            {
                "id": created["id"],
                "name": "Ten words",
                "trigger": "metric",
                "description": "Write ten",
                "badgeUrl": None,
                "userAttributes": [],
                "metricId": str(metric.public_id),
                "metricName": "Words",
                "metricValue": 10,
                "eventAttributes": [],
                "achievedAt": "2026-03-10T12:00:00Z",
            }
        ]
        assert completions() == [("u1", "Ten words", False)]

    def test_completes_only_once(self, api_client, admin, metric):
        admin.metric(metric, 10)
        assert names(event(api_client, value=12)["achievements"]) == ["10 words"]
        assert event(api_client, value=5)["achievements"] == []
        # Falling below and reaching the value again completes nothing new.
        assert event(api_client, value=-10)["achievements"] == []
        assert event(api_client, value=10)["achievements"] == []
        assert AchievementCompletion.objects.count() == 1

    def test_one_event_can_complete_several_in_order(self, api_client, admin, metric):
        admin.metric(metric, 5)
        admin.metric(metric, 10)
        admin.metric(metric, 50)
        assert names(event(api_client, value=12)["achievements"]) == ["5 words", "10 words"]
        assert names(event(api_client, value=40)["achievements"]) == ["50 words"]

    def test_decimal_values(self, api_client, admin, metric):
        admin.metric(metric, 1.5)
        assert event(api_client, value=1.25)["achievements"] == []
        body = event(api_client, value=0.25)
        assert [(a["name"], a["metricValue"]) for a in body["achievements"]] == [("1.5 words", 1.5)]

    def test_other_metrics_do_not_count(self, api_client, admin, tenant, metric):
        MetricFactory(tenant=tenant, key="lessons", name="Lessons")
        bump(tenant)
        admin.metric(metric, 3)
        assert event(api_client, value=5, key="lessons")["achievements"] == []
        assert names(event(api_client, value=3)["achievements"]) == ["3 words"]

    def test_each_user_completes_on_their_own_total(self, api_client, admin, metric):
        admin.metric(metric, 3)
        assert event(api_client, user="a", value=2)["achievements"] == []
        assert event(api_client, user="b", value=2)["achievements"] == []
        assert names(event(api_client, user="a", value=1)["achievements"]) == ["3 words"]
        assert completions() == [("a", "3 words", False)]


class TestEventAttributeFilters:
    def test_only_matching_events_count(self, api_client, admin, metric, source):
        created = admin.metric(metric, 10, eventAttributes=[ref(source, "web")])
        assert event(api_client, value=8, attributes={"source": "app"})["achievements"] == []
        assert event(api_client, value=5, attributes={"source": "web"})["achievements"] == []
        # Total 113, but only 5 of it from the web: an unfiltered event completes nothing.
        assert event(api_client, value=100)["achievements"] == []
        body = event(api_client, value=5, attributes={"source": "web"})
        assert [a["id"] for a in body["achievements"]] == [created["id"]]
        assert body["achievements"][0]["eventAttributes"] == [{"key": "source", "value": "web"}]

    def test_a_non_matching_event_completes_nothing(self, api_client, admin, metric, source):
        admin.metric(metric, 10, eventAttributes=[ref(source, "web")])
        # The filtered total never reaches 10 through app events, however large.
        assert event(api_client, value=50, attributes={"source": "app"})["achievements"] == []
        assert not AchievementCompletion.objects.exists()

    def test_filtered_totals_are_per_user(self, api_client, admin, metric, source):
        admin.metric(metric, 10, eventAttributes=[ref(source, "web")])
        event(api_client, user="a", value=9, attributes={"source": "web"})
        assert (
            event(api_client, user="b", value=1, attributes={"source": "web"})["achievements"] == []
        )
        body = event(api_client, user="a", value=1, attributes={"source": "web"})
        assert names(body["achievements"]) == ["10 words"]

    def test_several_event_filters_must_all_match(self, api_client, admin, tenant, metric):
        source = AttributeFactory(tenant=tenant, key="source", type="event")
        lang = AttributeFactory(tenant=tenant, key="lang", type="event")
        bump(tenant)
        admin.metric(metric, 2, eventAttributes=[ref(source, "web"), ref(lang, "fr")])
        event(api_client, value=5, attributes={"source": "web", "lang": "en"})
        event(api_client, value=5, attributes={"source": "web"})
        assert not AchievementCompletion.objects.exists()
        body = event(api_client, value=2, attributes={"source": "web", "lang": "fr"})
        assert names(body["achievements"]) == ["2 words"]


# --- streak trigger ------------------------------------------------------------------------


class TestStreakTrigger:
    def test_completes_when_the_streak_reaches_the_length(self, api_client, admin, metric):
        configure_streaks(api_client)
        created = admin.streak(2, name="Two days")
        with time_machine.travel(at("2026-03-10"), tick=False):
            body = event(api_client)
            assert body["currentStreak"]["length"] == 1
            assert body["achievements"] == []
        with time_machine.travel(at("2026-03-11"), tick=False):
            body = event(api_client)
        assert body["currentStreak"]["length"] == 2
        assert body["achievements"] == [
            {
                "id": created["id"],
                "name": "Two days",
                "trigger": "streak",
                "description": None,
                "badgeUrl": None,
                "userAttributes": [],
                "streakLength": 2,
                "achievedAt": "2026-03-11T12:00:00Z",
            }
        ]
        with time_machine.travel(at("2026-03-12"), tick=False):
            assert event(api_client)["achievements"] == []

    def test_not_completed_by_events_that_do_not_reach_it(self, api_client, admin, metric):
        configure_streaks(api_client)
        admin.streak(3)
        for day in ("2026-03-10", "2026-03-11", "2026-03-13", "2026-03-14"):
            with time_machine.travel(at(day), tick=False):
                assert event(api_client)["achievements"] == []
        with time_machine.travel(at("2026-03-15"), tick=False):
            assert names(event(api_client)["achievements"]) == ["streak 3"]


# --- api trigger ---------------------------------------------------------------------------


class TestApiCompletion:
    @time_machine.travel(at("2026-03-10"), tick=False)
    def test_first_completion_is_201_and_a_second_returns_the_first(self, api_client, admin):
        created = admin.api("onboarded", name="Onboarded", badge={"url": "https://x.test/b.png"})
        first = complete(api_client, "onboarded", status=201)
        row = AchievementCompletion.objects.get()
        assert first == {
            "completionId": str(row.public_id),
            "achievement": {
                "id": created["id"],
                "name": "Onboarded",
                "trigger": "api",
                "description": None,
                "badgeUrl": "https://x.test/b.png",
                "userAttributes": [],
                "key": "onboarded",
                "achievedAt": "2026-03-10T12:00:00Z",
            },
            "points": {},
        }
        assert row.backdated is False
        with time_machine.travel(at("2026-03-11"), tick=False):
            second = complete(api_client, "onboarded", status=200)
        assert second["completionId"] == first["completionId"]
        assert second["achievement"]["achievedAt"] == "2026-03-10T12:00:00Z"
        assert AchievementCompletion.objects.count() == 1

    def test_creates_the_user_inline_and_updates_fields(self, api_client, admin):
        admin.api("onboarded")
        complete(api_client, "onboarded", user="new", name="Ada")
        assert EndUser.objects.get(external_id="new").name == "Ada"

    def test_unknown_key_is_404(self, api_client, admin):
        admin.api("onboarded")
        response = api_client.post("/v1/achievements/nope/complete", {"user": {"id": "u1"}})
        assert response.status_code == 404
        assert "error" in response.json()
        assert not EndUser.objects.filter(external_id="u1").exists()

    def test_inactive_is_404(self, api_client, admin):
        admin.api("onboarded", status="inactive")
        complete(api_client, "onboarded", status=404)
        assert not AchievementCompletion.objects.exists()

    def test_locked_is_422_for_new_completions(self, api_client, admin):
        created = admin.api("onboarded")
        first = complete(api_client, "onboarded", user="early")
        admin.update(created["id"], status="locked")
        response = complete(api_client, "onboarded", user="late", status=422)
        assert "error" in response
        # A user who already has it gets the first completion back.
        again = complete(api_client, "onboarded", user="early", status=200)
        assert again["completionId"] == first["completionId"]
        assert completions() == [("early", "onboarded", False)]

    def test_user_attribute_filters_apply(self, api_client, admin, plan):
        admin.api("pro-only", userAttributes=[ref(plan, "pro")])
        complete(api_client, "pro-only", user="free", attributes={"plan": "free"}, status=422)
        complete(api_client, "pro-only", user="nobody", status=422)
        body = complete(api_client, "pro-only", user="pro", attributes={"plan": "pro"})
        assert body["achievement"]["userAttributes"] == [{"key": "plan", "value": "pro"}]
        assert completions() == [("pro", "pro-only", False)]

    def test_only_api_achievements_complete_by_key(self, api_client, admin, metric):
        admin.metric(metric, 10)
        # A metric achievement has no key; nothing named "10 words" is completable.
        complete(api_client, "10%20words", status=404)

    def test_api_achievements_do_not_complete_through_events(self, api_client, admin, metric):
        admin.api("onboarded")
        assert event(api_client, value=100)["achievements"] == []

    def test_body_is_validated(self, api_client, admin):
        admin.api("onboarded")
        assert api_client.post("/v1/achievements/onboarded/complete", {}).status_code == 422
        response = api_client.post(
            "/v1/achievements/onboarded/complete", {"user": {"id": "u1", "tz": "Nowhere/City"}}
        )
        assert response.status_code == 422
        assert not AchievementCompletion.objects.exists()

    def test_application_key_completes_only_for_its_user(self, org, anon_client, admin):
        admin.api("onboarded")
        anon_client.credentials(HTTP_X_API_KEY=org.application_key("me"))
        complete(anon_client, "onboarded", user="me", status=201)
        complete(anon_client, "onboarded", user="other", status=403)
        assert completions() == [("me", "onboarded", False)]


# --- composite trigger ---------------------------------------------------------------------


class TestComposite:
    def test_completes_in_the_same_event_as_the_last_prerequisite(self, api_client, admin, metric):
        words = admin.metric(metric, 5)
        onboarded = admin.api("onboarded")
        both = admin.composite(words, onboarded, name="Both")
        complete(api_client, "onboarded")
        body = event(api_client, value=5)
        assert names(body["achievements"]) == ["5 words", "Both"]
        composite = body["achievements"][1]
        assert composite["trigger"] == "achievement"
        assert composite["id"] == both["id"]
        assert sorted(composite["achievementIds"]) == sorted([words["id"], onboarded["id"]])
        assert composite["achievedAt"] == body["achievements"][0]["achievedAt"]
        assert completions() == [
            ("u1", "5 words", False),
            ("u1", "Both", False),
            ("u1", "onboarded", False),
        ]

    def test_not_completed_while_a_prerequisite_is_missing(self, api_client, admin, metric):
        words = admin.metric(metric, 5)
        onboarded = admin.api("onboarded")
        admin.composite(words, onboarded)
        assert names(event(api_client, value=5)["achievements"]) == ["5 words"]
        assert "composite" not in user_achievements(api_client)

    def test_completes_with_an_api_completion(self, api_client, admin, metric):
        words = admin.metric(metric, 5)
        onboarded = admin.api("onboarded")
        admin.composite(words, onboarded, name="Both")
        event(api_client, value=5)
        complete(api_client, "onboarded")
        assert set(user_achievements(api_client)) == {"5 words", "onboarded", "Both"}

    def test_chains_complete_in_one_step(self, api_client, admin, metric):
        five = admin.metric(metric, 5)
        ten = admin.metric(metric, 10)
        onboarded = admin.api("onboarded")
        first = admin.composite(five, name="Level 1")
        second = admin.composite(first, ten, name="Level 2")
        admin.composite(second, onboarded, name="Level 3")
        complete(api_client, "onboarded")
        body = event(api_client, value=10)
        assert names(body["achievements"]) == [
            "5 words",
            "10 words",
            "Level 1",
            "Level 2",
            "Level 3",
        ]
        assert len({a["achievedAt"] for a in body["achievements"]}) == 1

    def test_with_a_streak_prerequisite(self, api_client, admin, metric):
        configure_streaks(api_client)
        streak = admin.streak(2)
        words = admin.metric(metric, 1)
        admin.composite(streak, words, name="Both")
        with time_machine.travel(at("2026-03-10"), tick=False):
            assert names(event(api_client)["achievements"]) == ["1 words"]
        with time_machine.travel(at("2026-03-11"), tick=False):
            assert names(event(api_client)["achievements"]) == ["streak 2", "Both"]

    def test_inactive_or_locked_composites_do_not_complete(self, api_client, admin, metric):
        words = admin.metric(metric, 5)
        admin.composite(words, name="Inactive", status="inactive")
        admin.composite(words, name="Locked", status="locked")
        assert names(event(api_client, value=5)["achievements"]) == ["5 words"]

    def test_user_attribute_filters_apply(self, api_client, admin, metric, plan):
        words = admin.metric(metric, 5)
        admin.composite(words, name="Pro", userAttributes=[ref(plan, "pro")])
        body = event(api_client, user="free", value=5, user_attributes={"plan": "free"})
        assert names(body["achievements"]) == ["5 words"]
        body = event(api_client, user="pro", value=5, user_attributes={"plan": "pro"})
        assert names(body["achievements"]) == ["5 words", "Pro"]

    def test_a_user_who_starts_matching_completes_on_the_next_event(
        self, api_client, admin, metric, plan
    ):
        """As for metric achievements: the prerequisites were all completed while the user
        did not match; once they match, the next event completes the composite."""
        words = admin.metric(metric, 5)
        admin.composite(words, name="Pro", userAttributes=[ref(plan, "pro")])
        event(api_client, value=5, user_attributes={"plan": "free"})
        body = event(api_client, value=1, user_attributes={"plan": "pro"})
        assert names(body["achievements"]) == ["Pro"]


# --- anniversary trigger -------------------------------------------------------------------


def identify(client: Any, user: str, when: dt.datetime, **fields: Any) -> None:
    with time_machine.travel(when, tick=False):
        response = client.put(f"/v1/users/{user}", fields)
    assert response.status_code == 200, response.content


class TestAnniversary:
    def test_job_completes_on_the_anniversary(self, api_client, admin):
        identify(api_client, "u1", at("2025-06-01"), signUpDate="2025-03-10")
        identify(api_client, "late", at("2025-06-01"), signUpDate="2025-03-11")
        identify(api_client, "none", at("2025-06-01"))
        with time_machine.travel(at("2025-06-01"), tick=False):
            admin.anniversary(1, name="One year")
        assert achievements_anniversaries(at("2026-03-09", 23, 59)) == []
        done = achievements_anniversaries(at("2026-03-10", 0, 1))
        assert [c.definition.name for c in done] == ["One year"]
        assert completions() == [("u1", "One year", False)]
        assert user_achievements(api_client)["One year"]["achievedAt"] == "2026-03-10T00:01:00Z"
        # Idempotent: a repeated run completes nothing twice.
        assert achievements_anniversaries(at("2026-03-10", 1)) == []
        # A late run completes everyone it missed.
        achievements_anniversaries(at("2026-04-01"))
        assert completions() == [("late", "One year", False), ("u1", "One year", False)]

    def test_uses_the_users_local_date(self, api_client, admin):
        identify(
            api_client,
            "kiritimati",
            at("2025-06-01"),
            signUpDate="2025-03-10",
            tz="Pacific/Kiritimati",
        )
        identify(
            api_client, "la", at("2025-06-01"), signUpDate="2025-03-10", tz="America/Los_Angeles"
        )
        with time_machine.travel(at("2025-06-01"), tick=False):
            admin.anniversary(1)
        # 11:00 UTC on the 9th is already 01:00 on the 10th in Kiritimati (UTC+14).
        achievements_anniversaries(at("2026-03-09", 11))
        assert completions() == [("kiritimati", "1 years", False)]
        # 05:00 UTC on the 10th is still the 9th in Los Angeles.
        achievements_anniversaries(at("2026-03-10", 5))
        assert completions() == [("kiritimati", "1 years", False)]
        achievements_anniversaries(at("2026-03-10", 8))
        assert completions(user="la") == [("la", "1 years", False)]

    def test_29_february_sign_up_completes_on_28_february(self, api_client, admin):
        identify(api_client, "leap", at("2024-06-01"), signUpDate="2024-02-29")
        with time_machine.travel(at("2024-06-01"), tick=False):
            admin.anniversary(1)
        achievements_anniversaries(at("2025-02-27", 23))
        assert completions() == []
        achievements_anniversaries(at("2025-02-28", 1))
        assert completions() == [("leap", "1 years", False)]

    def test_several_years_and_statuses(self, api_client, admin):
        identify(api_client, "u1", at("2025-06-01"), signUpDate="2023-03-10")
        with time_machine.travel(at("2025-06-01"), tick=False):
            # Two full years already passed when it is created: backdated at once.
            admin.anniversary(2, name="Two")
            admin.anniversary(3, name="Three")
            admin.anniversary(3, name="Three inactive", status="inactive")
            admin.anniversary(3, name="Three locked", status="locked")
        assert completions() == [("u1", "Two", True)]
        achievements_anniversaries(at("2026-03-10"))
        assert completions() == [("u1", "Three", False), ("u1", "Two", True)]

    def test_user_attribute_filters_apply(self, api_client, admin, plan):
        identify(
            api_client, "pro", at("2025-06-01"), signUpDate="2025-03-10", attributes={"plan": "pro"}
        )
        identify(
            api_client,
            "free",
            at("2025-06-01"),
            signUpDate="2025-03-10",
            attributes={"plan": "free"},
        )
        with time_machine.travel(at("2025-06-01"), tick=False):
            admin.anniversary(1, userAttributes=[ref(plan, "pro")])
        achievements_anniversaries(at("2026-03-10"))
        assert completions() == [("pro", "1 years", False)]

    def test_completes_a_composite_in_the_same_run(self, api_client, admin, metric):
        identify(api_client, "u1", at("2025-06-01"), signUpDate="2025-03-10")
        with time_machine.travel(at("2025-06-01"), tick=False):
            words = admin.metric(metric, 1)
            year = admin.anniversary(1)
            admin.composite(words, year, name="Loyal writer")
            event(api_client, value=1)
        done = achievements_anniversaries(at("2026-03-10"))
        assert [c.definition.name for c in done] == ["1 years", "Loyal writer"]

    def test_tenants_are_independent(self, api_client, other_tenant_client, admin, tenant):
        identify(api_client, "u1", at("2025-06-01"), signUpDate="2025-03-10")
        identify(other_tenant_client, "u1", at("2025-06-01"), signUpDate="2025-03-10")
        with time_machine.travel(at("2025-06-01"), tick=False):
            admin.anniversary(1)
        achievements_anniversaries(at("2026-03-10"))
        assert list(AchievementCompletion.objects.values_list("user__tenant", flat=True)) == [
            tenant.pk
        ]


# --- user-attribute filters ----------------------------------------------------------------


class TestUserAttributeFilters:
    def test_only_matching_users_complete(self, api_client, admin, metric, plan):
        admin.metric(metric, 5, userAttributes=[ref(plan, "pro")])
        assert (
            event(api_client, user="free", value=5, user_attributes={"plan": "free"})[
                "achievements"
            ]
            == []
        )
        assert event(api_client, user="none", value=5)["achievements"] == []
        body = event(api_client, user="pro", value=5, user_attributes={"plan": "pro"})
        assert names(body["achievements"]) == ["5 words"]
        assert body["achievements"][0]["userAttributes"] == [{"key": "plan", "value": "pro"}]

    def test_a_user_who_starts_matching_completes_on_the_next_event(
        self, api_client, admin, metric, plan
    ):
        admin.metric(metric, 5, userAttributes=[ref(plan, "pro")])
        event(api_client, value=10, user_attributes={"plan": "free"})
        body = event(api_client, value=1, user_attributes={"plan": "pro"})
        assert names(body["achievements"]) == ["5 words"]

    def test_list_filters_by_user_attributes(self, api_client, admin, metric, plan):
        admin.metric(metric, 5, name="Pro", userAttributes=[ref(plan, "pro")])
        admin.metric(metric, 6, name="Everyone")
        assert set(all_achievements(api_client)) == {"Pro", "Everyone"}
        assert set(all_achievements(api_client, userAttributes="plan:pro")) == {"Pro", "Everyone"}
        assert set(all_achievements(api_client, userAttributes="plan:free")) == {"Everyone"}
        listed = all_achievements(api_client, userAttributes="plan:pro")["Pro"]
        assert listed["userAttributes"] == [{"key": "plan", "value": "pro"}]

    def test_malformed_user_attributes_query_is_422(self, api_client, admin, metric):
        admin.metric(metric, 5)
        assert api_client.get("/v1/achievements", {"userAttributes": "plan"}).status_code == 422

    def test_include_incomplete_lists_only_what_the_user_can_complete(
        self, api_client, admin, metric, plan
    ):
        admin.metric(metric, 5, name="Pro", userAttributes=[ref(plan, "pro")])
        admin.metric(metric, 6, name="Everyone")
        event(api_client, user="free", value=1, user_attributes={"plan": "free"})
        listed = user_achievements(api_client, user="free", includeIncomplete="true")
        assert set(listed) == {"Everyone"}

    def test_filter_on_a_deleted_attribute_matches_nobody(self, api_client, admin, metric, plan):
        admin.metric(metric, 5, userAttributes=[ref(plan, "pro")])
        event(api_client, value=1, user_attributes={"plan": "pro"})
        response = api_client.delete(f"/admin/v1/attributes?ids={plan.public_id}")
        assert response.status_code == 200, response.content
        assert event(api_client, value=10)["achievements"] == []


# --- statuses ------------------------------------------------------------------------------


class TestStatuses:
    def test_created_inactive_by_default_and_invisible(self, api_client, admin, metric):
        created = admin.create(
            name="Hidden", trigger="metric", metricId=str(metric.public_id), metricValue=5
        )
        assert created["status"] == "inactive"
        assert event(api_client, value=10)["achievements"] == []
        assert all_achievements(api_client) == {}
        assert user_achievements(api_client, includeIncomplete="true") == {}
        assert api_client.get("/v1/users/u1/metrics/words").json()["achievements"] == []
        assert not AchievementCompletion.objects.exists()

    def test_locked_accepts_no_new_completions(self, api_client, admin, metric):
        created = admin.metric(metric, 5, name="Five")
        event(api_client, user="early", value=5)
        admin.update(created["id"], status="locked")
        assert event(api_client, user="late", value=10)["achievements"] == []
        assert completions() == [("early", "Five", False)]

    def test_locked_is_listed_only_for_users_who_have_it(self, api_client, admin, metric):
        created = admin.metric(metric, 5, name="Five")
        event(api_client, user="early", value=5)
        event(api_client, user="late", value=1)
        admin.update(created["id"], status="locked")
        assert "Five" in user_achievements(api_client, user="early")
        assert "Five" in user_achievements(api_client, user="early", includeIncomplete="true")
        assert user_achievements(api_client, user="late", includeIncomplete="true") == {}
        early = api_client.get("/v1/users/early/metrics/words").json()["achievements"]
        assert names(early) == ["Five"]
        assert api_client.get("/v1/users/late/metrics/words").json()["achievements"] == []
        # The catalogue lists only achievements that can still be completed.
        assert all_achievements(api_client) == {}

    def test_deactivating_hides_it_even_from_users_who_have_it(self, api_client, admin, metric):
        created = admin.metric(metric, 5, name="Five")
        event(api_client, value=5)
        admin.update(created["id"], status="inactive")
        assert user_achievements(api_client) == {}
        assert api_client.get("/v1/users/u1/metrics").json()[0]["achievements"] == []
        # The completion itself is kept: reactivating shows it again, with its date.
        achieved = AchievementCompletion.objects.get().completed_at
        admin.update(created["id"], status="active")
        assert user_achievements(api_client)["Five"]["achievedAt"] is not None
        assert AchievementCompletion.objects.get().completed_at == achieved

    def test_every_transition(self, api_client, admin, metric):
        created = admin.metric(metric, 5, name="Five", status="inactive")
        event(api_client, user="a", value=5)
        for status, expected_listed in [
            ("locked", set()),
            ("active", {"Five"}),
            ("inactive", set()),
            ("active", {"Five"}),
            ("locked", set()),
            ("inactive", set()),
            ("locked", set()),
        ]:
            assert admin.update(created["id"], status=status)["status"] == status
            assert set(all_achievements(api_client)) == expected_listed, status
            assert api_client.get(f"{ADMIN}/{created['id']}").json()["status"] == status

    def test_reactivating_a_locked_one_backdates_users_who_qualified(
        self, api_client, admin, metric
    ):
        created = admin.metric(metric, 5, name="Five")
        event(api_client, user="early", value=5)
        admin.update(created["id"], status="locked")
        event(api_client, user="late", value=5)
        admin.update(created["id"], status="active")
        assert completions() == [("early", "Five", False), ("late", "Five", True)]


# --- backdating ----------------------------------------------------------------------------


class TestBackdating:
    def test_activation_completes_qualifying_users_silently(self, api_client, admin, metric):
        event(api_client, user="a", value=10)
        event(api_client, user="b", value=3)
        created = admin.metric(metric, 5, name="Five", status="inactive")
        assert completions() == []
        with time_machine.travel(at("2026-03-10"), tick=False):
            admin.update(created["id"], status="active")
        assert completions() == [("a", "Five", True)]
        listed = user_achievements(api_client, user="a")["Five"]
        assert listed["achievedAt"] == "2026-03-10T12:00:00Z"
        # Backdated completions are never reported by a later event.
        assert event(api_client, user="a", value=1)["achievements"] == []
        assert names(event(api_client, user="b", value=2)["achievements"]) == ["Five"]
        assert completions() == [("a", "Five", True), ("b", "Five", False)]

    def test_backdating_lost_to_a_broker_outage_is_sent_again_by_the_outbox(
        self, api_client, admin, metric, monkeypatch, django_capture_on_commit_callbacks
    ):
        """The activation is saved (no 500 for the SDK to retry into a duplicate); the
        backdating request is recorded with it and sent again once the broker is back."""
        from kombu.exceptions import OperationalError

        from apps.core.models import OutboxTask
        from apps.core.outbox import outbox_sweep
        from apps.core.tasks import outbox_run_task

        for user in ("a", "b", "c"):
            event(api_client, user=user, value=10)
        created = admin.metric(metric, 5, name="Five", status="inactive")

        def broker_down(*args, **kwargs):
            raise OperationalError("Connection refused")

        with monkeypatch.context() as patch:
            patch.setattr(outbox_run_task, "apply_async", broker_down)
            with time_machine.travel(at("2026-03-10"), tick=False):
                response = admin.update(created["id"], status="active")
        assert response["status"] == "active"
        assert completions() == []
        assert OutboxTask.objects.get().task == "apps.achievements.tasks.achievement_backdate_task"

        with django_capture_on_commit_callbacks(execute=True):
            assert outbox_sweep(at("2026-03-10", 12, 0)) == 0  # the send may still arrive
            assert outbox_sweep(at("2026-03-10", 12, 5)) == 1
        assert completions() == [("a", "Five", True), ("b", "Five", True), ("c", "Five", True)]
        assert not OutboxTask.objects.exists()
        with django_capture_on_commit_callbacks(execute=True):
            assert outbox_sweep(at("2026-03-11")) == 0

    def test_creating_an_active_one_backdates(self, api_client, admin, metric):
        event(api_client, user="a", value=10)
        admin.metric(metric, 5, name="Five")
        assert completions() == [("a", "Five", True)]

    def test_lowering_the_value_of_an_active_one(self, api_client, admin, metric):
        event(api_client, user="a", value=10)
        event(api_client, user="b", value=3)
        created = admin.metric(metric, 20, name="Goal")
        assert completions() == []
        admin.update(created["id"], metricValue=3)
        assert completions() == [("a", "Goal", True), ("b", "Goal", True)]

    def test_editing_an_inactive_one_does_not_backdate(self, api_client, admin, metric):
        event(api_client, user="a", value=10)
        created = admin.metric(metric, 20, name="Goal", status="inactive")
        admin.update(created["id"], metricValue=3)
        assert completions() == []

    def test_respects_user_attribute_filters(self, api_client, admin, metric, plan):
        event(api_client, user="pro", value=10, user_attributes={"plan": "pro"})
        event(api_client, user="free", value=10, user_attributes={"plan": "free"})
        created = admin.metric(metric, 5, name="Five", userAttributes=[ref(plan, "pro")])
        assert completions() == [("pro", "Five", True)]
        # Widening the filter on the live achievement backdates the newly eligible users.
        admin.update(created["id"], userAttributes=None)
        assert completions() == [("free", "Five", True), ("pro", "Five", True)]

    def test_respects_event_attribute_filters(self, api_client, admin, metric, source):
        event(api_client, user="web", value=6, attributes={"source": "web"})
        event(api_client, user="mixed", value=3, attributes={"source": "web"})
        event(api_client, user="mixed", value=30, attributes={"source": "app"})
        event(api_client, user="plain", value=30)
        admin.metric(metric, 5, name="Web", eventAttributes=[ref(source, "web")])
        assert completions() == [("web", "Web", True)]

    def test_streak(self, api_client, admin, metric):
        configure_streaks(api_client)
        for day in ("2026-03-10", "2026-03-11", "2026-03-12"):
            with time_machine.travel(at(day), tick=False):
                event(api_client, user="long")
        with time_machine.travel(at("2026-03-12"), tick=False):
            event(api_client, user="short")
            created = admin.streak(3, name="Three", status="inactive")
            admin.streak(2, name="Two")
            admin.update(created["id"], status="active")
        assert completions() == [("long", "Three", True), ("long", "Two", True)]

    def test_streak_counts_periods_of_the_current_frequency_only(self, api_client, admin, metric):
        configure_streaks(api_client)
        for day in ("2026-03-02", "2026-03-03", "2026-03-04"):
            with time_machine.travel(at(day), tick=False):
                event(api_client, user="daily")
        response = api_client.patch("/admin/v1/streaks/settings", {"frequency": "weekly"})
        assert response.status_code == 200, response.content
        # Three weeks in a row (Sunday to Saturday weeks).
        for day in ("2026-03-02", "2026-03-09", "2026-03-16"):
            with time_machine.travel(at(day), tick=False):
                event(api_client, user="weekly")
        with time_machine.travel(at("2026-03-17"), tick=False):
            assert api_client.get("/v1/users/weekly/streak").json()["length"] == 3
            assert api_client.get("/v1/users/daily/streak").json()["length"] == 0
            # streakLength now counts weeks: three days in a row are not three weeks.
            admin.streak(3, name="Three weeks")
        assert completions() == [("weekly", "Three weeks", True)]

    def test_a_filter_on_a_deleted_event_attribute_matches_nobody(
        self, api_client, admin, metric, source
    ):
        created = admin.metric(metric, 50, name="Web", eventAttributes=[ref(source, "web")])
        event(api_client, value=3, attributes={"source": "web"})
        event(api_client, value=30)
        response = api_client.delete(f"/admin/v1/attributes?ids={source.public_id}")
        assert response.json()["deleted"] == [{"id": str(source.public_id)}]
        # The event pipeline completes nothing for it...
        assert event(api_client, value=30)["achievements"] == []
        # ...and neither does backdating after an edit: the filter is not simply dropped.
        admin.update(created["id"], metricValue=10)
        assert completions() == []

    def test_composite(self, api_client, admin, metric):
        words = admin.metric(metric, 5)
        onboarded = admin.api("onboarded")
        complete(api_client, "onboarded", user="both")
        event(api_client, user="both", value=5)
        event(api_client, user="words-only", value=5)
        created = admin.composite(words, onboarded, name="Both", status="inactive")
        admin.update(created["id"], status="active")
        assert completions(achievement__name="Both") == [("both", "Both", True)]
        # Dropping a prerequisite of the live composite completes it for more users.
        admin.update(created["id"], achievementIds=[words["id"]])
        assert completions(achievement__name="Both") == [
            ("both", "Both", True),
            ("words-only", "Both", True),
        ]

    def test_activating_a_prerequisite_backdates_its_composites(self, api_client, admin, metric):
        words = admin.metric(metric, 5, status="inactive")
        onboarded = admin.api("onboarded")
        admin.composite(words, onboarded, name="Both")
        complete(api_client, "onboarded")
        event(api_client, value=5)
        assert completions(achievement__name="Both") == []
        admin.update(words["id"], status="active")
        assert completions() == [
            ("u1", "5 words", True),
            ("u1", "Both", True),
            ("u1", "onboarded", False),
        ]

    def test_anniversary(self, api_client, admin):
        identify(api_client, "old", at("2026-03-01"), signUpDate="2024-01-15")
        identify(api_client, "recent", at("2026-03-01"), signUpDate="2025-09-01")
        identify(api_client, "none", at("2026-03-01"))
        with time_machine.travel(at("2026-03-01"), tick=False):
            created = admin.anniversary(1, name="One", status="inactive")
            admin.update(created["id"], status="active")
        assert completions() == [("old", "One", True)]

    def test_anniversary_uses_local_date(self, api_client, admin):
        # At 11:00 UTC on 9 March it is already 10 March in Kiritimati, not in Los Angeles.
        identify(
            api_client, "east", at("2026-03-01"), signUpDate="2025-03-10", tz="Pacific/Kiritimati"
        )
        identify(
            api_client, "west", at("2026-03-01"), signUpDate="2025-03-10", tz="America/Los_Angeles"
        )
        with time_machine.travel(at("2026-03-09", 11), tick=False):
            admin.anniversary(1, name="One")
        assert completions() == [("east", "One", True)]

    def test_runs_in_batches(self, api_client, admin, metric, monkeypatch):
        monkeypatch.setattr(services.backdating, "BACKDATE_BATCH", 2)
        for i in range(7):
            event(api_client, user=f"u{i}", value=i)
        admin.metric(metric, 2, name="Two")
        assert [c[0] for c in completions()] == ["u2", "u3", "u4", "u5", "u6"]
        assert all(c[2] for c in completions())

    def test_does_not_touch_other_tenants(
        self, api_client, other_tenant_client, admin, metric, other_tenant
    ):
        MetricFactory(tenant=other_tenant, key="words")
        bump(other_tenant)
        event(other_tenant_client, user="u1", value=100)
        event(api_client, user="u2", value=100)
        admin.metric(metric, 5, name="Five")
        assert completions() == [("u2", "Five", True)]

    def test_rerunning_creates_nothing_twice(self, api_client, admin, metric):
        event(api_client, user="a", value=10)
        created = admin.metric(metric, 5)
        achievement = Achievement.objects.get(public_id=created["id"])
        assert services.achievement_backdate(achievement.pk) == 0
        assert AchievementCompletion.objects.count() == 1


# --- reads: rarity, user achievements, user metrics ----------------------------------------


class TestReads:
    def test_rarity_and_completions(
        self, api_client, admin, metric, other_tenant_client, other_tenant
    ):
        common = admin.metric(metric, 1, name="Common")
        admin.metric(metric, 10, name="Rare")
        admin.metric(metric, 1000, name="Nobody")
        event(api_client, user="a", value=1)
        event(api_client, user="b", value=1)
        event(api_client, user="c", value=10)
        identify(api_client, "d", at("2026-01-01"))
        # Users of another tenant do not count.
        MetricFactory(tenant=other_tenant, key="words")
        bump(other_tenant)
        event(other_tenant_client, user="x", value=1)
        listed = all_achievements(api_client)
        stats = {name: (a["completions"], a["rarity"]) for name, a in listed.items()}
        assert stats == {"Common": (3, 75.0), "Rare": (1, 25.0), "Nobody": (0, 0.0)}
        assert listed["Common"]["id"] == common["id"]
        assert "achievedAt" not in listed["Common"]
        mine = user_achievements(api_client, user="c", includeIncomplete="true")
        assert {n: (a["completions"], a["rarity"]) for n, a in mine.items()} == stats

    def test_rarity_rounds_to_two_decimals(self, api_client, admin, metric):
        admin.metric(metric, 5, name="Five")
        event(api_client, user="a", value=5)
        event(api_client, user="b", value=1)
        event(api_client, user="c", value=1)
        assert all_achievements(api_client)["Five"]["rarity"] == 33.33

    def test_catalogue_shapes_per_trigger(self, api_client, admin, metric, plan):
        configure_streaks(api_client)
        words = admin.metric(metric, 5, name="M")
        admin.api("k", name="A")
        admin.streak(3, name="S")
        admin.anniversary(2, name="Y")
        admin.composite(words, name="C")
        listed = all_achievements(api_client)
        common = {"id", "name", "trigger", "description", "badgeUrl", "userAttributes"}
        stats = {"completions", "rarity"}
        assert set(listed["M"]) == common | stats | {
            "metricId",
            "metricName",
            "metricValue",
            "eventAttributes",
        }
        assert set(listed["A"]) == common | stats | {"key"}
        assert set(listed["S"]) == common | stats | {"streakLength"}
        assert set(listed["Y"]) == common | stats | {"anniversaryYears"}
        assert set(listed["C"]) == common | stats | {"achievementIds"}
        assert listed["C"]["achievementIds"] == [words["id"]]
        assert (listed["Y"]["anniversaryYears"], listed["S"]["streakLength"]) == (2, 3)

    def test_user_achievements_completed_only_unless_asked(self, api_client, admin, metric):
        admin.metric(metric, 5, name="Five")
        admin.metric(metric, 10, name="Ten")
        with time_machine.travel(at("2026-03-10"), tick=False):
            event(api_client, value=5)
        done = user_achievements(api_client)
        assert set(done) == {"Five"}
        assert done["Five"]["achievedAt"] == "2026-03-10T12:00:00Z"
        assert (done["Five"]["completions"], done["Five"]["rarity"]) == (1, 100.0)
        assert set(user_achievements(api_client, includeIncomplete="false")) == {"Five"}
        everything = user_achievements(api_client, includeIncomplete="true")
        assert set(everything) == {"Five", "Ten"}
        assert everything["Ten"]["achievedAt"] is None

    def test_user_achievements_errors(self, api_client, admin, metric):
        event(api_client)
        assert api_client.get("/v1/users/ghost/achievements").status_code == 404
        response = api_client.get("/v1/users/u1/achievements", {"includeIncomplete": "maybe"})
        assert response.status_code == 422

    def test_user_metrics_list_each_metrics_achievements(self, api_client, admin, tenant, metric):
        lessons = MetricFactory(tenant=tenant, key="lessons", name="Lessons")
        bump(tenant)
        five = admin.metric(metric, 5, name="Five")
        admin.metric(metric, 10, name="Ten")
        admin.metric(lessons, 1, name="First lesson")
        admin.api("other", name="Not a metric one")
        admin.metric(metric, 1, name="Inactive", status="inactive")
        with time_machine.travel(at("2026-03-10"), tick=False):
            event(api_client, value=7)
        response = api_client.get("/v1/users/u1/metrics")
        assert response.status_code == 200
        by_key = {m["key"]: m for m in response.json()}
        words = by_key["words"]
        assert words["current"] == 7
        assert [(a["name"], a["achievedAt"]) for a in words["achievements"]] == [
            ("Five", "2026-03-10T12:00:00Z"),
            ("Ten", None),
        ]
        assert words["achievements"][0] == {
            "id": five["id"],
            "name": "Five",
            "trigger": "metric",
            "description": None,
            "badgeUrl": None,
            "userAttributes": [],
            "metricId": str(metric.public_id),
            "metricName": "Words",
            "metricValue": 5,
            "eventAttributes": [],
            "achievedAt": "2026-03-10T12:00:00Z",
        }
        assert [(a["name"], a["achievedAt"]) for a in by_key["lessons"]["achievements"]] == [
            ("First lesson", None)
        ]
        single = api_client.get("/v1/users/u1/metrics/words").json()
        assert single == words

    def test_user_metrics_hide_achievements_the_user_cannot_complete(
        self, api_client, admin, metric, plan
    ):
        admin.metric(metric, 5, name="Pro", userAttributes=[ref(plan, "pro")])
        event(api_client, value=1, user_attributes={"plan": "free"})
        assert api_client.get("/v1/users/u1/metrics/words").json()["achievements"] == []


# --- replays and concurrency ---------------------------------------------------------------


class TestReplaysAndConcurrency:
    def test_an_idempotent_replay_never_completes_twice(self, api_client, admin, metric):
        admin.metric(metric, 5, name="Five")
        first = event(api_client, value=5, idempotency_key="k1")
        assert names(first["achievements"]) == ["Five"]
        replay = event(api_client, value=5, idempotency_key="k1", status=202)
        assert replay["idempotentReplayed"] is True
        assert replay["achievements"] == []
        assert AchievementCompletion.objects.count() == 1

    def test_a_replay_applies_no_user_fields_and_completes_nothing(
        self, api_client, admin, metric, plan
    ):
        admin.metric(metric, 5, name="Pro", userAttributes=[ref(plan, "pro")])
        event(api_client, value=10, user_attributes={"plan": "free"}, idempotency_key="k1")
        replay = event(
            api_client, value=10, user_attributes={"plan": "pro"}, idempotency_key="k1", status=202
        )
        assert replay["achievements"] == []
        assert not AchievementCompletion.objects.exists()

    def test_a_replay_after_activation_completes_nothing_new(self, api_client, admin, metric):
        created = admin.metric(metric, 5, name="Five", status="inactive")
        event(api_client, value=5, idempotency_key="k1")
        admin.update(created["id"], status="active")  # backdated
        replay = event(api_client, value=5, idempotency_key="k1", status=202)
        assert replay["achievements"] == []
        assert completions() == [("u1", "Five", True)]

    def test_admin_batch_events_complete_once(
        self, api_client, admin, metric, django_capture_on_commit_callbacks
    ):
        admin.metric(metric, 5, name="Five")
        item = {"key": "words", "user": {"id": "u1"}, "value": 5, "idempotencyKey": "b1"}
        for _ in range(2):
            with django_capture_on_commit_callbacks(execute=True):
                response = api_client.post("/admin/v1/metrics/events", [item, item])
            assert response.status_code == 202, response.content
        assert completions() == [("u1", "Five", False)]
        assert api_client.get("/v1/users/u1/metrics/words").json()["current"] == 5

    def test_the_database_refuses_a_second_completion(self, api_client, admin, metric, tenant):
        admin.metric(metric, 5, name="Five")
        event(api_client, value=5)
        row = AchievementCompletion.objects.get()
        with pytest.raises(IntegrityError), transaction.atomic():
            AchievementCompletion.objects.create(
                tenant=tenant,
                achievement=row.achievement,
                user=row.user,
                completed_at=row.completed_at,
            )

    def test_a_completion_made_concurrently_is_not_reported_again(
        self, api_client, admin, metric, monkeypatch
    ):
        """The event reads no completions (as if a backdating job inserted one meanwhile):
        the insert hits the constraint and the achievement is not reported twice."""
        admin.metric(metric, 5, name="Five")
        admin.metric(metric, 6, name="Six")
        event(api_client, value=5)
        monkeypatch.setattr(services.completing, "completed_pks", lambda rows: set())
        body = event(api_client, value=1)
        assert names(body["achievements"]) == ["Six"]
        assert completions() == [("u1", "Five", False), ("u1", "Six", False)]

    def test_api_completion_racing_another_is_200_with_the_first(
        self, api_client, admin, monkeypatch
    ):
        admin.api("onboarded")
        first = complete(api_client, "onboarded")
        real_filter = AchievementCompletion.objects.filter

        class Stale:
            """The existence check misses the completion (it was committed meanwhile)."""

            def first(self):
                return None

        calls = []

        def filter_once(*args, **kwargs):
            if not calls:
                calls.append(1)
                return Stale()
            return real_filter(*args, **kwargs)

        monkeypatch.setattr(AchievementCompletion.objects, "filter", filter_once)
        again = complete(api_client, "onboarded", status=200)
        assert again["completionId"] == first["completionId"]
        assert AchievementCompletion.objects.count() == 1


# --- admin API -----------------------------------------------------------------------------


class TestAdminShapes:
    def test_create_each_trigger(self, api_client, admin, metric, plan, source):
        api = admin.create(
            name="API",
            trigger="api",
            key="onboarded",
            description="d",
            badge={"url": "https://x.test/b.png"},
            userAttributes=[ref(plan, "pro")],
        )
        assert api == {
            "id": api["id"],
            "name": "API",
            "description": "d",
            "trigger": "api",
            "status": "inactive",
            "badge": {"url": "https://x.test/b.png"},
            "userAttributes": [ref(plan, "pro")],
            "key": "onboarded",
        }
        m = admin.create(
            name="M",
            trigger="metric",
            metricId=str(metric.public_id),
            metricValue=10,
            eventAttributes=[ref(source, "web")],
            status="active",
        )
        assert m == {
            "id": m["id"],
            "name": "M",
            "description": None,
            "trigger": "metric",
            "status": "active",
            "badge": None,
            "userAttributes": [],
            "metricId": str(metric.public_id),
            "metricValue": 10,
            "eventAttributes": [ref(source, "web")],
        }
        s = admin.create(name="S", trigger="streak", streakLength=7)
        assert (s["streakLength"], "key" not in s, "metricId" not in s) == (7, True, True)
        y = admin.create(name="Y", trigger="anniversary", anniversaryYears=1)
        assert y["anniversaryYears"] == 1
        c = admin.create(name="C", trigger="achievement", achievementIds=[api["id"], m["id"]])
        assert sorted(c["achievementIds"]) == sorted([api["id"], m["id"]])
        assert set(c) == {
            "id",
            "name",
            "description",
            "trigger",
            "status",
            "badge",
            "userAttributes",
            "achievementIds",
        }

    def test_list_and_get(self, api_client, admin, metric):
        first = admin.api("a")
        second = admin.api("b")
        listed = api_client.get(ADMIN).json()
        assert [a["id"] for a in listed] == [first["id"], second["id"]]
        assert [a["id"] for a in api_client.get(ADMIN, {"limit": 1, "skip": 1}).json()] == [
            second["id"]
        ]
        assert api_client.get(f"{ADMIN}/{first['id']}").json() == first
        assert api_client.get(f"{ADMIN}/00000000-0000-0000-0000-000000000000").status_code == 404
        assert api_client.get(f"{ADMIN}/not-a-uuid").status_code == 404

    def test_partial_success(self, admin, metric):
        response = admin.post(
            [
                {"name": "ok", "trigger": "api", "key": "ok"},
                {"name": "bad", "trigger": "api"},
            ]
        )
        assert response.status_code == 201
        body = response.json()
        assert [a["name"] for a in body["created"]] == ["ok"]
        assert [(i["index"], i["severity"]) for i in body["issues"]] == [(1, "error")]
        assert Achievement.objects.count() == 1

    def test_update_fields_and_null_clears(self, admin, plan):
        created = admin.api(
            "k",
            description="d",
            badge={"url": "https://x.test/b.png"},
            userAttributes=[ref(plan, "pro")],
        )
        updated = admin.update(created["id"], description=None, badge=None, userAttributes=None)
        assert (updated["description"], updated["badge"], updated["userAttributes"]) == (
            None,
            None,
            [],
        )
        renamed = admin.update(created["id"], name="Renamed", key="k2")
        assert (renamed["name"], renamed["key"]) == ("Renamed", "k2")

    def test_update_responses_show_the_new_values(self, admin, metric):
        a = admin.api("a")
        b = admin.api("b")
        composite = admin.composite(a, name="C")
        updated = admin.update(composite["id"], achievementIds=[b["id"], a["id"]])
        assert sorted(updated["achievementIds"]) == sorted([a["id"], b["id"]])
        assert sorted(api_get(admin, composite["id"])["achievementIds"]) == sorted(
            [a["id"], b["id"]]
        )
        words = admin.metric(metric, 5)
        assert admin.update(words["id"], metricValue=7.5)["metricValue"] == 7.5
        assert api_get(admin, words["id"])["metricValue"] == 7.5

    def test_changing_the_trigger_needs_the_new_fields_and_drops_the_old(self, admin, metric):
        created = admin.api("k", status="inactive")
        issue = admin.update_issue(created["id"], trigger="streak")
        assert "streakLength" in issue["message"]
        assert issue["id"] == created["id"]
        changed = admin.update(created["id"], trigger="streak", streakLength=3)
        assert changed["trigger"] == "streak"
        assert "key" not in changed
        assert Achievement.objects.get(public_id=created["id"]).key is None
        # The old key is free again.
        admin.api("k")

    def test_delete(self, api_client, admin, metric):
        created = admin.metric(metric, 1)
        event(api_client, value=1)
        # u1 completed it: the delete is confirmed (tests/achievements/test_guard_rails.py).
        assert admin.delete(created["id"])["deleted"] == []
        assert AchievementCompletion.objects.exists()
        body = admin.delete(created["id"], query=f"&confirm={created['id']}")
        assert body == {"deleted": [{"id": created["id"]}], "issues": []}
        assert not Achievement.objects.exists()
        assert not AchievementCompletion.objects.exists()
        assert event(api_client, value=1)["achievements"] == []

    def test_delete_unknown_and_invalid_ids_are_issues(self, admin):
        body = admin.delete("00000000-0000-0000-0000-000000000000", "nope")
        assert body["deleted"] == []
        assert [(i["id"], i["severity"]) for i in body["issues"]] == [
            ("00000000-0000-0000-0000-000000000000", "error"),
            ("nope", "error"),
        ]

    def test_deleting_a_prerequisite_is_refused(self, admin):
        a = admin.api("a")
        b = admin.api("b")
        composite = admin.composite(a, b)
        body = admin.delete(a["id"])
        assert body["deleted"] == []
        assert [(i["id"], i["severity"]) for i in body["issues"]] == [(a["id"], "error")]
        assert Achievement.objects.filter(public_id=a["id"]).exists()
        # Deleting the composite first, in the same request, frees the prerequisite.
        body = admin.delete(composite["id"], a["id"])
        assert body == {"deleted": [{"id": composite["id"]}, {"id": a["id"]}], "issues": []}

    def test_deleting_a_metric_does_not_shrink_a_composite(self, api_client, admin, metric):
        """Deleting the metric cascades to its achievements; a composite that required one
        must not become completable without it."""
        words = admin.metric(metric, 5)
        onboarded = admin.api("onboarded")
        admin.composite(words, onboarded, name="Both")
        response = api_client.delete(f"/admin/v1/metrics?ids={metric.public_id}")
        assert response.status_code == 200, response.content
        complete(api_client, "onboarded")
        assert "Both" not in user_achievements(api_client)


class TestAdminValidation:
    @pytest.mark.parametrize(
        ("trigger", "missing"),
        [
            ("api", "key"),
            ("metric", "metricId"),
            ("metric", "metricValue"),
            ("streak", "streakLength"),
            ("anniversary", "anniversaryYears"),
            ("achievement", "achievementIds"),
        ],
    )
    def test_required_fields_per_trigger(self, admin, metric, trigger, missing):
        full = {
            "api": {"key": "k"},
            "metric": {"metricId": str(metric.public_id), "metricValue": 5},
            "streak": {"streakLength": 3},
            "anniversary": {"anniversaryYears": 1},
            "achievement": {"achievementIds": [admin.api("pre")["id"]]},
        }[trigger]
        item = {"name": "x", "trigger": trigger, **full}
        del item[missing]
        issue = admin.create_issue(**item)
        assert (issue["index"], issue["severity"]) == (0, "error")
        assert missing in issue["message"]

    @pytest.mark.parametrize(
        ("trigger", "own", "foreign"),
        [
            ("api", {"key": "k"}, {"streakLength": 3}),
            ("api", {"key": "k"}, {"metricValue": 5}),
            ("metric", {"metricValue": 5}, {"key": "k"}),
            ("metric", {"metricValue": 5}, {"anniversaryYears": 1}),
            ("streak", {"streakLength": 3}, {"eventAttributes": []}),
            ("anniversary", {"anniversaryYears": 1}, {"streakLength": 3}),
            ("achievement", {}, {"metricValue": 5}),
        ],
    )
    def test_trigger_specific_fields_only_on_their_trigger(
        self, admin, metric, trigger, own, foreign
    ):
        item: dict[str, Any] = {"name": "x", "trigger": trigger, **own, **foreign}
        if trigger == "metric":
            item["metricId"] = str(metric.public_id)
        if trigger == "achievement":
            item["achievementIds"] = [admin.api("pre")["id"]]
        issue = admin.create_issue(**item)
        assert next(iter(foreign)) in issue["message"]

    def test_a_setting_of_another_trigger_is_named_in_a_grammatical_sentence(self, admin, metric):
        metric_id = str(metric.public_id)
        one = admin.create_issue(
            name="x", trigger="metric", metricId=metric_id, metricValue=5, key="k"
        )
        assert one["message"] == "key only applies to api achievements"
        several = admin.create_issue(
            name="x", trigger="api", key="k", metricId=metric_id, metricValue=5
        )
        assert several["message"] == "metricId and metricValue only apply to metric achievements"
        missing = admin.create_issue(name="x", trigger="metric")
        assert missing["message"] == "metric achievements need metricId and metricValue"

    def test_trigger_specific_fields_on_update(self, admin, metric):
        created = admin.api("k")
        issue = admin.update_issue(created["id"], streakLength=3)
        assert "streakLength" in issue["message"]
        assert "streakLength" not in api_get(admin, created["id"])

    @pytest.mark.parametrize(
        "item",
        [
            {"trigger": "api", "key": "k"},  # no name
            {"name": "x", "key": "k"},  # no trigger
            {"name": "x", "trigger": "badge", "key": "k"},
            {"name": "x", "trigger": "api", "key": "has space"},
            {"name": "x", "trigger": "api", "key": "k", "status": "archived"},
            {"name": "x", "trigger": "api", "key": "k", "unknown": 1},
            {"name": "x", "trigger": "streak", "streakLength": 0},
            {"name": "x", "trigger": "streak", "streakLength": 1.5},
            {"name": "x", "trigger": "anniversary", "anniversaryYears": 0},
            {"name": "x", "trigger": "api", "key": "k", "badge": {"url": "not a url"}},
            {"name": "x", "trigger": "achievement", "achievementIds": ["not-a-uuid"]},
            {"name": "x", "trigger": "api", "key": "k", "userAttributes": [{"attributeId": "x"}]},
        ],
    )
    def test_invalid_items_are_issues(self, admin, item):
        issue = admin.create_issue(**item)
        assert (issue["index"], issue["severity"]) == (0, "error")
        assert issue["message"]
        assert not Achievement.objects.exists()

    def test_metric_value_at_least_one(self, admin, metric):
        issue = admin.create_issue(
            name="x", trigger="metric", metricId=str(metric.public_id), metricValue=0
        )
        assert "metricValue" in issue["message"]

    def test_unknown_metric(self, admin, metric, other_tenant):
        issue = admin.create_issue(
            name="x",
            trigger="metric",
            metricId="00000000-0000-0000-0000-000000000000",
            metricValue=5,
        )
        assert "metric" in issue["message"].lower()
        foreign = MetricFactory(tenant=other_tenant, key="words")
        bump(other_tenant)
        issue = admin.create_issue(
            name="x", trigger="metric", metricId=str(foreign.public_id), metricValue=5
        )
        assert "metric" in issue["message"].lower()

    def test_unknown_or_wrong_type_attributes(self, admin, metric, plan, source, other_tenant):
        base = {
            "name": "x",
            "trigger": "metric",
            "metricId": str(metric.public_id),
            "metricValue": 5,
        }
        unknown = {"attributeId": "00000000-0000-0000-0000-000000000000", "attributeValue": "v"}
        assert admin.create_issue(**base, userAttributes=[unknown])
        assert admin.create_issue(**base, eventAttributes=[unknown])
        # A user attribute is not an event attribute and vice versa.
        assert admin.create_issue(**base, userAttributes=[ref(source, "web")])
        assert admin.create_issue(**base, eventAttributes=[ref(plan, "pro")])
        foreign = AttributeFactory(tenant=other_tenant, key="plan", type="user")
        bump(other_tenant)
        assert admin.create_issue(**base, userAttributes=[ref(foreign, "pro")])
        assert not Achievement.objects.exists()

    def test_duplicate_keys(self, admin):
        admin.api("k")
        assert "Key" in admin.create_issue(name="again", trigger="api", key="k")["message"]
        response = admin.post(
            [
                {"name": "a", "trigger": "api", "key": "same"},
                {"name": "b", "trigger": "api", "key": "same"},
            ]
        )
        assert [a["name"] for a in response.json()["created"]] == ["a"]
        assert [i["index"] for i in response.json()["issues"]] == [1]

    def test_unknown_prerequisites(self, admin, other_admin):
        issue = admin.create_issue(
            name="c", trigger="achievement", achievementIds=["00000000-0000-0000-0000-000000000000"]
        )
        assert "achievementIds" in issue["message"]
        foreign = other_admin.api("theirs")
        issue = admin.create_issue(name="c", trigger="achievement", achievementIds=[foreign["id"]])
        assert "achievementIds" in issue["message"]

    def test_a_composite_needs_at_least_one_prerequisite(self, admin):
        issue = admin.create_issue(name="c", trigger="achievement", achievementIds=[])
        assert "achievementIds" in issue["message"]
        composite = admin.composite(admin.api("a"), name="C")
        issue = admin.update_issue(composite["id"], achievementIds=[])
        assert "achievementIds" in issue["message"]
        assert len(api_get(admin, composite["id"])["achievementIds"]) == 1

    def test_cycles_are_refused(self, admin):
        a = admin.api("a")
        c1 = admin.composite(a, name="C1")
        c2 = admin.composite(c1, name="C2")
        c3 = admin.composite(c2, name="C3")
        issue = admin.update_issue(c1["id"], achievementIds=[c3["id"]])
        assert "cycle" in issue["message"]
        assert api_get(admin, c1["id"])["achievementIds"] == [a["id"]]
        issue = admin.update_issue(c1["id"], achievementIds=[a["id"], c2["id"]])
        assert "cycle" in issue["message"]
        issue = admin.update_issue(c1["id"], achievementIds=[c1["id"]])
        assert "itself" in issue["message"]
        # Turning a prerequisite into a composite of its dependant is a cycle too.
        issue = admin.update_issue(a["id"], trigger="achievement", achievementIds=[c3["id"]])
        assert "cycle" in issue["message"]
        assert api_get(admin, a["id"])["trigger"] == "api"

    def test_unknown_ids_on_update(self, admin):
        response = admin.patch(
            [
                {"id": "00000000-0000-0000-0000-000000000000", "name": "x"},
                {"id": "nope", "name": "x"},
                {"name": "x"},
            ]
        )
        body = response.json()
        assert body["updated"] == []
        assert body["issues"][0]["message"] == "Achievement not found by ID"
        assert len(body["issues"]) == 3


def api_get(admin: Admin, achievement_id: str) -> dict[str, Any]:
    response = admin.client.get(f"{ADMIN}/{achievement_id}")
    assert response.status_code == 200, response.content
    return response.json()


# --- tenants -------------------------------------------------------------------------------


class TestTenantIsolation:
    def test_configuration_is_per_tenant(self, api_client, other_tenant_client, admin, other_admin):
        mine = admin.api("onboarded")
        assert other_tenant_client.get(ADMIN).json() == []
        assert other_tenant_client.get(f"{ADMIN}/{mine['id']}").status_code == 404
        assert other_admin.update_issue(mine["id"], name="stolen")["message"] == (
            "Achievement not found by ID"
        )
        body = other_admin.delete(mine["id"])
        assert body["deleted"] == []
        assert Achievement.objects.filter(public_id=mine["id"]).exists()
        assert all_achievements(other_tenant_client) == {}
        complete(other_tenant_client, "onboarded", status=404)
        # The same key is free in the other tenant.
        other_admin.api("onboarded")

    def test_completions_and_reads_are_per_tenant(
        self, api_client, other_tenant_client, admin, other_admin, metric, other_tenant
    ):
        MetricFactory(tenant=other_tenant, key="words", name="Words")
        bump(other_tenant)
        admin.metric(metric, 5, name="Mine")
        assert event(other_tenant_client, value=10)["achievements"] == []
        assert names(event(api_client, value=5)["achievements"]) == ["Mine"]
        assert user_achievements(other_tenant_client, includeIncomplete="true") == {}
        assert other_tenant_client.get("/v1/users/u1/metrics/words").json()["achievements"] == []
        assert all_achievements(api_client)["Mine"]["rarity"] == 100.0


# --- query count ---------------------------------------------------------------------------


def count_queries(client: Any, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    with CaptureQueriesContext(connection) as ctx:
        body = event(client, **kwargs)
    return len(ctx.captured_queries), body


def configure_many(admin: Admin, metric: Any, count: int, **metric_item: Any) -> None:
    """`count` achievements of every kind that the measured events do not complete."""
    anchor = admin.metric(metric, 10**9, name="anchor", **metric_item)
    kinds = [
        lambda i: admin.metric(metric, 10**6 + i, name=f"metric {i}", **metric_item),
        lambda i: admin.streak(1000 + i, name=f"streak {i}"),
        lambda i: admin.api(f"api-{i}"),
        lambda i: admin.anniversary(50 + i, name=f"anniversary {i}"),
        lambda i: admin.composite(anchor, name=f"composite {i}"),
    ]
    for i in range(count - 1):
        kinds[i % len(kinds)](i)


class TestQueryCount:
    """The event endpoint's cost does not grow with the number of achievements configured."""

    def test_bounded_and_independent_of_the_number_of_achievements(
        self, api_client, admin, tenant, metric
    ):
        configure_streaks(api_client)
        event(api_client, user="u0")
        without, _ = count_queries(api_client, user="u0")

        configure_many(admin, metric, 1)
        event(api_client, user="warm")  # fill the configuration snapshot
        one, _ = count_queries(api_client, user="u0")

        configure_many(admin, metric, 20)
        assert Achievement.objects.count() == 21
        event(api_client, user="warm")
        twenty, body = count_queries(api_client, user="u0")
        assert body["achievements"] == []
        assert twenty == one
        # Achievements add at most the read of the user's completions.
        assert one <= without + 1

    def test_completing_does_not_read_per_achievement(self, api_client, admin, tenant, metric):
        configure_many(admin, metric, 20)
        admin.metric(metric, 2, name="two")
        event(api_client, user="warm")
        event(api_client, user="u0")
        steady, _ = count_queries(api_client, user="u0", value=0)
        completing, body = count_queries(api_client, user="u0")
        assert names(body["achievements"]) == ["two"]
        # One completion: its insert, in a savepoint of its own.
        assert completing <= steady + 3

    def test_event_attribute_filters_do_not_add_a_query_per_achievement(
        self, api_client, admin, tenant, metric, source
    ):
        filters = [ref(source, "web")]
        web = {"attributes": {"source": "web"}}
        admin.metric(metric, 10**9, name="filtered 0", eventAttributes=filters)
        event(api_client, user="u0", **web)
        one, _ = count_queries(api_client, user="u0", **web)
        for i in range(1, 20):
            admin.metric(metric, 10**9 + i, name=f"filtered {i}", eventAttributes=filters)
        event(api_client, user="warm", **web)
        twenty, body = count_queries(api_client, user="u0", **web)
        assert body["achievements"] == []
        assert twenty == one
