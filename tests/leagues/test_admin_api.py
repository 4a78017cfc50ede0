"""League configuration through the admin extension API (/admin/ext/v1/leagues): the bulk
conventions, the declaration's rules as issues, and tenant isolation."""

import datetime as dt
import json
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.leagues.models import League
from apps.metrics.models import Metric
from apps.points.models import PointsSystem
from tests.admin_issues import admin_issue

pytestmark = pytest.mark.django_db

ADMIN = "/admin/ext/v1/leagues"
MONDAY = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)
TIERS = [
    {"name": "Bronze", "promote": 2, "demote": 0},
    {"name": "Silver", "promote": 2, "demote": 2},
    {"name": "Gold", "promote": 0, "demote": 2},
]


def league_body(metric: Metric, **fields: Any) -> dict[str, Any]:
    return {
        "name": "Weekly",
        "key": "weekly",
        "scoreBy": "metric",
        "metricId": str(metric.public_id),
        **fields,
    }


def create(client: Any, *items: dict[str, Any]) -> Any:
    return client.post(ADMIN, list(items))


def created_one(client: Any, item: dict[str, Any]) -> dict[str, Any]:
    response = create(client, item)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["issues"] == [], body
    return dict(body["created"][0])


def refused(client: Any, item: dict[str, Any]) -> str:
    response = create(client, item)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["created"] == []
    [issue] = body["issues"]
    assert issue["index"] == 0
    return str(issue["message"])


def update(client: Any, league_id: str, **fields: Any) -> dict[str, Any]:
    response = client.patch(ADMIN, [{"id": league_id, **fields}])
    assert response.status_code == 200, response.content
    return dict(response.json())


def test_a_league_is_created_with_the_defaults_and_read_back(api_client: Any, metric: Metric):
    body = created_one(api_client, league_body(metric, description="Seven days of words"))

    assert body["key"] == "weekly"
    assert body["status"] == "inactive"
    assert body["scoreBy"] == "metric"
    assert body["metricId"] == str(metric.public_id)
    assert body["pointsSystemId"] is None
    assert (body["weekEndsOn"], body["weekEndsAt"]) == ("sunday", "24:00")
    assert body["cohortSize"] == 30
    assert [t["name"] for t in body["tiers"]][:3] == ["Bronze", "Silver", "Gold"]
    assert len(body["tiers"]) == 10
    assert body["tiers"][0] == {"name": "Bronze", "promote": 7, "demote": 0}
    assert body["tiers"][-1] == {"name": "Diamond", "promote": 0, "demote": 5}
    assert (body["zoneUnit"], body["idle"], body["absent"]) == ("count", "demote", "keep")
    assert body["rewards"] == []
    assert body["userAttributes"] == []
    assert api_client.get(f"{ADMIN}/{body['id']}").json() == body
    assert api_client.get(ADMIN).json() == [body]


def test_every_setting_is_stored_as_the_declaration_names_it(
    api_client: Any, tenant: Tenant, metric: Metric
):
    system = PointsSystem.objects.create(tenant=tenant, key="xp", name="XP")
    body = created_one(
        api_client,
        league_body(
            metric,
            status="active",
            weekEndsOn="friday",
            weekEndsAt="18:30",
            cohortSize=20,
            tiers=TIERS,
            zoneUnit="percent",
            idle="leave",
            absent="demote",
            rewards=[
                {"fromPlace": 1, "points": 50, "pointsSystemId": str(system.public_id)},
                {
                    "fromPlace": 2,
                    "toPlace": 3,
                    "tier": "Gold",
                    "points": 10,
                    "pointsSystemId": str(system.public_id),
                },
            ],
        ),
    )

    league = League.objects.get(public_id=body["id"])
    assert (league.week_ends_on, league.week_ends_at, league.cohort_size) == ("friday", 1110, 20)
    assert league.tiers == TIERS
    assert (league.zone_unit, league.idle, league.absent) == ("percent", "leave", "demote")
    assert league.rewards[1] == {
        "from_place": 2,
        "to_place": 3,
        "tier": "Gold",
        "points": 10,
        "points_system_id": str(system.public_id),
        "achievement_id": None,
    }
    assert body["weekEndsAt"] == "18:30"
    assert body["rewards"][0] == {
        "fromPlace": 1,
        "toPlace": 1,
        "tier": None,
        "points": 50,
        "pointsSystemId": str(system.public_id),
        "achievementId": None,
    }


def test_a_points_league_names_its_system(api_client: Any, tenant: Tenant):
    system = PointsSystem.objects.create(tenant=tenant, key="xp", name="XP")
    body = created_one(
        api_client,
        {
            "name": "XP week",
            "key": "xp-week",
            "scoreBy": "points",
            "pointsSystemId": str(system.public_id),
        },
    )
    assert (body["metricId"], body["pointsSystemId"]) == (None, str(system.public_id))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"weekEndsAt": "25:00"}, "weekEndsAt: must be HH:MM, from 00:00 to 24:00"),
        ({"weekEndsAt": "7:00"}, "weekEndsAt: must be HH:MM, from 00:00 to 24:00"),
        ({"cohortSize": 4}, "cohortSize: Ensure this value is greater than or equal to 5."),
        ({"cohortSize": 101}, "cohortSize: Ensure this value is less than or equal to 100."),
        ({"metricId": None}, "metricId is required to score by a metric"),
        ({"weekEndsOn": "sun"}, 'weekEndsOn: "sun" is not a valid choice.'),
        ({"tierz": []}, "tierz: unknown field"),
    ],
)
def test_settings_out_of_their_rules_are_issues(
    api_client: Any, metric: Metric, fields: dict[str, Any], message: str
):
    assert refused(api_client, league_body(metric, **fields)) == message
    assert not League.objects.exists()


def test_an_unknown_metric_is_an_issue(api_client: Any, metric: Metric):
    unknown = "00000000-0000-4000-8000-000000000000"
    assert refused(api_client, league_body(metric, metricId=unknown)) == (
        "metricId: Metric not found by ID"
    )


@pytest.mark.parametrize(
    ("tiers", "message"),
    [
        (
            [{"name": "Bronze", "promote": 1, "demote": 0}, {"name": "Gold", "promote": 1}],
            "tiers: the top tier promotes nobody and the lowest demotes nobody",
        ),
        (
            [{"name": "Bronze", "promote": 0, "demote": 1}],
            "tiers: the top tier promotes nobody and the lowest demotes nobody",
        ),
        (
            [{"name": "Gold", "promote": 1}, {"name": "Gold", "demote": 1}],
            "tiers: tier names must differ",
        ),
        ([{"name": "", "promote": 0}], "tiers.0.name: This field may not be blank."),
        (
            [{"name": "Gold", "demote": -1}],
            "tiers.0.demote: Ensure this value is greater than or equal to 0.",
        ),
        (
            [{"name": f"T{i}"} for i in range(21)],
            "tiers: Ensure this field has no more than 20 elements.",
        ),
    ],
)
def test_tiers_out_of_their_rules_are_issues(
    api_client: Any, metric: Metric, tiers: list[dict[str, Any]], message: str
):
    assert refused(api_client, league_body(metric, tiers=tiers)) == message


def test_a_reward_names_a_tier_of_the_league_and_pays_something(
    api_client: Any, tenant: Tenant, metric: Metric
):
    system = PointsSystem.objects.create(tenant=tenant, key="xp", name="XP")
    paid = {"points": 5, "pointsSystemId": str(system.public_id)}
    assert (
        refused(
            api_client, league_body(metric, rewards=[{"fromPlace": 1, "tier": "Platinum", **paid}])
        )
        == "rewards: no tier named Platinum"
    )
    assert refused(api_client, league_body(metric, rewards=[{"fromPlace": 1}])) == (
        "rewards: a reward pays points or completes an achievement"
    )
    assert refused(api_client, league_body(metric, rewards=[{"fromPlace": 1, "points": 5}])) == (
        "rewards: a reward's points need a points system"
    )
    assert (
        refused(api_client, league_body(metric, rewards=[{"fromPlace": 3, "toPlace": 2, **paid}]))
        == "rewards: a reward's last place must not be before its first"
    )


def test_an_update_changes_what_it_is_given(api_client: Any, metric: Metric):
    league = created_one(api_client, league_body(metric, tiers=TIERS))
    body = update(api_client, league["id"], name="Weekly words", cohortSize=10, description=None)

    assert body["issues"] == []
    [updated] = body["updated"]
    assert (updated["name"], updated["cohortSize"], updated["description"]) == (
        "Weekly words",
        10,
        None,
    )
    assert updated["tiers"] == TIERS
    assert updated["key"] == "weekly"


def test_an_active_league_keeps_what_its_weeks_are_made_of(
    api_client: Any, tenant: Tenant, metric: Metric
):
    other = Metric.objects.create(tenant=tenant, key="minutes", name="Minutes")
    league = created_one(api_client, league_body(metric, status="active", tiers=TIERS))

    body = update(api_client, league["id"], metricId=str(other.public_id), weekEndsAt="12:00")
    assert body["updated"] == []
    assert body["issues"] == [
        admin_issue(
            "metricId and weekEndsAt can only change while the league is inactive",
            id=league["id"],
        )
    ]
    body = update(api_client, league["id"], tiers=TIERS[:2])
    assert body["issues"][0]["message"] == (
        "tiers: the number of tiers can only change while the league is inactive"
    )
    # Resending the stored values is no change; renaming a tier is allowed.
    renamed = [dict(TIERS[0], name="Copper"), *TIERS[1:]]
    body = update(
        api_client, league["id"], metricId=str(metric.public_id), weekEndsAt="24:00", tiers=renamed
    )
    assert body["issues"] == []
    assert body["updated"][0]["tiers"][0]["name"] == "Copper"
    # Inactive again, it may change.
    update(api_client, league["id"], status="inactive")
    body = update(api_client, league["id"], metricId=str(other.public_id))
    assert body["updated"][0]["metricId"] == str(other.public_id)


def test_a_key_is_unique_in_a_tenant(api_client: Any, metric: Metric):
    created_one(api_client, league_body(metric))
    assert refused(api_client, league_body(metric)) == "Key already in use by another league"


def test_a_body_that_is_not_a_list_is_refused_whole(api_client: Any, metric: Metric):
    response = api_client.post(ADMIN, league_body(metric))
    assert response.status_code == 422
    assert response.json() == {"error": "body must be a JSON array of objects"}


def test_a_league_that_never_ran_is_deleted_one_with_history_is_archived_instead(
    api_client: Any, metric: Metric
):
    kept = created_one(api_client, league_body(metric, status="active", tiers=TIERS))
    gone = created_one(api_client, league_body(metric, key="gone"))
    with time_machine.travel(MONDAY, tick=False):
        sent = api_client.post(
            f"/v1/metrics/{metric.key}/event", {"user": {"id": "u1"}, "value": 3}
        )
    assert sent.status_code == 201

    response = api_client.delete(f"{ADMIN}?ids={kept['id']}&ids={gone['id']}")
    assert response.status_code == 200
    assert response.json() == {
        "deleted": [{"id": gone["id"]}],
        "issues": [
            admin_issue("A league with history cannot be deleted: archive it", id=kept["id"])
        ],
    }
    assert update(api_client, kept["id"], status="archived")["updated"][0]["status"] == "archived"
    assert [lg["key"] for lg in api_client.get(ADMIN).json()] == ["weekly"]


def test_another_tenants_league_is_not_found(
    api_client: Any, other_tenant_client: Any, metric: Metric
):
    league = created_one(api_client, league_body(metric))

    assert other_tenant_client.get(ADMIN).json() == []
    assert other_tenant_client.get(f"{ADMIN}/{league['id']}").status_code == 404
    body = other_tenant_client.patch(ADMIN, [{"id": league["id"], "name": "Mine"}]).json()
    assert body["issues"] == [admin_issue("League not found by ID", id=league["id"])]
    body = other_tenant_client.delete(f"{ADMIN}?ids={league['id']}").json()
    assert body["issues"] == [admin_issue("League not found by ID", id=league["id"])]
    # Nor can it score by another tenant's metric.
    assert refused(other_tenant_client, league_body(metric)) == "metricId: Metric not found by ID"
    assert League.objects.get().name == "Weekly"


def test_an_application_key_cannot_configure_leagues(org: Any, metric: Metric):
    from tests.conftest import Client

    client = Client()
    client.credentials(HTTP_X_API_KEY=org.application_key("u1"))
    assert client.get(ADMIN).status_code == 403
    assert client.post(ADMIN, [league_body(metric)]).status_code == 403
    assert not League.objects.exists()


def test_the_admin_extension_document_describes_the_collection(anon_client: Any):
    document = json.loads(anon_client.get("/admin/ext/v1/openapi").content)
    assert document["servers"] == [{"url": "/admin/ext/v1"}]
    assert document["info"]["title"] == "gamify extensions: admin API"
    leagues = {"/leagues", "/leagues/{object_id}"}
    assert leagues <= set(document["paths"])  # beside the other extensions' routes
    paths = document["paths"]
    operations = {op["operationId"] for path in leagues for op in paths[path].values()}
    assert operations == {
        "admin_leagues_list",
        "admin_leagues_create",
        "admin_leagues_update",
        "admin_leagues_delete",
        "admin_leagues_get",
    }
    assert anon_client.get("/admin/ext/v1/docs").status_code == 200


def test_an_unknown_admin_extension_route_is_the_json_404(api_client: Any):
    response = api_client.post("/admin/ext/v1/nope", [])
    assert response.status_code == 404
    assert set(response.json()) == {"error"}


def test_the_document_states_the_limits_the_api_enforces(anon_client: Any):
    import re

    from apps.core.errors import ValidationError
    from apps.leagues.domain import minutes_parse

    schemas = json.loads(anon_client.get("/admin/ext/v1/openapi").content)["components"]
    request = schemas["schemas"]["LeagueCreateRequest"]["properties"]
    assert (request["cohortSize"]["minimum"], request["cohortSize"]["maximum"]) == (5, 100)
    assert request["tiers"]["maxItems"] == 20
    assert request["rewards"]["maxItems"] == 100
    pattern = re.compile(request["weekEndsAt"]["pattern"])
    for hours in range(30):
        for minutes in range(0, 100, 7):
            text = f"{hours:02d}:{minutes:02d}"
            try:
                minutes_parse(text)
                parsed = True
            except ValidationError:
                parsed = False
            assert bool(pattern.match(text)) == parsed, text
    tier = schemas["schemas"]["LeagueTierRequest"]["properties"]
    assert (tier["name"]["minLength"], tier["name"]["maxLength"]) == (1, 100)


def test_a_null_attribute_reference_is_an_issue_not_a_500(api_client: Any, metric: Metric):
    message = refused(api_client, league_body(metric, userAttributes=[None]))
    assert message == "userAttributes.0: This field may not be null."
