"""The configuration routes of the admin extension API: history and revert, the file, diff,
promote and clone, as a customer's CI and tools call them."""

from typing import Any

import pytest
import yaml

from apps.accounts.models import ConfigChange, Environment
from apps.accounts.services import api_key_create_admin, environment_create
from apps.achievements.models import Achievement
from apps.metrics.models import Metric
from tests.changes.support import admin_client, configure, created
from tests.conftest import Client

H = "/admin/ext/v1"


@pytest.fixture
def staging(org: Any) -> tuple[Environment, Client]:
    environment = environment_create(org.organization, name="Staging", key="staging", priority=2)
    _, key = api_key_create_admin(environment)
    client = Client()
    client.credentials(HTTP_X_API_KEY=key)
    return environment, client


def test_history_lists_reads_and_reverts(org: Any, tenant: Any) -> None:
    client = admin_client(org)
    metric = created(client.post("/admin/v1/metrics", [{"name": "Words", "key": "words"}]))
    client.patch("/admin/v1/metrics", [{"id": metric["id"], "name": "Words typed"}])
    listed = client.get(f"{H}/history?kind=metric&key=words").json()
    assert [c["action"] for c in listed] == ["changed", "created"]
    newest = listed[0]
    assert newest["actor"]["kind"] == "api_key"
    assert newest["before"]["name"] == "Words"
    assert newest["after"]["name"] == "Words typed"
    assert client.get(f"{H}/history/{newest['id']}").json() == newest
    response = client.post(f"{H}/history/{newest['id']}/revert")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["reverted"]["revertedBy"] == body["changes"][0]["id"]
    assert body["changes"][0]["source"] == "revert"
    assert Metric.objects.get(tenant=tenant, key="words").name == "Words"
    again = client.post(f"{H}/history/{newest['id']}/revert")
    assert again.status_code == 422
    assert "already reverted" in again.json()["error"]


def test_history_pages_and_bad_parameters(org: Any, tenant: Any) -> None:
    client = admin_client(org)
    for index in range(3):
        created(client.post("/admin/v1/metrics", [{"name": f"M{index}", "key": f"m{index}"}]))
    page = client.get(f"{H}/history?kind=metric&limit=2&skip=1").json()
    assert [c["key"] for c in page] == ["m1", "m0"]
    assert client.get(f"{H}/history?limit=0").status_code == 422
    assert client.get(f"{H}/history/not-a-uuid").status_code == 404
    assert (
        client.post(f"{H}/history/5a4e7a38-2f37-4f3c-9a39-5d5b8c3f0e11/revert").status_code == 404
    )


def test_another_tenants_change_is_not_found(org: Any, tenant: Any, other_tenant: Any) -> None:
    created(admin_client(org, other_tenant).post("/admin/v1/metrics", [{"name": "W", "key": "w"}]))
    change = ConfigChange.objects.get(tenant=other_tenant, kind="metric")
    assert admin_client(org).get(f"{H}/history/{change.public_id}").status_code == 404


def test_config_export_then_apply_as_yaml_with_a_dry_run(
    org: Any, tenant: Any, other_tenant: Any
) -> None:
    configure(admin_client(org))
    doc = admin_client(org).get(f"{H}/config").json()
    assert doc["gamify"] == 1
    assert doc["metrics"]["words"]["name"] == "Words"
    target = admin_client(org, other_tenant)
    text = yaml.safe_dump(doc)
    dry = target.generic(
        "POST", f"{H}/config/apply?dryRun=true", text, content_type="application/yaml"
    )
    assert dry.status_code == 200, dry.json()
    assert dry.json()["dryRun"] is True
    creates = {step["ref"] for step in dry.json()["steps"] if step["action"] == "create"}
    assert "metric:words" in creates
    assert not Metric.objects.filter(tenant=other_tenant).exists()
    done = target.post(f"{H}/config/apply", doc)
    assert done.status_code == 200, done.json()
    assert done.json()["changes"]
    assert Metric.objects.filter(tenant=other_tenant, key="words").exists()
    assert target.post(f"{H}/config/apply", doc).json()["steps"] == []


def test_config_apply_refuses_what_the_schema_refuses(org: Any, tenant: Any) -> None:
    client = admin_client(org)
    response = client.post(f"{H}/config/apply", {"gamify": 1, "metrics": {"w": {"nam": "W"}}})
    assert response.status_code == 422
    assert "metrics/w" in response.json()["error"]
    bad_yaml = client.generic("POST", f"{H}/config/apply", "a: [b", content_type="application/yaml")
    assert bad_yaml.status_code == 422
    assert client.post(f"{H}/config/apply", [1, 2]).status_code == 422
    assert client.get(f"{H}/config/schema").json()["title"] == "gamify configuration"


def test_diff_and_promote_between_environments(org: Any, tenant: Any, staging: Any) -> None:
    _, staging_client = staging
    configure(staging_client)
    client = admin_client(org)  # production's key
    diff = client.get(f"{H}/config/diff?fromEnvironment=staging")
    assert diff.status_code == 200, diff.json()
    body = diff.json()
    assert body["from"] == {"environment": "staging", "tenant": None}
    assert body["to"] == {"environment": "production", "tenant": None}
    refs = [step["ref"] for step in body["steps"]]
    assert "metric:words" in refs
    assert "achievement:Writer" in refs
    # Promote the metric only, then the rest.
    first = client.post(
        f"{H}/config/promote", {"fromEnvironment": "staging", "changes": ["metric:words"]}
    )
    assert first.status_code == 200, first.json()
    assert [c["key"] for c in first.json()["changes"]] == ["words"]
    assert first.json()["changes"][0]["source"] == "promote"
    assert not Achievement.objects.filter(tenant=tenant).exists()
    rest = client.post(f"{H}/config/promote", {"fromEnvironment": "staging"})
    assert rest.status_code == 200, rest.json()
    assert client.get(f"{H}/config/diff?fromEnvironment=staging").json()["steps"] == []


def test_a_diff_shows_changes_field_by_field(org: Any, tenant: Any, staging: Any) -> None:
    _, staging_client = staging
    configure(staging_client)
    client = admin_client(org)
    client.post(f"{H}/config/promote", {"fromEnvironment": "staging"})
    writer = staging_client.get("/admin/v1/achievements").json()
    writer_id = next(a["id"] for a in writer if a["name"] == "Writer")
    staging_client.patch("/admin/v1/achievements", [{"id": writer_id, "metricValue": 300}])
    steps = client.get(f"{H}/config/diff?fromEnvironment=staging").json()["steps"]
    assert steps == [
        {
            "action": "change",
            "kind": "achievement",
            "key": "Writer",
            "ref": "achievement:Writer",
            "removal": None,
            "fields": [{"name": "metricValue", "from": 100, "to": 300}],
        }
    ]


def test_promote_is_all_or_nothing(org: Any, tenant: Any, staging: Any) -> None:
    _, staging_client = staging
    configure(staging_client)
    client = admin_client(org)
    # Production has a metric "words" that is a currency: the promote's change of it is fine,
    # but an unknown step name is refused before anything is written.
    response = client.post(
        f"{H}/config/promote",
        {"fromEnvironment": "staging", "changes": ["metric:words", "metric:nope"]},
    )
    assert response.status_code == 422
    assert "metric:nope" in response.json()["error"]
    assert not Metric.objects.filter(tenant=tenant).exists()


def test_promote_between_tenants_of_one_environment(
    org: Any, tenant: Any, other_tenant: Any
) -> None:
    configure(admin_client(org))
    target = admin_client(org, other_tenant)
    response = target.post(f"{H}/config/promote", {})  # from the default tenant
    assert response.status_code == 200, response.json()
    assert Metric.objects.filter(tenant=other_tenant, key="words").exists()
    assert target.get(f"{H}/config/diff").json()["steps"] == []


def test_sources_outside_the_organization_are_not_found(org: Any, tenant: Any) -> None:
    from tests.factories import OrganizationWithKey

    stranger = OrganizationWithKey("Stranger")
    environment_create(stranger.organization, name="Staging", key="elsewhere", priority=2)
    client = admin_client(org)
    assert client.get(f"{H}/config/diff?fromEnvironment=elsewhere").status_code == 404
    assert client.get(f"{H}/config/diff?fromTenant=nobody").status_code == 404


def test_clone_makes_an_environment_with_the_configuration(org: Any, tenant: Any) -> None:
    configure(admin_client(org))
    client = admin_client(org)
    response = client.post(f"{H}/environments", {"name": "Staging", "key": "staging"})
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["environment"]["production"] is False
    assert body["changes"] > 5
    cloned = Client()
    cloned.credentials(HTTP_X_API_KEY=body["apiKey"])
    assert cloned.get(f"{H}/config/diff?fromEnvironment=production").json()["steps"] == []
    keys = [e["key"] for e in client.get(f"{H}/environments").json()]
    assert keys == ["production", "staging"]
    again = client.post(f"{H}/environments", {"name": "Again", "key": "staging"})
    assert again.status_code == 422
    assert client.post(f"{H}/environments", {"name": "Bad", "key": "no spaces"}).status_code == 422


def test_application_keys_are_refused(org: Any, tenant: Any) -> None:
    key = org.application_key("u1")
    client = Client()
    client.credentials(HTTP_X_API_KEY=key)
    assert client.get(f"{H}/history").status_code == 403
    assert client.post(f"{H}/config/promote", {}).status_code == 403


def test_empty_sources_mean_the_defaults(org: Any, tenant: Any) -> None:
    """As the document allows them: an empty fromEnvironment or fromTenant is the default."""
    client = admin_client(org)
    response = client.get(f"{H}/config/diff?fromEnvironment=&fromTenant=")
    assert response.status_code == 200, response.json()
    assert response.json()["steps"] == []


def test_a_source_named_with_control_characters_is_not_found(org: Any, tenant: Any) -> None:
    client = admin_client(org)
    assert client.get(f"{H}/config/diff?fromEnvironment=a%03b").status_code == 404
