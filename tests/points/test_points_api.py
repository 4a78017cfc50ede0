"""Points through the public and admin APIs: the admin collections (systems with nested levels,
boosts and triggers), every trigger kind, attribute filters, boosts by date window in the
user's time zone, caps, levels, negative points and blockIfOutOfPoints, the time job,
idempotent replays, the application read endpoints, tenant isolation and the event endpoint's
query count."""

import datetime as dt
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.metrics.models import MetricEvent, MetricTotal
from apps.points.jobs import points_time_triggers
from apps.points.models import PointsAward, PointsBoost, PointsLevel, PointsSystem, PointsTotal
from apps.users.models import EndUser
from tests.factories import AttributeFactory, MetricFactory, bump

ADMIN = "/admin/v1/points"
UTC = dt.UTC
NO_SUCH_ID = "00000000-0000-4000-8000-000000000000"


def at(day: str, hour: int = 12, minute: int = 0) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(hour=hour, minute=minute, tzinfo=UTC)


def ref(attribute: Any, value: str) -> dict[str, str]:
    return {"attributeId": str(attribute.public_id), "attributeValue": value}


# --- admin helper --------------------------------------------------------------------------------


class Admin:
    """The admin points collections of one tenant."""

    def __init__(self, client: Any) -> None:
        self.client = client

    @staticmethod
    def _path(system: dict[str, Any] | str | None, kind: str | None) -> str:
        if system is None:
            return ADMIN
        system_id = system if isinstance(system, str) else system["id"]
        return f"{ADMIN}/{system_id}/{kind}"

    # raw verbs

    def post(self, items: Any, system: Any = None, kind: str | None = None) -> Any:
        return self.client.post(self._path(system, kind), items)

    def patch(self, items: Any, system: Any = None, kind: str | None = None) -> Any:
        return self.client.patch(self._path(system, kind), items)

    def delete(
        self, ids: list[str], system: Any = None, kind: str | None = None, query: str = ""
    ) -> Any:
        return self.client.delete(f"{self._path(system, kind)}?ids={','.join(ids)}{query}")

    def get(self, path: str = "", system: Any = None, kind: str | None = None, **params) -> Any:
        return self.client.get(self._path(system, kind) + path, params)

    # checked shorthands

    def create(self, item: dict[str, Any], system: Any = None, kind: str | None = None) -> dict:
        response = self.post([item], system, kind)
        assert response.status_code == 201, response.content
        body = response.json()
        assert body["issues"] == [], body
        return body["created"][0]

    def create_issue(self, item: Any, system: Any = None, kind: str | None = None) -> dict:
        response = self.post([item], system, kind)
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["created"] == [], body
        assert len(body["issues"]) == 1, body
        return body["issues"][0]

    def update(self, id: str, system: Any = None, kind: str | None = None, **fields) -> dict:
        response = self.patch([{"id": id, **fields}], system, kind)
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["issues"] == [], body
        return body["updated"][0]

    def update_issue(self, id: str, system: Any = None, kind: str | None = None, **fields) -> dict:
        response = self.patch([{"id": id, **fields}], system, kind)
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["updated"] == [], body
        assert len(body["issues"]) == 1, body
        return body["issues"][0]

    def system(self, key: str = "xp", **item: Any) -> dict:
        return self.create({"name": item.pop("name", key.upper()), "key": key, **item})

    def trigger(self, system: Any, **item: Any) -> dict:
        item.setdefault("status", "active")
        return self.create(item, system, "triggers")

    def metric_trigger(self, system: Any, metric: Any, points: int, threshold: int = 1, **item):
        return self.trigger(
            system,
            type="metric",
            points=points,
            metricId=str(metric.public_id),
            metricThreshold=threshold,
            **item,
        )

    def boost(self, system: Any, multiplier: Any, start: str = "2020-01-01", **item) -> dict:
        return self.create(
            {"name": item.pop("name", f"x{multiplier}"), "start": start, "multiplier": multiplier}
            | item,
            system,
            "boosts",
        )

    def level(self, system: Any, key: str, points: int, **item: Any) -> dict:
        return self.create(
            {"name": item.pop("name", key.title()), "key": key, "points": points, **item},
            system,
            "levels",
        )


@pytest.fixture
def admin(api_client) -> Admin:
    return Admin(api_client)


@pytest.fixture
def other_admin(other_tenant_client) -> Admin:
    return Admin(other_tenant_client)


@pytest.fixture
def xp(admin) -> dict:
    return admin.system("xp", name="XP")


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


@pytest.fixture
def spend(tenant):
    metric = MetricFactory(tenant=tenant, key="spend", name="Spend")
    bump(tenant)
    return metric


# --- application helpers -------------------------------------------------------------------------


def event(
    client: Any,
    user: str = "u1",
    value: Any = 1,
    key: str = "words",
    attributes: dict[str, str] | None = None,
    idempotency_key: str | None = None,
    status: int = 201,
    when: dt.datetime | None = None,
    user_attributes: dict[str, str] | None = None,
    **user_fields: Any,
) -> dict[str, Any]:
    if user_attributes is not None:
        user_fields["attributes"] = user_attributes
    body: dict[str, Any] = {"user": {"id": user, **user_fields}, "value": value}
    if attributes is not None:
        body["attributes"] = attributes
    headers = {"HTTP_IDEMPOTENCY_KEY": idempotency_key} if idempotency_key else {}
    if when is not None:
        with time_machine.travel(when, tick=False):
            response = client.post(f"/v1/metrics/{key}/event", body, **headers)
    else:
        response = client.post(f"/v1/metrics/{key}/event", body, **headers)
    assert response.status_code == status, response.content
    return response.json()


def added(body: dict[str, Any], system: str = "xp") -> int | None:
    """Points the event added to the system; None when the system is absent from the map."""
    entry = body["points"].get(system)
    return None if entry is None else entry["added"]


def user_points(client: Any, user: str = "u1", system: str = "xp", **params: Any) -> dict:
    response = client.get(f"/v1/users/{user}/points/{system}", params)
    assert response.status_code == 200, response.content
    return response.json()


def balance(user: str = "u1", system: str = "xp") -> int:
    row = PointsTotal.objects.filter(user__external_id=user, system__key=system).first()
    return row.total if row else 0


def ledger(user: str = "u1", system: str = "xp") -> list[int]:
    return list(
        PointsAward.objects.filter(user__external_id=user, system__key=system)
        .order_by("id")
        .values_list("awarded", flat=True)
    )


def configure_streaks(client: Any) -> None:
    response = client.patch(
        "/admin/v1/streaks/settings",
        {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}]},
    )
    assert response.status_code == 200, response.content


def complete(client: Any, key: str, user: str = "u1", status: int = 201, **user_fields: Any):
    response = client.post(
        f"/v1/achievements/{key}/complete", {"user": {"id": user, **user_fields}}
    )
    assert response.status_code == status, response.content
    return response.json()


@pytest.fixture
def achievements(api_client, django_capture_on_commit_callbacks):
    """Creates active achievements through the admin API; returns the created object."""

    def create(**item: Any) -> dict[str, Any]:
        item.setdefault("status", "active")
        with django_capture_on_commit_callbacks(execute=True):
            response = api_client.post("/admin/v1/achievements", [item])
        assert response.status_code == 201, response.content
        assert response.json()["issues"] == []
        return response.json()["created"][0]

    return create


# =================================================================================================
# Admin API: systems
# =================================================================================================


class TestAdminSystems:
    def test_create_minimal(self, admin):
        created = admin.system("xp", name="XP")
        assert created == {
            "id": created["id"],
            "name": "XP",
            "key": "xp",
            "description": "",
            "status": "active",
            "badge": None,
            "maxPoints": None,
        }

    def test_create_with_everything_nested(self, admin, metric):
        with time_machine.travel(at("2026-03-10"), tick=False):
            created = admin.system(
                "coins",
                name="Coins",
                description="Spendable",
                badge={"url": "https://x.test/c.png"},
                maxPoints=500,
                levels=[{"name": "Gold", "key": "gold", "points": 100, "description": "Shiny"}],
                boosts=[
                    {"name": "Spring", "start": "2026-03-01", "end": "2026-03-31", "multiplier": 2}
                ],
                triggers=[
                    {
                        "type": "metric",
                        "points": 5,
                        "metricId": str(metric.public_id),
                        "metricThreshold": 3,
                    }
                ],
            )
        assert created["maxPoints"] == 500
        assert created["badge"] == {"url": "https://x.test/c.png"}
        assert created["description"] == "Spendable"
        assert [lv["key"] for lv in created["levels"]] == ["gold"]
        assert created["levels"][0] | {"id": None} == {
            "id": None,
            "name": "Gold",
            "key": "gold",
            "points": 100,
            "description": "Shiny",
            "badge": None,
        }
        boost = created["boosts"][0]
        assert (boost["status"], boost["multiplier"], boost["rounding"]) == ("active", 2, "down")
        assert (boost["userId"], boost["userAttributes"]) == (None, [])
        trigger = created["triggers"][0]
        assert trigger | {"id": None} == {
            "id": None,
            "type": "metric",
            "points": 5,
            "status": "inactive",  # the default
            "userAttributes": [],
            "blockIfOutOfPoints": False,
            "metricId": str(metric.public_id),
            "metricThreshold": 3,
            "eventAttributes": [],
        }
        system = PointsSystem.objects.get(key="coins")
        assert (system.levels.count(), system.boosts.count(), system.triggers.count()) == (1, 1, 1)

    def test_nested_lists_absent_unless_supplied(self, admin):
        created = admin.system("xp", levels=[])
        assert created["levels"] == []
        assert "boosts" not in created
        assert "triggers" not in created

    def test_a_bad_nested_item_fails_the_whole_system(self, admin):
        issue = admin.create_issue(
            {
                "name": "XP",
                "key": "xp",
                "levels": [{"name": "A", "key": "a", "points": 1}],
                "triggers": [
                    {"type": "metric", "points": 5, "metricId": NO_SUCH_ID, "metricThreshold": 1}
                ],
            }
        )
        assert issue["index"] == 0
        assert issue["severity"] == "error"
        assert "metric" in issue["message"].lower()
        assert not PointsSystem.objects.exists()
        assert not PointsLevel.objects.exists()

    @pytest.mark.parametrize(
        "item",
        [
            {"key": "xp"},
            {"name": "XP"},
            {"name": "XP", "key": "bad key"},
            {"name": "XP", "key": "xp", "maxPoints": 0},
            {"name": "XP", "key": "xp", "maxPoints": -5},
            {"name": "XP", "key": "xp", "unknown": 1},
            {"name": "XP", "key": "xp", "badge": {"url": "not a url"}},
            {"name": "XP", "key": "xp", "levels": [{"name": "L", "key": "l", "points": -1}]},
            {"name": "XP", "key": "xp", "boosts": [{"name": "B", "start": "2026-01-01"}]},
            "not an object",
        ],
    )
    def test_invalid_items_are_issues(self, admin, item):
        issue = admin.create_issue(item)
        assert (issue["index"], issue["severity"]) == (0, "error")
        assert issue["message"]
        assert not PointsSystem.objects.exists()

    def test_duplicate_key_is_an_issue(self, admin, xp):
        issue = admin.create_issue({"name": "Again", "key": "xp"})
        assert "already in use" in issue["message"]

    def test_mixed_batch_creates_the_good_items(self, admin):
        response = admin.post(
            [{"name": "A", "key": "a"}, {"name": "B", "key": "a"}, {"name": "C", "key": "c"}]
        )
        assert response.status_code == 201
        body = response.json()
        assert [s["key"] for s in body["created"]] == ["a", "c"]
        assert [i["index"] for i in body["issues"]] == [1]

    @pytest.mark.parametrize("body", [{}, [], [{"name": "x", "key": f"k{i}"} for i in range(101)]])
    def test_request_level_problems_are_422(self, admin, body):
        response = admin.post(body)
        assert response.status_code == 422
        assert "error" in response.json()

    def test_list_and_get(self, admin):
        a = admin.system("a")
        b = admin.system("b")
        c = admin.system("c")
        response = admin.get()
        assert response.status_code == 200
        assert [s["key"] for s in response.json()] == ["a", "b", "c"]
        assert [s["id"] for s in admin.get(limit=2, skip=1).json()] == [b["id"], c["id"]]
        assert admin.get(f"/{a['id']}").json() == a
        assert admin.get(limit=0).status_code == 422
        assert admin.get(limit=101).status_code == 422

    @pytest.mark.parametrize("object_id", [NO_SUCH_ID, "not-a-uuid"])
    def test_get_unknown_is_404(self, admin, object_id):
        response = admin.get(f"/{object_id}")
        assert response.status_code == 404
        assert "error" in response.json()

    def test_update(self, admin):
        created = admin.system("xp", maxPoints=10, badge={"url": "https://x.test/a.png"})
        updated = admin.update(
            created["id"], name="Experience", description="All of it", maxPoints=None, badge=None
        )
        assert updated == {
            **created,
            "name": "Experience",
            "description": "All of it",
            "maxPoints": None,
            "badge": None,
        }
        assert admin.get(f"/{created['id']}").json() == updated
        # Omitted fields are kept.
        assert admin.update(created["id"], maxPoints=7)["name"] == "Experience"

    @pytest.mark.parametrize(
        "fields", [{"key": "other"}, {"maxPoints": 0}, {"name": ""}, {"status": "archived"}]
    )
    def test_invalid_updates_are_issues(self, admin, xp, fields):
        issue = admin.update_issue(xp["id"], **fields)
        assert (issue["id"], issue["severity"]) == (xp["id"], "error")
        assert admin.get(f"/{xp['id']}").json() == xp

    def test_update_unknown_or_malformed_ids(self, admin):
        response = admin.patch([{"id": NO_SUCH_ID, "name": "x"}, {"id": "nope", "name": "y"}])
        assert response.status_code == 200
        issues = response.json()["issues"]
        assert [i.get("id", i.get("index")) for i in issues] == [NO_SUCH_ID, 1]
        assert "not found" in issues[0]["message"]

    def test_delete_archives_and_keeps_the_ledger(self, admin, api_client, xp, metric):
        admin.metric_trigger(xp, metric, 10)
        event(api_client, value=2)
        assert balance() == 20
        # u1 has points in it: archiving is confirmed (tests/points/test_guard_rails.py).
        refused = admin.delete([xp["id"]]).json()
        assert refused["deleted"] == []
        assert [i["id"] for i in refused["issues"]] == [xp["id"]]
        assert PointsSystem.objects.get().status == "active"
        response = admin.delete([xp["id"], NO_SUCH_ID], query="&confirm=xp")
        assert response.status_code == 200
        body = response.json()
        assert body["deleted"] == [{"id": xp["id"]}]
        assert [i["id"] for i in body["issues"]] == [NO_SUCH_ID]
        assert PointsSystem.objects.get().status == "archived"
        assert admin.get(f"/{xp['id']}").status_code == 404
        assert admin.get().json() == []
        assert admin.get(system=xp, kind="levels").status_code == 404
        assert api_client.get("/v1/points/xp").status_code == 404
        assert api_client.get("/v1/users/u1/points/xp").status_code == 404
        # The ledger stays; an archived system awards nothing more.
        assert ledger() == [20]
        assert event(api_client, value=5)["points"] == {}
        assert ledger() == [20]

    def test_delete_needs_ids(self, admin):
        assert admin.client.delete(ADMIN).status_code == 422

    def test_needs_an_api_key(self, anon_client, xp):
        assert anon_client.get(ADMIN).status_code == 401
        assert anon_client.post(ADMIN, [{"name": "a", "key": "a"}]).status_code == 401


# =================================================================================================
# Admin API: levels, boosts, triggers
# =================================================================================================


class TestAdminNestedCommon:
    @pytest.mark.parametrize("kind", ["levels", "boosts", "triggers"])
    @pytest.mark.parametrize("system_id", [NO_SUCH_ID, "not-a-uuid"])
    def test_unknown_system_is_404(self, admin, kind, system_id):
        assert admin.get(system=system_id, kind=kind).status_code == 404
        assert admin.post([{"name": "x"}], system_id, kind).status_code == 404
        assert admin.patch([{"id": NO_SUCH_ID}], system_id, kind).status_code == 404
        assert admin.delete([NO_SUCH_ID], system_id, kind).status_code == 404
        assert admin.get(f"/{NO_SUCH_ID}", system=system_id, kind=kind).status_code == 404

    @pytest.mark.parametrize("kind", ["levels", "boosts", "triggers"])
    def test_items_of_another_system_are_not_found(self, admin, kind, metric):
        a, b = admin.system("a"), admin.system("b")
        item = {
            "levels": lambda: admin.level(a, "one", 1),
            "boosts": lambda: admin.boost(a, 2),
            "triggers": lambda: admin.metric_trigger(a, metric, 1),
        }[kind]()
        assert admin.get(f"/{item['id']}", system=a, kind=kind).status_code == 200
        assert admin.get(f"/{item['id']}", system=b, kind=kind).status_code == 404
        assert admin.get(system=b, kind=kind).json() == []
        assert "not found" in admin.update_issue(item["id"], b, kind, name="x")["message"]
        response = admin.delete([item["id"]], b, kind)
        assert response.json()["deleted"] == []

    @pytest.mark.parametrize("kind", ["levels", "boosts", "triggers"])
    def test_request_level_problems_are_422(self, admin, xp, kind):
        assert admin.post({}, xp, kind).status_code == 422
        assert admin.post([], xp, kind).status_code == 422
        assert admin.client.delete(f"{ADMIN}/{xp['id']}/{kind}").status_code == 422


class TestAdminLevels:
    def test_crud(self, admin, xp):
        gold = admin.level(xp, "gold", 500, name="Gold", badge={"url": "https://x.test/g.png"})
        bronze = admin.level(xp, "bronze", 0)
        assert gold | {"id": None} == {
            "id": None,
            "name": "Gold",
            "key": "gold",
            "points": 500,
            "description": "",
            "badge": {"url": "https://x.test/g.png"},
        }
        listed = admin.get(system=xp, kind="levels").json()
        assert {lv["key"] for lv in listed} == {"gold", "bronze"}
        assert admin.get(f"/{gold['id']}", system=xp, kind="levels").json() == gold
        updated = admin.update(gold["id"], xp, "levels", points=400, description="d", badge=None)
        assert (updated["points"], updated["description"], updated["badge"]) == (400, "d", None)
        response = admin.delete([bronze["id"]], xp, "levels")
        assert response.json() == {"deleted": [{"id": bronze["id"]}], "issues": []}
        assert [lv["key"] for lv in admin.get(system=xp, kind="levels").json()] == ["gold"]

    def test_keys_are_unique_per_system(self, admin, xp):
        admin.level(xp, "gold", 500)
        issue = admin.create_issue({"name": "G", "key": "gold", "points": 1}, xp, "levels")
        assert "already in use" in issue["message"]
        # Another system may reuse it.
        admin.level(admin.system("coins"), "gold", 1)

    @pytest.mark.parametrize(
        "item",
        [
            {"name": "L", "key": "l", "points": -1},
            {"name": "L", "key": "l"},
            {"name": "L", "key": "l l", "points": 1},
            {"name": "L", "key": "l", "points": 1.5},
            {"key": "l", "points": 1},
        ],
    )
    def test_invalid_levels(self, admin, xp, item):
        assert admin.create_issue(item, xp, "levels")["index"] == 0

    def test_key_is_immutable_and_points_non_negative(self, admin, xp):
        gold = admin.level(xp, "gold", 500)
        admin.update_issue(gold["id"], xp, "levels", key="platinum")
        admin.update_issue(gold["id"], xp, "levels", points=-1)
        assert PointsLevel.objects.get().key == "gold"


class TestAdminBoosts:
    @time_machine.travel(at("2026-03-10"), tick=False)
    def test_status_follows_the_dates(self, admin, xp):
        assert admin.boost(xp, 2, start="2026-03-10")["status"] == "active"
        assert admin.boost(xp, 2, start="2026-03-11")["status"] == "scheduled"
        assert admin.boost(xp, 2, start="2026-03-01", end="2026-03-09")["status"] == "finished"
        assert admin.boost(xp, 2, start="2026-03-01", end="2026-03-10")["status"] == "active"

    @time_machine.travel(at("2026-03-10"), tick=False)
    def test_crud(self, admin, xp, plan):
        created = admin.boost(
            xp,
            1.5,
            name="Spring",
            end="2026-03-31",
            rounding="up",
            userAttributes=[ref(plan, "pro")],
        )
        assert created == {
            "id": created["id"],
            "name": "Spring",
            "status": "active",
            "start": "2020-01-01",
            "end": "2026-03-31",
            "multiplier": 1.5,
            "rounding": "up",
            "userId": None,
            "userAttributes": [ref(plan, "pro")],
        }
        assert admin.get(f"/{created['id']}", system=xp, kind="boosts").json() == created
        assert admin.get(system=xp, kind="boosts").json() == [created]
        updated = admin.update(
            created["id"], xp, "boosts", multiplier=3, end=None, rounding="nearest", name="S2"
        )
        assert (updated["multiplier"], updated["end"], updated["rounding"], updated["name"]) == (
            3,
            None,
            "nearest",
            "S2",
        )
        assert (
            admin.update(created["id"], xp, "boosts", userAttributes=None)["userAttributes"] == []
        )
        assert admin.delete([created["id"]], xp, "boosts").json()["deleted"] == [
            {"id": created["id"]}
        ]
        assert not PointsBoost.objects.exists()

    def test_user_boost(self, admin, api_client, xp, metric):
        event(api_client, user="alice")
        created = admin.boost(xp, 2, userId="alice")
        assert (created["userId"], created["userAttributes"]) == ("alice", [])
        # An empty filter list is harmless on a user's boost.
        assert admin.update(created["id"], xp, "boosts", userAttributes=[])["userId"] == "alice"

    def test_user_boost_rejects_attribute_filters(self, admin, api_client, xp, plan, metric):
        event(api_client, user="alice")
        created = admin.boost(xp, 2, userId="alice")
        issue = admin.update_issue(created["id"], xp, "boosts", userAttributes=[ref(plan, "pro")])
        assert "user" in issue["message"]

    @pytest.mark.parametrize(
        "fields",
        [
            {"multiplier": 0},
            {"multiplier": -2},
            {"multiplier": 1},
            {"multiplier": 100},
            {"multiplier": 250},
            {"multiplier": "abc"},
            {"rounding": "sideways"},
            {"start": "2026-03-10", "end": "2026-03-09"},
            {"start": "not a date"},
            {"userId": "ghost"},
            {"userAttributes": [{"attributeId": NO_SUCH_ID, "attributeValue": "x"}]},
            {"name": "x" * 256},
        ],
    )
    def test_invalid_boosts(self, admin, xp, fields):
        item = {"name": "B", "start": "2026-03-01", "multiplier": 2, **fields}
        assert admin.create_issue(item, xp, "boosts")["index"] == 0
        assert not PointsBoost.objects.exists()

    def test_user_and_attributes_are_mutually_exclusive(self, admin, api_client, xp, plan, metric):
        event(api_client, user="alice")
        item = {
            "name": "B",
            "start": "2026-03-01",
            "multiplier": 2,
            "userId": "alice",
            "userAttributes": [ref(plan, "pro")],
        }
        assert "mutually exclusive" in admin.create_issue(item, xp, "boosts")["message"]

    @pytest.mark.parametrize("multiplier", [0.01, 0.5, 1.0001, 99.99])
    def test_multiplier_bounds_accepted(self, admin, xp, multiplier):
        assert admin.boost(xp, multiplier)["multiplier"] == multiplier

    @pytest.mark.parametrize(
        "fields", [{"multiplier": 1}, {"multiplier": 0}, {"end": "2019-12-31"}, {"userId": "x"}]
    )
    def test_invalid_updates(self, admin, xp, fields):
        created = admin.boost(xp, 2)
        admin.update_issue(created["id"], xp, "boosts", **fields)
        boost = PointsBoost.objects.get()
        assert (boost.multiplier, boost.end) == (2, None)

    def test_user_boost_for_another_tenants_user_is_refused(
        self, admin, other_tenant_client, xp, tenant, other_tenant
    ):
        MetricFactory(tenant=other_tenant, key="words")
        bump(other_tenant)
        event(other_tenant_client, user="stranger")
        assert (
            "User does not exist"
            in admin.create_issue(
                {"name": "B", "start": "2026-03-01", "multiplier": 2, "userId": "stranger"},
                xp,
                "boosts",
            )["message"]
        )


class TestAdminTriggers:
    def test_each_type_with_its_fields(self, admin, xp, metric, achievements, plan, source):
        achievement = achievements(name="Onboarded", trigger="api", key="onboarded")
        m = admin.create(
            {
                "type": "metric",
                "points": 5,
                "metricId": str(metric.public_id),
                "metricThreshold": 3,
                "eventAttributes": [ref(source, "web")],
                "userAttributes": [ref(plan, "pro")],
                "blockIfOutOfPoints": True,
            },
            xp,
            "triggers",
        )
        assert m | {"id": None} == {
            "id": None,
            "type": "metric",
            "points": 5,
            "status": "inactive",
            "userAttributes": [ref(plan, "pro")],
            "blockIfOutOfPoints": True,
            "metricId": str(metric.public_id),
            "metricThreshold": 3,
            "eventAttributes": [ref(source, "web")],
        }
        a = admin.trigger(xp, type="achievement", points=10, achievementId=achievement["id"])
        assert (a["achievementId"], a["status"]) == (achievement["id"], "active")
        assert "metricId" not in a
        s = admin.trigger(xp, type="streak", points=-3, streakLength=7)
        assert (s["streakLength"], s["points"]) == (7, -3)
        t = admin.trigger(xp, type="time", points=1, timeUnit="hours", timeInterval=6)
        assert (t["timeUnit"], t["timeInterval"]) == ("hours", 6)
        u = admin.trigger(xp, type="user_creation", points=100)
        assert u["type"] == "user_creation"
        listed = admin.get(system=xp, kind="triggers").json()
        assert {x["id"] for x in listed} == {m["id"], a["id"], s["id"], t["id"], u["id"]}
        assert admin.get(f"/{t['id']}", system=xp, kind="triggers").json() == t

    @pytest.mark.parametrize(
        "item",
        [
            {"type": "metric", "points": 5},
            {"type": "metric", "points": 5, "metricId": "METRIC"},
            {"type": "metric", "points": 5, "metricId": "METRIC", "metricThreshold": 0},
            {"type": "metric", "points": 0, "metricId": "METRIC", "metricThreshold": 1},
            {"type": "metric", "metricId": "METRIC", "metricThreshold": 1},
            {"type": "metric", "points": 5, "metricId": NO_SUCH_ID, "metricThreshold": 1},
            {
                "type": "metric",
                "points": 5,
                "metricId": "METRIC",
                "metricThreshold": 1,
                "streakLength": 3,
            },
            {"type": "streak", "points": 5},
            {"type": "streak", "points": 5, "streakLength": 0},
            {"type": "streak", "points": 5, "streakLength": 3, "metricThreshold": 2},
            {"type": "achievement", "points": 5},
            {"type": "achievement", "points": 5, "achievementId": NO_SUCH_ID},
            {"type": "time", "points": 5, "timeUnit": "days"},
            {"type": "time", "points": 5, "timeInterval": 1},
            {"type": "time", "points": 5, "timeUnit": "weeks", "timeInterval": 1},
            {"type": "time", "points": 5, "timeUnit": "day", "timeInterval": 1},
            {"type": "time", "points": 5, "timeUnit": "days", "timeInterval": 0},
            {"type": "user_creation", "points": 5, "timeInterval": 1},
            {"type": "bonus", "points": 5},
            {"type": "user_creation", "points": 5, "status": "archived"},
            {"type": "user_creation", "points": 5.5},
            {
                "type": "user_creation",
                "points": 5,
                "userAttributes": [{"attributeId": NO_SUCH_ID, "attributeValue": "x"}],
            },
        ],
    )
    def test_invalid_triggers(self, admin, xp, metric, item):
        if item.get("metricId") == "METRIC":
            item = {**item, "metricId": str(metric.public_id)}
        assert admin.create_issue(item, xp, "triggers")["index"] == 0

    def test_attribute_types_are_checked(self, admin, xp, metric, plan, source):
        base = {"type": "metric", "points": 5, "metricId": str(metric.public_id)}
        base["metricThreshold"] = 1
        admin.create_issue({**base, "eventAttributes": [ref(plan, "pro")]}, xp, "triggers")
        admin.create_issue({**base, "userAttributes": [ref(source, "web")]}, xp, "triggers")

    def test_metric_of_another_tenant_is_refused(self, admin, xp, other_tenant):
        foreign = MetricFactory(tenant=other_tenant, key="words")
        item = {"type": "metric", "points": 5, "metricId": str(foreign.public_id)}
        assert (
            "not found"
            in admin.create_issue(item | {"metricThreshold": 1}, xp, "triggers")["message"]
        )

    def test_update_preserves_omitted_fields(self, admin, xp, metric, plan):
        created = admin.metric_trigger(xp, metric, 5, 3, userAttributes=[ref(plan, "pro")])
        updated = admin.update(created["id"], xp, "triggers", points=7)
        assert updated == {**created, "points": 7}
        updated = admin.update(created["id"], xp, "triggers", status="inactive")
        assert updated == {**created, "points": 7, "status": "inactive"}
        cleared = admin.update(created["id"], xp, "triggers", userAttributes=None)
        assert cleared["userAttributes"] == []
        assert admin.update(created["id"], xp, "triggers", blockIfOutOfPoints=True)[
            "blockIfOutOfPoints"
        ]

    def test_type_changes_only_while_inactive(self, admin, xp, metric):
        created = admin.metric_trigger(xp, metric, 5, 3)
        issue = admin.update_issue(created["id"], xp, "triggers", type="streak", streakLength=3)
        assert "inactive" in issue["message"]
        admin.update(created["id"], xp, "triggers", status="inactive")
        admin.update_issue(created["id"], xp, "triggers", type="streak")  # needs streakLength
        changed = admin.update(created["id"], xp, "triggers", type="streak", streakLength=3)
        assert changed | {"id": None} == {
            "id": None,
            "type": "streak",
            "points": 5,
            "status": "inactive",
            "userAttributes": [],
            "blockIfOutOfPoints": False,
            "streakLength": 3,
        }
        # The metric fields are gone, not merely hidden.
        stored = admin.get(f"/{created['id']}", system=xp, kind="triggers").json()
        assert stored == changed

    def test_fields_of_another_type_are_refused_on_update(self, admin, xp, metric):
        created = admin.metric_trigger(xp, metric, 5, 3)
        admin.update_issue(created["id"], xp, "triggers", streakLength=3)
        admin.update_issue(created["id"], xp, "triggers", points=0)

    def test_delete_keeps_the_award_snapshots(self, admin, api_client, xp, metric):
        created = admin.metric_trigger(xp, metric, 10)
        event(api_client)
        assert admin.delete([created["id"]], xp, "triggers").json()["deleted"] == [
            {"id": created["id"]}
        ]
        assert admin.get(system=xp, kind="triggers").json() == []
        award = user_points(api_client)["awards"][0]
        assert (award["trigger"]["id"], award["trigger"]["metricName"]) == (created["id"], "Words")
        assert event(api_client)["points"] == {}

    def test_a_new_trigger_applies_at_once(self, admin, api_client, xp, metric):
        event(api_client)  # fills the configuration snapshot
        admin.metric_trigger(xp, metric, 10)
        assert added(event(api_client, user="fresh")) == 10


# =================================================================================================
# Triggers
# =================================================================================================


class TestMetricTrigger:
    def test_points_for_every_threshold(self, admin, api_client, xp, metric):
        admin.metric_trigger(xp, metric, 10, threshold=3)
        assert event(api_client, value=2)["points"] == {}
        assert added(event(api_client, value=1)) == 10  # 3
        assert added(event(api_client, value=5)) == 10  # 8
        assert added(event(api_client, value=10)) == 40  # 18: 6 multiples, 2 paid before
        assert ledger() == [10, 10, 40]
        assert balance() == 60

    def test_the_event_response_entry(self, admin, api_client, xp, metric):
        trigger = admin.metric_trigger(xp, metric, 10, threshold=2)
        with time_machine.travel(at("2026-03-10"), tick=False):
            body = event(api_client, value=5)
        award = PointsAward.objects.get()
        assert body["points"] == {
            "xp": {
                "id": xp["id"],
                "key": "xp",
                "name": "XP",
                "description": None,
                "badgeUrl": None,
                "maxPoints": None,
                "total": 20,
                "added": 20,
                "awards": [
                    {
                        "id": str(award.public_id),
                        "awarded": 20,
                        "date": "2026-03-10T12:00:00Z",
                        "total": 20,
                        "trigger": {
                            "id": trigger["id"],
                            "type": "metric",
                            "points": 10,
                            "status": "active",
                            "userAttributes": [],
                            "metricId": str(metric.public_id),
                            "metricName": "Words",
                            "metricThreshold": 2,
                            "eventAttributes": [],
                            "created": body["points"]["xp"]["awards"][0]["trigger"]["created"],
                            "updated": body["points"]["xp"]["awards"][0]["trigger"]["updated"],
                        },
                        "boosts": [],
                    }
                ],
            }
        }

    def test_decimal_values(self, admin, api_client, xp, metric):
        admin.metric_trigger(xp, metric, 1, threshold=1)
        assert event(api_client, value=0.4)["points"] == {}
        assert event(api_client, value=0.4)["points"] == {}
        assert added(event(api_client, value=0.25)) == 1  # 1.05
        assert added(event(api_client, value=1.95)) == 2  # 3.0 exactly
        assert balance() == 3

    def test_a_large_jump_pays_every_multiple_in_one_award(self, admin, api_client, xp, metric):
        admin.metric_trigger(xp, metric, 3, threshold=7)
        assert added(event(api_client, value=10**6)) == 3 * (10**6 // 7)
        assert len(ledger()) == 1

    def test_never_pays_the_same_multiple_twice(self, admin, api_client, xp, metric):
        admin.metric_trigger(xp, metric, 5, threshold=10)
        assert added(event(api_client, value=35)) == 15
        assert event(api_client, value=-30)["points"] == {}  # down to 5
        assert event(api_client, value=30)["points"] == {}  # 35 again
        assert event(api_client, value=4)["points"] == {}  # 39
        assert added(event(api_client, value=1)) == 5  # 40: a new multiple
        assert event(api_client, value=-100)["points"] == {}  # negative total
        assert event(api_client, value=100)["points"] == {}  # 40 again
        assert added(event(api_client, value=10)) == 5  # 50
        assert ledger() == [15, 5, 5]

    def test_only_its_metric_counts(self, admin, api_client, xp, metric, spend):
        admin.metric_trigger(xp, metric, 5)
        assert event(api_client, key="spend", value=10)["points"] == {}
        assert added(event(api_client, value=1)) == 5

    def test_each_user_has_their_own_multiples(self, admin, api_client, xp, metric):
        admin.metric_trigger(xp, metric, 5, threshold=2)
        assert event(api_client, user="a", value=1)["points"] == {}
        assert event(api_client, user="b", value=1)["points"] == {}
        assert added(event(api_client, user="a", value=1)) == 5
        assert (balance("a"), balance("b")) == (5, 0)

    def test_only_changed_systems_are_in_the_map(self, admin, api_client, xp, metric, spend):
        coins = admin.system("coins")
        admin.metric_trigger(xp, metric, 5)
        admin.metric_trigger(coins, spend, 1)
        body = event(api_client)
        assert list(body["points"]) == ["xp"]
        assert list(event(api_client, key="spend")["points"]) == ["coins"]
        admin.metric_trigger(coins, metric, 2, threshold=2)
        body = event(api_client)  # words total 2: both systems
        assert (added(body, "xp"), added(body, "coins")) == (5, 2)

    def test_several_triggers_of_one_system_in_one_entry(self, admin, api_client, xp, metric):
        admin.metric_trigger(xp, metric, 1, threshold=1)
        admin.metric_trigger(xp, metric, 10, threshold=5)
        body = event(api_client, value=5)
        entry = body["points"]["xp"]
        assert (entry["added"], entry["total"]) == (15, 15)
        assert [(a["awarded"], a["total"]) for a in entry["awards"]] == [(5, 5), (10, 15)]

    def test_inactive_triggers_award_nothing(self, admin, api_client, xp, metric):
        trigger = admin.metric_trigger(xp, metric, 5, status="inactive")
        assert event(api_client)["points"] == {}
        assert not PointsAward.objects.exists()
        admin.update(trigger["id"], xp, "triggers", status="active")
        assert added(event(api_client, user="u2")) == 5

    def test_event_attribute_filters(self, admin, api_client, xp, metric, source):
        admin.metric_trigger(xp, metric, 5, threshold=10, eventAttributes=[ref(source, "web")])
        assert event(api_client, value=8, attributes={"source": "web"})["points"] == {}
        assert event(api_client, value=50, attributes={"source": "app"})["points"] == {}
        assert event(api_client, value=50)["points"] == {}
        assert added(event(api_client, value=2, attributes={"source": "web"})) == 5
        # A non-matching event never pays, however large the unfiltered total.
        assert event(api_client, value=100)["points"] == {}
        assert added(event(api_client, value=25, attributes={"source": "web"})) == 10  # web 35

    def test_every_event_filter_must_match(self, admin, api_client, xp, metric, tenant, source):
        lang = AttributeFactory(tenant=tenant, key="lang", type="event")
        bump(tenant)
        admin.metric_trigger(xp, metric, 5, eventAttributes=[ref(source, "web"), ref(lang, "fr")])
        assert event(api_client, attributes={"source": "web", "lang": "en"})["points"] == {}
        assert event(api_client, attributes={"source": "web"})["points"] == {}
        body = event(api_client, attributes={"source": "web", "lang": "fr"})
        assert added(body) == 5

    def test_a_deleted_filter_attribute_matches_nobody(self, admin, api_client, xp, metric, source):
        admin.metric_trigger(xp, metric, 5, eventAttributes=[ref(source, "web")])
        assert added(event(api_client, attributes={"source": "web"})) == 5
        response = api_client.delete(f"/admin/v1/attributes?ids={source.public_id}")
        assert response.status_code == 200, response.content
        assert event(api_client, value=5)["points"] == {}


class TestUserAttributeFilters:
    def test_only_matching_users_earn(self, admin, api_client, xp, metric, plan):
        admin.metric_trigger(xp, metric, 5, userAttributes=[ref(plan, "pro")])
        assert event(api_client, user="free", user_attributes={"plan": "free"})["points"] == {}
        assert event(api_client, user="nobody")["points"] == {}
        assert added(event(api_client, user="pro", user_attributes={"plan": "pro"})) == 5

    def test_attributes_sent_with_the_event_count(self, admin, api_client, xp, metric, plan):
        admin.metric_trigger(xp, metric, 5, userAttributes=[ref(plan, "pro")])
        assert event(api_client, value=3)["points"] == {}
        # The attributes sent with an event apply to that event already.
        assert added(event(api_client, user="new", user_attributes={"plan": "pro"})) == 5
        assert added(event(api_client, value=1, user_attributes={"plan": "pro"})) >= 5

    def test_filters_on_every_trigger_kind(self, admin, api_client, xp, metric, plan, achievements):
        ach = achievements(name="Onboarded", trigger="api", key="onboarded")
        only_pro = {"userAttributes": [ref(plan, "pro")]}
        admin.trigger(xp, type="user_creation", points=100, **only_pro)
        admin.trigger(xp, type="achievement", points=10, achievementId=ach["id"], **only_pro)
        free, pro = {"plan": "free"}, {"plan": "pro"}
        assert event(api_client, user="a", user_attributes=free)["points"] == {}
        assert complete(api_client, "onboarded", user="a", attributes=free)["points"] == {}
        assert added(event(api_client, user="b", user_attributes=pro)) == 100
        assert added(complete(api_client, "onboarded", user="b", attributes=pro)) == 10


class TestUserCreationTrigger:
    def test_once_at_the_first_event(self, admin, api_client, xp, metric):
        trigger = admin.trigger(xp, type="user_creation", points=100)
        body = event(api_client)
        assert added(body) == 100
        assert body["points"]["xp"]["awards"][0]["trigger"]["id"] == trigger["id"]
        assert event(api_client)["points"] == {}
        assert event(api_client, key="words", value=5)["points"] == {}
        assert ledger() == [100]

    def test_together_with_the_first_events_other_awards(self, admin, api_client, xp, metric):
        admin.trigger(xp, type="user_creation", points=100)
        admin.metric_trigger(xp, metric, 5)
        assert added(event(api_client)) == 105
        assert added(event(api_client)) == 5
        assert sorted(ledger()) == [5, 5, 100]

    def test_every_user_once(self, admin, api_client, xp, metric):
        admin.trigger(xp, type="user_creation", points=100)
        for user in ("a", "b", "c"):
            event(api_client, user=user)
            event(api_client, user=user)
        assert [balance(u) for u in ("a", "b", "c")] == [100, 100, 100]

    @pytest.mark.parametrize(
        ("method", "path", "body"),
        [("post", "/v1/users", {"id": "u1"}), ("put", "/v1/users/u1", {})],
    )
    def test_paid_when_identify_creates_the_user(
        self, admin, api_client, xp, metric, method, path, body
    ):
        """As Trophy: a balance read right after identify shows the user_creation points."""
        admin.trigger(xp, type="user_creation", points=100)
        response = getattr(api_client, method)(path, body)
        assert response.status_code in (200, 201), response.content
        assert user_points(api_client)["total"] == 100
        # Identifying again, and the first events, pay nothing more.
        assert getattr(api_client, method)(path, body).status_code == 200
        assert event(api_client)["points"] == {}
        assert ledger() == [100]

    def test_identify_honours_the_triggers_attribute_filters(
        self, admin, api_client, xp, metric, plan
    ):
        admin.trigger(xp, type="user_creation", points=100, userAttributes=[ref(plan, "pro")])
        api_client.put("/v1/users/free", {"attributes": {"plan": "free"}})
        api_client.put("/v1/users/pro", {"attributes": {"plan": "pro"}})
        assert (balance("free"), balance("pro")) == (0, 100)

    def test_an_update_of_an_unknown_user_creates_nothing(self, admin, api_client, xp):
        admin.trigger(xp, type="user_creation", points=100)
        assert api_client.patch("/v1/users/ghost", {"name": "G"}).status_code == 404
        assert not PointsAward.objects.exists()

    def test_a_deduction_at_creation(self, admin, api_client, xp, metric):
        admin.trigger(xp, type="user_creation", points=-10)
        assert added(event(api_client)) == -10
        assert balance() == -10

    def test_a_user_first_seen_by_an_achievement_completion_is_still_paid_once(
        self, admin, api_client, xp, metric, achievements
    ):
        """The user's first contact is a completion: the user_creation award is due then (or
        at the latest at the first event), and exactly once."""
        ach = achievements(name="Onboarded", trigger="api", key="onboarded")
        admin.trigger(xp, type="user_creation", points=100)
        admin.trigger(xp, type="achievement", points=10, achievementId=ach["id"])
        complete(api_client, "onboarded", user="newcomer")
        event(api_client, user="newcomer")
        event(api_client, user="newcomer")
        assert sorted(ledger("newcomer")) == [10, 100]

    def test_a_user_first_paid_by_the_time_job_is_still_paid_once(
        self, admin, api_client, xp, metric
    ):
        admin.trigger(xp, type="user_creation", points=100)
        admin.trigger(xp, type="time", points=1, timeUnit="days", timeInterval=1)
        with time_machine.travel(at("2026-03-10"), tick=False):
            assert api_client.put("/v1/users/quiet", {}).status_code in (200, 201)
        points_time_triggers(at("2026-03-11", 13))
        event(api_client, user="quiet", when=at("2026-03-11", 14))
        event(api_client, user="quiet", when=at("2026-03-11", 15))
        assert sorted(ledger("quiet")) == [1, 100]

    def test_not_paid_on_a_replay_or_a_refused_first_event(self, admin, api_client, xp, spend):
        admin.trigger(xp, type="user_creation", points=100)
        admin.metric_trigger(xp, spend, -500, blockIfOutOfPoints=True)
        event(api_client, key="spend", status=422)
        assert not PointsAward.objects.exists()


class TestStreakTrigger:
    def test_each_time_the_streak_reaches_a_multiple(self, admin, api_client, xp, metric):
        configure_streaks(api_client)
        admin.trigger(xp, type="streak", points=50, streakLength=2)
        days = ["2026-03-10", "2026-03-11", "2026-03-12", "2026-03-13", "2026-03-14"]
        got = []
        for day in days:
            body = event(api_client, when=at(day))
            got.append((body["currentStreak"]["length"], added(body)))
        assert got == [(1, None), (2, 50), (3, None), (4, 50), (5, None)]
        # A second event the same day does not extend: nothing.
        assert event(api_client, when=at("2026-03-14", 18))["points"] == {}
        award = user_points(api_client)["awards"][0]
        assert (award["trigger"]["type"], award["trigger"]["streakLengthThreshold"]) == (
            "streak",
            2,
        )

    def test_a_rebuilt_streak_earns_again(self, admin, api_client, xp, metric):
        configure_streaks(api_client)
        admin.trigger(xp, type="streak", points=50, streakLength=2)
        event(api_client, when=at("2026-03-10"))
        assert added(event(api_client, when=at("2026-03-11"))) == 50
        # The 12th is missed: the streak is lost and starts again on the 13th.
        assert event(api_client, when=at("2026-03-13"))["currentStreak"]["length"] == 1
        assert added(event(api_client, when=at("2026-03-14"))) == 50
        assert ledger() == [50, 50]

    def test_without_streak_settings_nothing(self, admin, api_client, xp, metric):
        admin.trigger(xp, type="streak", points=50, streakLength=1)
        assert event(api_client, when=at("2026-03-10"))["points"] == {}

    def test_a_reset_streak_rebuilt_the_same_day_does_not_fail(self, admin, api_client, xp, metric):
        configure_streaks(api_client)
        admin.trigger(xp, type="streak", points=5, streakLength=1)
        assert added(event(api_client, when=at("2026-03-10", 9))) == 5
        with time_machine.travel(at("2026-03-10", 10), tick=False):
            response = api_client.post("/admin/v1/streaks/reset", {"users": [{"id": "u1"}]})
        assert response.status_code in (200, 201), response.content
        # The streak starts again the same day and reaches 1 again (same start date, same
        # length as the award before the reset): the event must not fail.
        body = event(api_client, when=at("2026-03-10", 11))
        assert (body["currentStreak"]["length"], body["currentStreak"]["extended"]) == (1, True)
        assert ledger() in ([5], [5, 5])


class TestAchievementTrigger:
    def test_completed_by_an_event(self, admin, api_client, xp, metric, achievements):
        ach = achievements(
            name="Ten words", trigger="metric", metricId=str(metric.public_id), metricValue=10
        )
        trigger = admin.trigger(xp, type="achievement", points=25, achievementId=ach["id"])
        assert event(api_client, value=9)["points"] == {}
        body = event(api_client, value=1)
        assert [a["name"] for a in body["achievements"]] == ["Ten words"]
        award = body["points"]["xp"]["awards"][0]
        assert award["awarded"] == 25
        assert award["trigger"] | {"created": None, "updated": None} == {
            "id": trigger["id"],
            "type": "achievement",
            "points": 25,
            "status": "active",
            "userAttributes": [],
            "achievementId": ach["id"],
            "achievementName": "Ten words",
            "created": None,
            "updated": None,
        }
        assert event(api_client, value=-5)["points"] == {}
        assert event(api_client, value=10)["points"] == {}
        assert ledger() == [25]

    def test_api_completion_returns_the_points(self, admin, api_client, xp, achievements):
        ach = achievements(name="Onboarded", trigger="api", key="onboarded")
        admin.trigger(xp, type="achievement", points=25, achievementId=ach["id"])
        admin.level(xp, "member", 20)
        first = complete(api_client, "onboarded", status=201)
        entry = first["points"]["xp"]
        assert (entry["added"], entry["total"], entry["level"]["key"]) == (25, 25, "member")
        again = complete(api_client, "onboarded", status=200)
        assert again["points"] == {}
        assert ledger() == [25]

    def test_composites_completed_by_a_completion_pay_too(
        self, admin, api_client, xp, achievements
    ):
        a = achievements(name="A", trigger="api", key="a")
        b = achievements(name="B", trigger="api", key="b")
        both = achievements(name="Both", trigger="achievement", achievementIds=[a["id"], b["id"]])
        admin.trigger(xp, type="achievement", points=1, achievementId=a["id"])
        admin.trigger(xp, type="achievement", points=100, achievementId=both["id"])
        assert added(complete(api_client, "a")) == 1
        # Completing b completes the composite "Both": its trigger pays in b's response.
        assert added(complete(api_client, "b")) == 100
        assert sorted(ledger()) == [1, 100]

    def test_two_systems_from_one_completion(self, admin, api_client, xp, achievements):
        ach = achievements(name="Onboarded", trigger="api", key="onboarded")
        coins = admin.system("coins")
        admin.trigger(xp, type="achievement", points=25, achievementId=ach["id"])
        admin.trigger(coins, type="achievement", points=3, achievementId=ach["id"])
        body = complete(api_client, "onboarded")
        assert (added(body, "xp"), added(body, "coins")) == (25, 3)

    def test_retargeting_a_trigger_pays_for_the_new_achievement(
        self, admin, api_client, xp, achievements
    ):
        first = achievements(name="First", trigger="api", key="first")
        second = achievements(name="Second", trigger="api", key="second")
        trigger = admin.trigger(xp, type="achievement", points=10, achievementId=first["id"])
        assert added(complete(api_client, "first")) == 10
        admin.update(trigger["id"], xp, "triggers", achievementId=second["id"])
        body = complete(api_client, "second")
        assert added(body) == 10
        assert ledger() == [10, 10]


class TestTimeTrigger:
    def test_every_interval_since_the_user_was_created(self, admin, api_client, xp, metric):
        admin.trigger(xp, type="time", points=3, timeUnit="days", timeInterval=1)
        event(api_client, when=at("2026-03-10", 12))
        assert points_time_triggers(at("2026-03-10", 18)) == 0
        assert points_time_triggers(at("2026-03-11", 11, 59)) == 0
        assert points_time_triggers(at("2026-03-11", 12)) == 1
        assert ledger() == [3]
        # Two more days at once: one award for both intervals.
        assert points_time_triggers(at("2026-03-13", 13)) == 1
        assert ledger() == [3, 6]
        award = user_points(api_client)["awards"][0]
        assert (award["trigger"]["timeUnit"], award["trigger"]["timeInterval"]) == ("day", 1)

    def test_a_job_run_twice_awards_once(self, admin, api_client, xp, metric):
        admin.trigger(xp, type="time", points=3, timeUnit="hours", timeInterval=6)
        event(api_client, when=at("2026-03-10", 0))
        assert points_time_triggers(at("2026-03-10", 13)) == 1
        assert points_time_triggers(at("2026-03-10", 13)) == 0
        assert points_time_triggers(at("2026-03-10", 17)) == 0  # still two intervals
        assert ledger() == [6]
        assert points_time_triggers(at("2026-03-10", 18)) == 1
        assert points_time_triggers(at("2026-03-10", 18)) == 0
        assert ledger() == [6, 3]
        assert balance() == 9

    def test_users_created_without_events_are_paid(self, admin, api_client, xp, tenant):
        admin.trigger(xp, type="time", points=1, timeUnit="days", timeInterval=1)
        with time_machine.travel(at("2026-03-10"), tick=False):
            assert api_client.put("/v1/users/quiet", {}).status_code in (200, 201)
        points_time_triggers(at("2026-03-12"))
        assert balance("quiet") == 2

    def test_filters_and_status(self, admin, api_client, xp, metric, plan):
        admin.trigger(
            xp,
            type="time",
            points=1,
            timeUnit="days",
            timeInterval=1,
            userAttributes=[ref(plan, "pro")],
        )
        admin.trigger(
            xp, type="time", points=100, timeUnit="days", timeInterval=1, status="inactive"
        )
        event(api_client, user="pro", when=at("2026-03-10"), user_attributes={"plan": "pro"})
        event(api_client, user="free", when=at("2026-03-10"))
        points_time_triggers(at("2026-03-12"))
        assert (balance("pro"), balance("free")) == (2, 0)

    def test_respects_the_cap(self, admin, api_client, xp, metric):
        admin.update(xp["id"], maxPoints=5)
        admin.trigger(xp, type="time", points=2, timeUnit="days", timeInterval=1)
        event(api_client, when=at("2026-03-10"))
        points_time_triggers(at("2026-03-20"))
        assert balance() == 5
        points_time_triggers(at("2026-03-25"))
        assert balance() == 5

    def test_other_tenants_are_paid_by_their_own_triggers(
        self, admin, api_client, other_admin, other_tenant_client, xp, metric, other_tenant
    ):
        MetricFactory(tenant=other_tenant, key="words")
        bump(other_tenant)
        theirs = other_admin.system("xp")
        other_admin.trigger(theirs, type="time", points=7, timeUnit="days", timeInterval=1)
        admin.trigger(xp, type="time", points=1, timeUnit="days", timeInterval=1)
        event(api_client, user="u1", when=at("2026-03-10"))
        event(other_tenant_client, user="u1", when=at("2026-03-10"))
        points_time_triggers(at("2026-03-11", 13))
        assert sorted(PointsTotal.objects.values_list("total", flat=True)) == [1, 7]
        assert PointsAward.objects.get(total_after=7).tenant == other_tenant

    def test_a_blocked_deduction_does_not_stop_the_job(self, admin, api_client, xp, metric):
        """Energy drain with blockIfOutOfPoints: the job is "broke"'s first contact with the
        system, so user_creation pays first and covers the drain; the job serves everyone."""
        admin.trigger(xp, type="user_creation", points=100)
        blocking = admin.trigger(
            xp, type="time", points=-1, timeUnit="days", timeInterval=1, blockIfOutOfPoints=True
        )
        assert blocking["blockIfOutOfPoints"] is True
        # "broke" comes first in the job's order and has nothing to pay with.
        with time_machine.travel(at("2026-03-10"), tick=False):
            assert api_client.put("/v1/users/broke", {}).status_code in (200, 201)
        event(api_client, user="rich", when=at("2026-03-10"))
        points_time_triggers(at("2026-03-11", 13))  # must not raise
        assert balance("rich") == 99
        assert balance("broke") == 99

    def test_a_deduction_the_balance_cannot_cover_is_skipped(self, admin, api_client, xp, metric):
        """No user_creation to fall back on: "broke" has nothing, so the job skips the drain
        for them (without failing) and still serves "rich", who comes after."""
        admin.metric_trigger(xp, metric, 10)
        admin.trigger(
            xp, type="time", points=-1, timeUnit="days", timeInterval=1, blockIfOutOfPoints=True
        )
        with time_machine.travel(at("2026-03-10"), tick=False):
            assert api_client.put("/v1/users/broke", {}).status_code in (200, 201)
        event(api_client, user="rich", when=at("2026-03-10"))
        points_time_triggers(at("2026-03-11", 13))
        assert (balance("broke"), ledger("broke")) == (0, [])
        assert ledger("rich") == [10, -1]
        # Skipped, not owed: a later run does not catch up on it...
        points_time_triggers(at("2026-03-11", 14))
        assert ledger("broke") == []
        # ...and the next interval is judged on the balance then.
        event(api_client, user="broke", when=at("2026-03-11", 15))
        points_time_triggers(at("2026-03-12", 13))
        assert ledger("broke") == [10, -1]
        assert ledger("rich") == [10, -1, -1]


# =================================================================================================
# Negative points and blockIfOutOfPoints
# =================================================================================================


class TestNegativePoints:
    def test_deductions_may_go_below_zero_without_the_block(
        self, admin, api_client, xp, metric, spend
    ):
        admin.metric_trigger(xp, spend, -5)
        body = event(api_client, key="spend", value=2)
        entry = body["points"]["xp"]
        assert (entry["added"], entry["total"]) == (-10, -10)
        assert entry["awards"][0]["awarded"] == -10

    def test_deductions_are_never_boosted(self, admin, api_client, xp, metric, spend):
        admin.boost(xp, 3, rounding="up")
        admin.metric_trigger(xp, metric, 10)
        admin.metric_trigger(xp, spend, -5)
        assert added(event(api_client)) == 30
        body = event(api_client, key="spend")
        assert added(body) == -5
        assert body["points"]["xp"]["awards"][0]["boosts"] == []

    def test_deductions_are_not_capped(self, admin, api_client, xp, metric, spend):
        admin.update(xp["id"], maxPoints=20)
        admin.metric_trigger(xp, metric, 10)
        admin.metric_trigger(xp, spend, -5)
        event(api_client, value=5)
        assert balance() == 20
        assert added(event(api_client, key="spend", value=3)) == -15
        assert added(event(api_client, value=5)) == 15  # back up to the cap
        assert balance() == 20


class TestBlockIfOutOfPoints:
    @pytest.fixture
    def shop(self, admin, xp, metric, spend):
        admin.metric_trigger(xp, metric, 10)
        admin.metric_trigger(xp, spend, -15, blockIfOutOfPoints=True)
        return xp

    def test_refuses_the_whole_event_and_writes_nothing(
        self, admin, api_client, shop, metric, spend
    ):
        cashback = admin.system("cashback")
        admin.metric_trigger(cashback, spend, 1)
        event(api_client, value=1)
        assert balance() == 10
        events_before = MetricEvent.objects.count()
        awards_before = PointsAward.objects.count()
        body = event(api_client, key="spend", value=1, status=422)
        assert "error" in body
        assert balance() == 10
        assert MetricEvent.objects.count() == events_before
        assert PointsAward.objects.count() == awards_before
        assert not MetricTotal.objects.filter(metric=spend).exists()
        assert balance(system="cashback") == 0
        assert user_points(api_client, system="cashback")["awards"] == []

    def test_a_blocked_newcomer_is_not_created(self, api_client, shop):
        event(api_client, user="newcomer", key="spend", status=422, name="New")
        assert not EndUser.objects.filter(external_id="newcomer").exists()

    def test_allowed_down_to_exactly_zero(self, api_client, shop):
        event(api_client, value=3)
        assert added(event(api_client, key="spend", value=2)) == -30
        assert balance() == 0
        event(api_client, key="spend", value=1, status=422)
        assert balance() == 0

    def test_a_refused_idempotency_key_can_be_used_once_funded(self, api_client, shop):
        event(api_client, key="spend", idempotency_key="buy-1", status=422)
        event(api_client, value=2)
        body = event(api_client, key="spend", idempotency_key="buy-1", status=201)
        assert body["idempotentReplayed"] is False
        assert added(body) == -15
        assert event(api_client, key="spend", idempotency_key="buy-1", status=202)["points"] == {}
        assert balance() == 5

    def test_judged_on_the_events_net_result(self, admin, api_client, xp, spend):
        """An event that earns and spends in one system is refused only when the balance it
        leaves is below zero, whatever the order of the triggers."""
        admin.metric_trigger(xp, spend, -15, blockIfOutOfPoints=True)
        admin.metric_trigger(xp, spend, 10)  # cashback, created after the deduction
        event(api_client, key="spend", status=422)  # 0 - 15 + 10 = -5
        assert not PointsAward.objects.exists()
        admin.trigger(xp, type="user_creation", points=5)
        body = event(api_client, key="spend")  # 5 - 15 + 10 = 0
        assert (added(body), body["points"]["xp"]["total"]) == (0, 0)
        assert sorted(ledger()) == [-15, 5, 10]
        event(api_client, key="spend", status=422)

    def test_other_systems_are_not_blocked_by_a_non_blocking_trigger(
        self, admin, api_client, xp, spend
    ):
        coins = admin.system("coins")
        admin.metric_trigger(coins, spend, -1)
        body = event(api_client, key="spend")
        assert added(body, "coins") == -1


class TestBatchEvents:
    def test_queued_events_award_like_single_ones(
        self, admin, api_client, xp, metric, spend, django_capture_on_commit_callbacks
    ):
        admin.metric_trigger(xp, metric, 10)
        admin.metric_trigger(xp, spend, -15, blockIfOutOfPoints=True)
        batch = [
            {"key": "words", "user": {"id": "u1"}, "value": 2},
            {"key": "spend", "user": {"id": "u1"}, "value": 1},
            {"key": "spend", "user": {"id": "u1"}, "value": 1},  # would go below zero
            {"key": "words", "user": {"id": "u1"}, "value": 1},
            {"key": "words", "user": {"id": "u1"}, "value": 1, "idempotencyKey": "k"},
            {"key": "words", "user": {"id": "u1"}, "value": 1, "idempotencyKey": "k"},
        ]
        with django_capture_on_commit_callbacks(execute=True):
            response = api_client.post("/admin/v1/metrics/events", batch)
        assert response.status_code == 202, response.content
        assert ledger() == [20, -15, 10, 10]
        assert balance() == 25


# =================================================================================================
# Boosts
# =================================================================================================


class TestBoosts:
    def test_a_global_boost_multiplies_and_is_listed_on_the_award(
        self, admin, api_client, xp, metric
    ):
        boost = admin.boost(xp, 2, name="Double")
        admin.metric_trigger(xp, metric, 10)
        with time_machine.travel(at("2026-03-10"), tick=False):
            body = event(api_client)
        award = body["points"]["xp"]["awards"][0]
        assert award["awarded"] == 20
        assert award["boosts"] == [
            {
                "id": boost["id"],
                "name": "Double",
                "status": "active",
                "start": "2020-01-01",
                "end": None,
                "multiplier": 2.0,
                "rounding": "down",
            }
        ]

    def test_stacked_boosts_multiply(self, admin, api_client, xp, metric):
        admin.boost(xp, 2)
        admin.boost(xp, 1.5)
        admin.boost(xp, 3)
        admin.metric_trigger(xp, metric, 10)
        body = event(api_client)
        assert added(body) == 90
        assert len(body["points"]["xp"]["awards"][0]["boosts"]) == 3

    @pytest.mark.parametrize(
        ("roundings", "expected"),
        [
            (("down",), 12),
            (("up",), 13),
            (("nearest",), 13),
            (("up", "down"), 12),
            (("up", "nearest"), 13),
            (("nearest", "down"), 12),
        ],
    )
    def test_rounding_of_the_product(self, admin, api_client, xp, metric, roundings, expected):
        # 10 x 1.25 = 12.5 (a second boost pairs 2 and 0.5 to keep the product).
        admin.boost(xp, 1.25, rounding=roundings[0])
        for mode in roundings[1:]:
            admin.boost(xp, 2, rounding=mode)
            admin.boost(xp, 0.5, rounding=roundings[0])
        admin.metric_trigger(xp, metric, 10)
        assert added(event(api_client)) == expected

    def test_boost_of_several_multiples_is_rounded_once(self, admin, api_client, xp, metric):
        admin.boost(xp, 1.5)
        admin.metric_trigger(xp, metric, 5)
        assert added(event(api_client, value=3)) == 22  # 15 x 1.5 = 22.5

    def test_a_fractional_boost_may_reduce(self, admin, api_client, xp, metric):
        admin.boost(xp, 0.5)
        admin.metric_trigger(xp, metric, 3)
        assert added(event(api_client)) == 1

    def test_date_window_in_the_users_local_time(self, admin, api_client, xp, metric):
        admin.boost(xp, 2, start="2026-03-11", end="2026-03-11")
        admin.metric_trigger(xp, metric, 10)
        tokyo = {"tz": "Asia/Tokyo"}
        new_york = {"tz": "America/New_York"}
        # 16:00 UTC on the 10th: already the 11th in Tokyo, still the 10th in UTC.
        assert added(event(api_client, user="jp", when=at("2026-03-10", 16), **tokyo)) == 20
        assert added(event(api_client, user="utc", when=at("2026-03-10", 16))) == 10
        # 23:30 UTC on the 11th: the 11th in UTC, the 12th in Tokyo.
        assert added(event(api_client, user="utc", when=at("2026-03-11", 23, 30))) == 20
        assert added(event(api_client, user="jp", when=at("2026-03-11", 23, 30))) == 10
        # 03:00 UTC on the 12th: 23:00 on the 11th in New York (the end is inclusive).
        assert added(event(api_client, user="ny", when=at("2026-03-12", 3), **new_york)) == 20
        assert added(event(api_client, user="ny", when=at("2026-03-12", 5))) == 10

    def test_a_user_boost_applies_to_that_user_only(self, admin, api_client, xp, metric):
        admin.metric_trigger(xp, metric, 10)
        event(api_client, user="alice")
        event(api_client, user="bob")
        admin.boost(xp, 3, userId="alice")
        assert added(event(api_client, user="alice")) == 30
        assert added(event(api_client, user="bob")) == 10

    def test_user_and_global_boosts_stack(self, admin, api_client, xp, metric):
        admin.metric_trigger(xp, metric, 10)
        event(api_client, user="alice")
        admin.boost(xp, 3, userId="alice")
        admin.boost(xp, 2)
        assert added(event(api_client, user="alice")) == 60

    def test_attribute_filtered_boosts(self, admin, api_client, xp, metric, plan):
        admin.metric_trigger(xp, metric, 10)
        admin.boost(xp, 2, userAttributes=[ref(plan, "pro")])
        assert added(event(api_client, user="p", user_attributes={"plan": "pro"})) == 20
        assert added(event(api_client, user="f", user_attributes={"plan": "free"})) == 10
        assert added(event(api_client, user="n")) == 10

    def test_finished_and_scheduled_boosts_do_not_apply(self, admin, api_client, xp, metric):
        admin.metric_trigger(xp, metric, 10)
        with time_machine.travel(at("2026-03-10"), tick=False):
            admin.boost(xp, 2, start="2026-03-01", end="2026-03-09")
            admin.boost(xp, 3, start="2026-03-11")
        assert added(event(api_client, when=at("2026-03-10"))) == 10
        assert added(event(api_client, when=at("2026-03-11"))) == 30

    def test_boosts_apply_to_every_trigger_kind(self, admin, api_client, xp, metric, achievements):
        ach = achievements(name="Onboarded", trigger="api", key="onboarded")
        admin.boost(xp, 2)
        admin.trigger(xp, type="user_creation", points=100)
        admin.trigger(xp, type="achievement", points=10, achievementId=ach["id"])
        admin.trigger(xp, type="time", points=1, timeUnit="days", timeInterval=1)
        event(api_client, when=at("2026-03-10"))
        complete(api_client, "onboarded")
        points_time_triggers(at("2026-03-11", 13))
        assert sorted(ledger()) == [2, 20, 200]


class TestBoostReads:
    @pytest.fixture
    def boosts(self, admin, api_client, xp, metric, plan):
        event(api_client, user="alice", user_attributes={"plan": "pro"})
        with time_machine.travel(at("2026-03-10"), tick=False):
            return {
                "active": admin.boost(xp, 2, name="active", start="2026-03-01"),
                "pro": admin.boost(xp, 1.5, name="pro", userAttributes=[ref(plan, "pro")]),
                "basic": admin.boost(xp, 1.5, name="basic", userAttributes=[ref(plan, "basic")]),
                "scheduled": admin.boost(xp, 3, name="scheduled", start="2026-04-01"),
                "finished": admin.boost(xp, 4, name="finished", end="2026-03-09"),
                "mine": admin.boost(xp, 5, name="mine", userId="alice"),
            }

    def _names(self, response):
        assert response.status_code == 200, response.content
        return sorted(b["name"] for b in response.json())

    @time_machine.travel(at("2026-03-10"), tick=False)
    def test_system_boosts_are_the_global_ones(self, api_client, boosts):
        listed = api_client.get("/v1/points/xp/boosts")
        assert self._names(listed) == ["active", "basic", "pro", "scheduled"]
        statuses = {b["name"]: b["status"] for b in listed.json()}
        assert statuses["scheduled"] == "scheduled"
        assert set(listed.json()[0]) == {
            "id",
            "name",
            "status",
            "start",
            "end",
            "multiplier",
            "rounding",
        }
        everything = api_client.get("/v1/points/xp/boosts", {"includeFinished": "true"})
        assert self._names(everything) == ["active", "basic", "finished", "pro", "scheduled"]
        assert self._names(api_client.get("/v1/points/xp/boosts?includeFinished=false")) == [
            "active",
            "basic",
            "pro",
            "scheduled",
        ]

    def test_include_finished_must_be_a_boolean(self, api_client, xp):
        assert api_client.get("/v1/points/xp/boosts?includeFinished=yes").status_code == 422

    @time_machine.travel(at("2026-03-10"), tick=False)
    def test_a_users_boosts_are_the_active_ones_for_them(self, api_client, boosts):
        mine = api_client.get("/v1/users/alice/points/xp/boosts")
        assert self._names(mine) == ["active", "mine", "pro"]
        event(api_client, user="bob")
        assert self._names(api_client.get("/v1/users/bob/points/xp/boosts")) == ["active"]

    def test_unknown_user_or_system(self, api_client, xp, metric):
        event(api_client, user="alice")
        assert api_client.get("/v1/users/ghost/points/xp/boosts").status_code == 404
        assert api_client.get("/v1/users/alice/points/nope/boosts").status_code == 404
        assert api_client.get("/v1/points/nope/boosts").status_code == 404


# =================================================================================================
# Caps and levels
# =================================================================================================


class TestCaps:
    def test_max_points_holds(self, admin, api_client, metric):
        xp = admin.system("xp", maxPoints=25)
        admin.metric_trigger(xp, metric, 10)
        assert [added(event(api_client)) for _ in range(4)] == [10, 10, 5, None]
        assert ledger() == [10, 10, 5]
        assert balance() == 25
        assert user_points(api_client)["maxPoints"] == 25

    def test_boosted_awards_are_capped_after_the_boost(self, admin, api_client, metric):
        xp = admin.system("xp", maxPoints=25)
        admin.boost(xp, 2)
        admin.metric_trigger(xp, metric, 10)
        assert added(event(api_client)) == 20
        assert added(event(api_client)) == 5

    def test_a_lowered_cap_keeps_the_balance_but_stops_awards(self, admin, api_client, metric):
        xp = admin.system("xp")
        admin.metric_trigger(xp, metric, 10)
        event(api_client, value=5)
        admin.update(xp["id"], maxPoints=20)
        assert event(api_client)["points"] == {}
        assert balance() == 50
        admin.update(xp["id"], maxPoints=None)
        assert added(event(api_client)) == 10

    def test_the_cap_holds_across_systems_independently(self, admin, api_client, metric):
        xp = admin.system("xp", maxPoints=5)
        coins = admin.system("coins")
        admin.metric_trigger(xp, metric, 10)
        admin.metric_trigger(coins, metric, 10)
        body = event(api_client)
        assert (added(body, "xp"), added(body, "coins")) == (5, 10)


class TestLevels:
    @pytest.fixture
    def leveled(self, admin, xp, metric, spend):
        admin.level(xp, "silver", 20, name="Silver", description="Two")
        admin.level(xp, "gold", 50, name="Gold")
        admin.metric_trigger(xp, metric, 10)
        admin.metric_trigger(xp, spend, -1)
        return xp

    def test_level_only_when_it_changed(self, api_client, leveled):
        assert "level" not in event(api_client)["points"]["xp"]  # 10
        up = event(api_client)["points"]["xp"]  # 20
        assert up["level"] | {"id": None} == {
            "id": None,
            "key": "silver",
            "name": "Silver",
            "description": "Two",
            "badgeUrl": None,
            "points": 20,
        }
        assert "level" not in event(api_client)["points"]["xp"]  # 30
        assert event(api_client, value=3)["points"]["xp"]["level"]["key"] == "gold"  # 60
        # Down again: the level follows the total.
        assert event(api_client, key="spend", value=15)["points"]["xp"]["level"]["key"] == "silver"
        down = event(api_client, key="spend", value=40)["points"]["xp"]  # 5
        assert "level" in down
        assert down["level"] is None
        assert "level" not in event(api_client, key="spend")["points"]["xp"]  # 4

    def test_thresholds_are_inclusive(self, admin, api_client, xp, metric):
        admin.level(xp, "ten", 10)
        admin.metric_trigger(xp, metric, 10)
        assert event(api_client)["points"]["xp"]["level"]["key"] == "ten"

    def test_a_jump_over_several_levels_reports_the_highest(self, api_client, leveled):
        assert event(api_client, value=7)["points"]["xp"]["level"]["key"] == "gold"

    def test_the_users_current_level(self, api_client, leveled):
        event(api_client, value=3)
        assert user_points(api_client)["level"]["key"] == "silver"
        event(api_client, key="spend", value=25)
        assert user_points(api_client)["level"] is None

    def test_level_reads(self, api_client, leveled):
        levels = api_client.get("/v1/points/xp/levels")
        assert levels.status_code == 200
        assert [(lv["key"], lv["points"]) for lv in levels.json()] == [("silver", 20), ("gold", 50)]
        assert set(levels.json()[0]) == {"id", "key", "name", "description", "badgeUrl", "points"}
        event(api_client, user="a", value=2)
        event(api_client, user="b", value=3)
        event(api_client, user="c", value=6)
        event(api_client, user="d", value=1)
        summary = api_client.get("/v1/points/xp/level-summary")
        assert summary.status_code == 200
        assert [(s["level"]["key"], s["users"]) for s in summary.json()] == [
            ("silver", 2),
            ("gold", 1),
        ]

    def test_level_summary_needs_levels(self, api_client, xp):
        response = api_client.get("/v1/points/xp/level-summary")
        assert response.status_code == 422
        assert "error" in response.json()
        assert api_client.get("/v1/points/xp/levels").json() == []

    def test_a_level_added_later_applies_to_existing_balances(self, admin, api_client, xp, metric):
        admin.metric_trigger(xp, metric, 10)
        event(api_client, value=3)  # 30 points, no levels yet
        admin.level(xp, "silver", 20)
        assert user_points(api_client)["level"]["key"] == "silver"
        summary = api_client.get("/v1/points/xp/level-summary").json()
        assert [(s["level"]["key"], s["users"]) for s in summary] == [("silver", 1)]

    def test_changing_or_deleting_levels_moves_existing_users(self, admin, api_client, xp, metric):
        silver = admin.level(xp, "silver", 20)
        admin.level(xp, "gold", 50)
        admin.metric_trigger(xp, metric, 10)
        assert event(api_client, value=3)["points"]["xp"]["level"]["key"] == "silver"  # 30

        def summary():
            body = api_client.get("/v1/points/xp/level-summary").json()
            return [(s["level"]["key"], s["users"]) for s in body]

        admin.update(silver["id"], xp, "levels", points=40)
        assert user_points(api_client)["level"] is None
        assert summary() == [("silver", 0), ("gold", 0)]
        # The next award reaches the moved threshold: a level change, reported.
        assert event(api_client)["points"]["xp"]["level"]["key"] == "silver"  # 40
        admin.delete([silver["id"]], xp, "levels")
        assert user_points(api_client)["level"] is None
        assert summary() == [("gold", 0)]
        assert event(api_client)["points"]["xp"]["level"]["key"] == "gold"  # 50
        assert summary() == [("gold", 1)]

    def test_a_zero_threshold_level_counts_users_without_points(
        self, admin, api_client, xp, metric
    ):
        admin.level(xp, "starter", 0)
        admin.level(xp, "ten", 10)
        admin.metric_trigger(xp, metric, 10)
        event(api_client, user="a", value=0)
        event(api_client, user="b", value=0)
        event(api_client, user="c", value=1)
        body = api_client.get("/v1/points/xp/level-summary").json()
        assert [(s["level"]["key"], s["users"]) for s in body] == [("starter", 2), ("ten", 1)]

    def test_a_zero_threshold_level_holds_users_with_no_points(self, admin, api_client, xp, metric):
        admin.level(xp, "starter", 0)
        event(api_client)  # the user exists, with no points
        assert user_points(api_client)["level"]["key"] == "starter"


# =================================================================================================
# Idempotency
# =================================================================================================


class TestIdempotentReplay:
    def test_a_replay_never_awards_twice(self, admin, api_client, xp, metric):
        admin.trigger(xp, type="user_creation", points=100)
        admin.metric_trigger(xp, metric, 10)
        first = event(api_client, value=2, idempotency_key="k1", status=201)
        assert added(first) == 120
        for _ in range(3):
            replay = event(api_client, value=2, idempotency_key="k1", status=202)
            assert replay["idempotentReplayed"] is True
            assert replay["points"] == {}
        assert ledger() == [100, 20] or sorted(ledger()) == [20, 100]
        assert balance() == 120
        # A new key is a new event.
        assert added(event(api_client, value=2, idempotency_key="k2", status=201)) == 20

    def test_a_replay_of_an_achievement_completing_event(
        self, admin, api_client, xp, metric, achievements
    ):
        ach = achievements(
            name="Two", trigger="metric", metricId=str(metric.public_id), metricValue=2
        )
        admin.trigger(xp, type="achievement", points=50, achievementId=ach["id"])
        assert added(event(api_client, value=2, idempotency_key="k", status=201)) == 50
        assert event(api_client, value=2, idempotency_key="k", status=202)["points"] == {}
        assert ledger() == [50]


# =================================================================================================
# Application reads
# =================================================================================================


class TestSystemRead:
    def test_system_with_its_active_triggers(self, admin, api_client, metric, plan):
        xp = admin.system(
            "xp",
            name="XP",
            description="Experience",
            badge={"url": "https://x.test/xp.png"},
            maxPoints=1000,
        )
        active = admin.metric_trigger(xp, metric, 5, 2, userAttributes=[ref(plan, "pro")])
        admin.metric_trigger(xp, metric, 7, status="inactive")
        response = api_client.get("/v1/points/xp")
        assert response.status_code == 200
        body = response.json()
        assert "key" not in body
        assert {k: body[k] for k in ("id", "name", "description", "badgeUrl", "maxPoints")} == {
            "id": xp["id"],
            "name": "XP",
            "description": "Experience",
            "badgeUrl": "https://x.test/xp.png",
            "maxPoints": 1000,
        }
        assert len(body["triggers"]) == 1
        trigger = body["triggers"][0]
        assert trigger["id"] == active["id"]
        assert trigger["userAttributes"] == [{"key": "plan", "value": "pro"}]
        assert trigger["metricName"] == "Words"
        for field in ("created", "updated", "status", "points", "type", "metricThreshold"):
            assert field in trigger

    def test_time_units_are_spelled_the_application_way(self, admin, api_client, xp):
        admin.trigger(xp, type="time", points=1, timeUnit="hours", timeInterval=2)
        trigger = api_client.get("/v1/points/xp").json()["triggers"][0]
        assert (trigger["timeUnit"], trigger["timeInterval"]) == ("hour", 2)

    def test_unknown_system_is_404(self, api_client):
        for path in ("", "/levels", "/level-summary", "/summary", "/boosts"):
            response = api_client.get(f"/v1/points/nope{path}")
            assert response.status_code == 404, path
            assert "error" in response.json()

    def test_needs_a_key(self, anon_client, xp):
        assert anon_client.get("/v1/points/xp").status_code == 401


class TestPointsSummary:
    def test_buckets(self, admin, api_client, xp, metric):
        admin.metric_trigger(xp, metric, 100)
        event(api_client, user="zero", value=0)
        event(api_client, user="one", value=1)
        event(api_client, user="five", value=5)
        event(api_client, user="ten", value=10)
        response = api_client.get("/v1/points/xp/summary")
        assert response.status_code == 200
        body = response.json()
        assert body[0] == {"from": 0, "to": 0, "users": 1}
        assert body[1] == {"from": 1, "to": 100, "users": 1}
        assert body[-1] == {"from": 901, "to": 1000, "users": 1}
        assert sum(b["users"] for b in body) == 4
        assert len(body) == 11

    def test_user_attribute_filter(self, admin, api_client, xp, metric, plan):
        admin.metric_trigger(xp, metric, 10)
        event(api_client, user="p1", value=3, user_attributes={"plan": "pro"})
        event(api_client, user="p2", value=0, user_attributes={"plan": "pro"})
        event(api_client, user="f", value=9, user_attributes={"plan": "free"})
        body = api_client.get("/v1/points/xp/summary", {"userAttributes": "plan:pro"}).json()
        assert sum(b["users"] for b in body) == 2
        assert body[0]["users"] == 1
        assert body[-1]["to"] >= 30

    def test_no_users_gives_eleven_empty_ranges(self, api_client, xp):
        ranges = api_client.get("/v1/points/xp/summary").json()
        assert ranges[0] == {"from": 0, "to": 0, "users": 0}
        assert len(ranges) == 11
        assert sum(r["users"] for r in ranges) == 0

    @pytest.mark.parametrize("query", ["userAttributes=plan", "userAttributes=ghost:x"])
    def test_invalid_filters_are_422(self, api_client, xp, plan, query):
        assert api_client.get(f"/v1/points/xp/summary?{query}").status_code == 422


class TestUserPoints:
    def test_newest_awards_first_with_running_totals(self, admin, api_client, xp, metric):
        admin.metric_trigger(xp, metric, 1)
        for day in range(10, 22):
            event(api_client, when=at(f"2026-03-{day}"))
        body = user_points(api_client)
        assert body["total"] == 12
        assert [a["total"] for a in body["awards"]] == list(range(12, 2, -1))
        assert body["awards"][0]["date"] == "2026-03-21T12:00:00Z"
        assert [a["total"] for a in user_points(api_client, awards=3)["awards"]] == [12, 11, 10]
        assert len(user_points(api_client, awards=100)["awards"]) == 12
        assert {k: body[k] for k in ("id", "key", "name", "level", "maxPoints")} == {
            "id": xp["id"],
            "key": "xp",
            "name": "XP",
            "level": None,
            "maxPoints": None,
        }

    def test_a_user_without_points(self, api_client, xp, metric):
        event(api_client)
        body = user_points(api_client)
        assert (body["total"], body["awards"], body["level"]) == (0, [], None)

    @pytest.mark.parametrize("awards", ["0", "101", "-1", "abc", "1.5"])
    def test_invalid_awards_count(self, api_client, xp, metric, awards):
        event(api_client)
        assert api_client.get(f"/v1/users/u1/points/xp?awards={awards}").status_code == 422

    def test_unknown_user_or_system(self, api_client, xp, metric):
        event(api_client)
        assert api_client.get("/v1/users/ghost/points/xp").status_code == 404
        assert api_client.get("/v1/users/u1/points/nope").status_code == 404

    def test_application_keys_see_only_their_user(self, org, anon_client, api_client, xp, metric):
        event(api_client, user="me")
        event(api_client, user="other")
        anon_client.credentials(HTTP_X_API_KEY=org.application_key("me"))
        assert anon_client.get("/v1/users/me/points/xp").status_code == 200
        for path in ("", "/boosts", "/event-summary?aggregation=daily"):
            assert anon_client.get(f"/v1/users/other/points/xp{path}").status_code == 403, path


class TestEventSummary:
    def _summary(self, client, user="u1", **params):
        response = client.get(f"/v1/users/{user}/points/xp/event-summary", params)
        assert response.status_code == 200, response.content
        return [(b["date"], b["total"], b["change"]) for b in response.json()]

    def test_daily_weekly_monthly(self, admin, api_client, xp, metric, spend):
        admin.metric_trigger(xp, metric, 10)
        admin.metric_trigger(xp, spend, -3)
        event(api_client, value=1, when=at("2026-02-27"))
        event(api_client, value=2, when=at("2026-03-02"))
        event(api_client, key="spend", value=1, when=at("2026-03-02", 15))
        event(api_client, value=1, when=at("2026-03-04"))
        daily = self._summary(
            api_client, aggregation="daily", startDate="2026-03-01", endDate="2026-03-04"
        )
        assert daily == [
            ("2026-03-01", 10, 0),
            ("2026-03-02", 27, 17),
            ("2026-03-03", 27, 0),
            ("2026-03-04", 37, 10),
        ]
        monthly = self._summary(
            api_client, aggregation="monthly", startDate="2026-02-01", endDate="2026-03-31"
        )
        assert monthly == [("2026-02-01", 10, 10), ("2026-03-01", 37, 27)]
        weekly = self._summary(
            api_client, aggregation="weekly", startDate="2026-02-27", endDate="2026-03-04"
        )
        assert sum(change for _, _, change in weekly) == 37
        assert weekly[-1][1] == 37

    def test_days_are_the_users_local_days(self, admin, api_client, xp, metric):
        admin.metric_trigger(xp, metric, 10)
        event(api_client, when=at("2026-03-10", 16), tz="Asia/Tokyo")  # the 11th there
        daily = self._summary(
            api_client, aggregation="daily", startDate="2026-03-10", endDate="2026-03-11"
        )
        assert daily == [("2026-03-10", 0, 0), ("2026-03-11", 10, 10)]

    @pytest.mark.parametrize(
        "query",
        [
            "startDate=2026-03-01&endDate=2026-03-02",
            "aggregation=hourly&startDate=2026-03-01&endDate=2026-03-02",
            "aggregation=daily&endDate=2026-03-02",
            "aggregation=daily&startDate=2026-03-01",
            "aggregation=daily&startDate=2026-03-05&endDate=2026-03-02",
            "aggregation=daily&startDate=2024-01-01&endDate=2026-03-02",
            "aggregation=daily&startDate=03/01/2026&endDate=2026-03-02",
        ],
    )
    def test_invalid_queries_are_422(self, api_client, xp, metric, query):
        event(api_client)
        response = api_client.get(f"/v1/users/u1/points/xp/event-summary?{query}")
        assert response.status_code == 422
        assert "error" in response.json()

    def test_unknown_user_or_system(self, api_client, xp, metric):
        event(api_client)
        q = "aggregation=daily&startDate=2026-03-01&endDate=2026-03-02"
        assert api_client.get(f"/v1/users/ghost/points/xp/event-summary?{q}").status_code == 404
        assert api_client.get(f"/v1/users/u1/points/nope/event-summary?{q}").status_code == 404


# =================================================================================================
# Tenant isolation
# =================================================================================================


class TestTenantIsolation:
    def test_systems_are_per_tenant(
        self, admin, other_admin, api_client, other_tenant_client, xp, metric, other_tenant
    ):
        MetricFactory(tenant=other_tenant, key="words")
        bump(other_tenant)
        admin.metric_trigger(xp, metric, 10)
        admin.level(xp, "silver", 5)
        # The other tenant sees nothing of ours...
        assert other_tenant_client.get("/v1/points/xp").status_code == 404
        assert other_admin.get().json() == []
        assert other_admin.get(f"/{xp['id']}").status_code == 404
        assert other_admin.get(system=xp, kind="levels").status_code == 404
        assert (
            other_admin.post([{"name": "L", "key": "l", "points": 1}], xp, "levels").status_code
            == 404
        )
        assert "not found" in other_admin.update_issue(xp["id"], name="Mine")["message"]
        assert other_admin.delete([xp["id"]]).json()["deleted"] == []
        assert PointsSystem.objects.get().name == "XP"
        # ...its events award nothing in our system...
        assert event(other_tenant_client, value=5)["points"] == {}
        assert not PointsAward.objects.exists()
        # ...it may use the same key for its own system...
        theirs = other_admin.system("xp", name="Theirs")
        other_admin.metric_trigger(theirs, other_tenant.metrics.get(key="words"), 1)
        assert added(event(other_tenant_client, user="u2", value=5)) == 5
        assert added(event(api_client, user="u2", value=1)) == 10
        # ...and the same user id is a different user there.
        assert user_points(other_tenant_client, user="u2")["total"] == 5
        assert user_points(api_client, user="u2")["total"] == 10
        assert user_points(other_tenant_client, user="u2")["name"] == "Theirs"

    def test_configuration_refers_only_to_own_objects(
        self, admin, other_admin, api_client, other_tenant_client, other_tenant, metric
    ):
        MetricFactory(tenant=other_tenant, key="words")
        bump(other_tenant)
        theirs = other_admin.system("theirs")
        foreign_attribute = AttributeFactory(tenant=other_tenant, key="plan", type="user")
        xp = admin.system("xp")
        item = {"name": "B", "start": "2026-01-01", "multiplier": 2}
        admin.create_issue(item | {"userAttributes": [ref(foreign_attribute, "x")]}, xp, "boosts")
        event(other_tenant_client, user="stranger")
        admin.create_issue(item | {"userId": "stranger"}, xp, "boosts")
        assert admin.get(system=theirs, kind="triggers").status_code == 404


# =================================================================================================
# Query count
# =================================================================================================


def count_queries(client: Any, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    with CaptureQueriesContext(connection) as ctx:
        body = event(client, **kwargs)
    return len(ctx.captured_queries), body


class TestQueryCount:
    """The event endpoint with five triggers in two systems: bounded, and constant as the
    user's history and the other users grow."""

    @pytest.fixture
    def configured(self, admin, api_client, metric, source, plan, achievements):
        ach = achievements(
            name="Far", trigger="metric", metricId=str(metric.public_id), metricValue=10**9
        )
        configure_streaks(api_client)
        xp = admin.system("xp", maxPoints=10**9)
        coins = admin.system("coins")
        for system in (xp, coins):
            admin.level(system, "one", 10)
            admin.level(system, "two", 10**6)
            admin.boost(system, 1.5)
        admin.metric_trigger(xp, metric, 10)
        admin.metric_trigger(xp, metric, 5, eventAttributes=[ref(source, "web")])
        admin.trigger(xp, type="user_creation", points=100)
        admin.metric_trigger(coins, metric, 1, userAttributes=[ref(plan, "pro")])
        admin.trigger(coins, type="achievement", points=1, achievementId=ach["id"])
        return xp, coins

    def test_bounded_and_independent_of_history(self, api_client, tenant, metric, configured):
        web = {"attributes": {"source": "web"}}
        event(api_client, user="warm", **web)  # fill the configuration snapshots
        event(api_client, user="u0", user_attributes={"plan": "pro"}, **web)
        steady, body = count_queries(api_client, user="u0", **web)
        assert set(body["points"]) == {"xp", "coins"}
        for i in range(30):
            event(api_client, user=f"other-{i}", value=3, **web)
            event(api_client, user="u0", value=2, **web)
        later, body = count_queries(api_client, user="u0", **web)
        assert set(body["points"]) == {"xp", "coins"}
        assert len(body["points"]["xp"]["awards"]) == 2
        assert later == steady
        assert PointsAward.objects.filter(user__external_id="u0").count() > 60
        # Points cost a handful of queries: balances, marks, the filtered total, the ledger
        # insert, one total update and one daily upsert per system and the marks.
        without_points = self._baseline(api_client, tenant)
        assert steady - without_points <= 12, (steady, without_points)

    def _baseline(self, api_client, tenant):
        PointsSystem.objects.update(status="archived")
        bump(tenant)
        web = {"attributes": {"source": "web"}}
        event(api_client, user="u0", **web)
        count, body = count_queries(api_client, user="u0", **web)
        assert body["points"] == {}
        return count

    def test_an_event_paying_nothing_costs_little(self, api_client, tenant, metric, configured):
        event(api_client, user="u0", value=1)  # today's streak extended: the same work after
        quiet, body = count_queries(api_client, user="u0", value=0)
        assert body["points"] == {}
        for _ in range(20):
            event(api_client, user="u0", value=1)
        again, _ = count_queries(api_client, user="u0", value=0)
        assert again == quiet
