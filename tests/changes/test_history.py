"""The change history: every configuration write records who, when, what, before and after, in
the write's transaction; reverting one change goes through the services."""

import importlib
import inspect
import pkgutil
from typing import Any

import pytest

import apps
from apps.accounts.history import recorded
from apps.accounts.models import ConfigChange
from apps.changes import services
from apps.core.errors import ValidationError
from apps.metrics.models import Metric
from tests.changes.support import admin_client, configure, created

# Public functions of configuration modules that write nothing (checks shared with other
# writes): the only ones allowed to go without `recorded`.
NOT_WRITES = {
    "apps.streaks.configuration.conditions_check",
    "apps.users.configuration.attribute_refs_check",
    "apps.webhooks.configuration.url_check",
    "apps.notifications.configuration.defaults_seed_once",  # records what `make` writes
    "apps.notifications.configuration.email_templates_seed",  # through defaults_seed_once
    "apps.notifications.push.configuration.push_templates_seed",
    "apps.notifications.configuration.defaults_claimed",  # bookkeeping: no template changes
    "apps.leagues.configuration.league_settings_stored",
    "apps.quests.configuration.quest_settings_stored",
    "apps.quests.configuration.pool_settings_stored",
    "apps.points.configuration.archive.system_writable",
    "apps.points.configuration.levels.levels_recompute",
}


def _configuration_modules() -> list[Any]:
    found = []
    for info in pkgutil.walk_packages(apps.__path__, "apps."):
        if info.name.endswith(".configuration") or ".configuration." in info.name:
            found.append(importlib.import_module(info.name))
    return found


def test_every_configuration_write_is_recorded() -> None:
    """A new write in any app's configuration module fails here until it is `recorded` (or, if
    it writes nothing, named in NOT_WRITES)."""
    modules = _configuration_modules()
    assert len(modules) >= 12
    unrecorded = [
        f"{module.__name__}.{name}"
        for module in modules
        for name, function in vars(module).items()
        if inspect.isfunction(function)
        and function.__module__ == module.__name__
        and not name.startswith("_")
        and not hasattr(function, "records")
        and f"{module.__name__}.{name}" not in NOT_WRITES
    ]
    assert unrecorded == []


def test_a_write_outside_a_recording_fails_in_the_suite(tenant: Any) -> None:
    from apps.accounts.services import tenant_config_changed

    with pytest.raises(AssertionError, match="outside a recorded write"):
        tenant_config_changed(tenant)


def test_an_admin_api_write_records_key_before_and_after(org: Any, tenant: Any) -> None:
    client = admin_client(org)
    metric = created(client.post("/admin/v1/metrics", [{"name": "Words", "key": "words"}]))
    response = client.patch("/admin/v1/metrics", [{"id": metric["id"], "name": "Words typed"}])
    assert response.status_code == 200
    first, second = ConfigChange.objects.filter(tenant=tenant, kind="metric").order_by("id")
    assert (first.action, first.before, first.after["name"]) == ("created", None, "Words")
    assert second.action == "changed"
    assert second.before == {"name": "Words", "key": "words", "unitType": "number", "units": ""}
    assert second.after == {**second.before, "name": "Words typed"}
    assert (second.actor_kind, second.source) == ("api_key", "api")
    assert second.api_key_id is not None
    assert second.actor
    assert "id" not in second.after  # keys, never database ids


def test_a_refused_write_records_nothing(org: Any, tenant: Any) -> None:
    client = admin_client(org)
    created(client.post("/admin/v1/metrics", [{"name": "Words", "key": "words"}]))
    before = ConfigChange.objects.count()
    response = client.post("/admin/v1/metrics", [{"name": "Again", "key": "words"}])
    assert response.json()["issues"]
    assert ConfigChange.objects.count() == before


def test_a_write_that_takes_others_along_records_each(org: Any, tenant: Any) -> None:
    """Deleting a metric takes its points trigger along: both objects are in the change."""
    client = admin_client(org)
    ids = configure(client)
    Metric.objects.filter(public_id=ids["words"])  # exists
    response = client.delete(f"/admin/v1/metrics?ids={ids['words']}&confirm=words", format="json")
    body = response.json()
    if body.get("issues"):
        pytest.skip(f"the metric cannot be deleted here: {body['issues']}")
    last = ConfigChange.objects.filter(tenant=tenant).latest("id")
    group = ConfigChange.objects.filter(group=last.group)
    kinds = {(change.kind, change.action) for change in group}
    assert ("metric", "deleted") in kinds
    assert len(kinds) > 1


def test_tenants_have_their_own_history(org: Any, tenant: Any, other_tenant: Any) -> None:
    created(admin_client(org, other_tenant).post("/admin/v1/metrics", [{"name": "W", "key": "w"}]))
    assert not ConfigChange.objects.filter(tenant=tenant, kind="metric").exists()
    assert ConfigChange.objects.filter(tenant=other_tenant, kind="metric").count() == 1


# --- revert ------------------------------------------------------------------------------------


def _last(tenant: Any, kind: str, key: str) -> ConfigChange:
    return ConfigChange.objects.filter(tenant=tenant, kind=kind, key=key).latest("id")


def test_reverting_a_change_restores_the_fields_through_the_services(org: Any, tenant: Any) -> None:
    client = admin_client(org)
    metric = created(client.post("/admin/v1/metrics", [{"name": "Words", "key": "words"}]))
    client.patch("/admin/v1/metrics", [{"id": metric["id"], "name": "Words typed"}])
    change = _last(tenant, "metric", "words")
    applied = services.change_revert(change)
    assert Metric.objects.get(tenant=tenant, key="words").name == "Words"
    change.refresh_from_db()
    assert change.reverted_by is not None
    assert change.reverted_by.source == "revert"
    assert [c.action for c in applied.changes] == ["changed"]
    with pytest.raises(ValidationError, match="already reverted"):
        services.change_revert(change)


def test_reverting_a_creation_deletes_and_a_deletion_recreates(org: Any, tenant: Any) -> None:
    client = admin_client(org)
    metric = created(client.post("/admin/v1/metrics", [{"name": "Words", "key": "words"}]))
    creation = _last(tenant, "metric", "words")
    client.delete(f"/admin/v1/metrics?ids={metric['id']}")
    deletion = _last(tenant, "metric", "words")
    assert deletion.action == "deleted"
    services.change_revert(deletion)
    assert Metric.objects.get(tenant=tenant, key="words").name == "Words"
    # The creation's object is back in the state it created: reverting it deletes it.
    services.change_revert(creation)
    assert not Metric.objects.filter(tenant=tenant, key="words").exists()


def test_a_revert_is_refused_when_the_object_changed_since(org: Any, tenant: Any) -> None:
    client = admin_client(org)
    metric = created(client.post("/admin/v1/metrics", [{"name": "Words", "key": "words"}]))
    client.patch("/admin/v1/metrics", [{"id": metric["id"], "name": "Second"}])
    first = _last(tenant, "metric", "words")
    client.patch("/admin/v1/metrics", [{"id": metric["id"], "name": "Third"}])
    with pytest.raises(ValidationError, match=r"changed since.*revert that change first"):
        services.change_revert(first)
    assert Metric.objects.get(tenant=tenant, key="words").name == "Third"


def test_a_revert_the_services_refuse_says_why_and_writes_nothing(org: Any, tenant: Any) -> None:
    """The metric's creation cannot be undone while an achievement counts it."""
    client = admin_client(org)
    ids = configure(client)
    creation = ConfigChange.objects.get(tenant=tenant, kind="metric", key="words")
    count = ConfigChange.objects.count()
    with pytest.raises(ValidationError, match="Cannot remove metric 'words'"):
        services.change_revert(creation)
    assert Metric.objects.filter(public_id=ids["words"]).exists()
    assert ConfigChange.objects.count() == count


def test_recorded_marks_the_function() -> None:
    @recorded("metric")
    def write(tenant: Any) -> None: ...

    assert write.records == ("metric",)  # type: ignore[attr-defined]


def test_a_change_that_renames_an_object_is_one_change_and_reverts(org: Any, tenant: Any) -> None:
    """A trigger is named by what fires it: its threshold changed is one change of the
    trigger under its new name, and reverting it puts the threshold back."""
    client = admin_client(org)
    ids = configure(client)
    triggers = client.get(f"/admin/v1/points/{ids['xp']}/triggers").json()
    metric_trigger = next(t for t in triggers if t["type"] == "metric")
    response = client.patch(
        f"/admin/v1/points/{ids['xp']}/triggers",
        [{"id": metric_trigger["id"], "metricThreshold": 20}],
    )
    assert response.json()["issues"] == []
    change = ConfigChange.objects.filter(tenant=tenant, kind="points_trigger").latest("id")
    assert (change.action, change.key) == ("changed", "xp/metric:words:20")
    assert (change.before["metricThreshold"], change.after["metricThreshold"]) == (10, 20)
    services.change_revert(change)
    again = client.get(f"/admin/v1/points/{ids['xp']}/triggers").json()
    assert next(t for t in again if t["type"] == "metric")["metricThreshold"] == 10
