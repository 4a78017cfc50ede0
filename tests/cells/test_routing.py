"""Every request, task and periodic job runs in its organization's cell; the directory follows
the keys (apps/cells)."""

import datetime as dt
from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.accounts.models import ApiKey, Organization
from apps.accounts.services import api_key_create_admin, api_key_delete, organization_create
from apps.cells.models import KeyEntry, Placement
from apps.core import periodic
from apps.core.cells import CellSwitchError, current_cell, using_cell
from apps.core.models import PeriodicJobRun
from apps.metrics.models import MetricEvent, MetricTotal
from apps.pipeline.models import QueuedEvent
from tests.broker import redis_up, worker_through
from tests.cells.conftest import CELL, needs_cell2
from tests.factories import MetricFactory, bump

pytestmark = needs_cell2


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=key)
    return client


def organization_in_cell2(name: str = "Beta") -> Any:
    created = organization_create(name, cell=CELL)
    with using_cell(CELL):
        MetricFactory(tenant=created.tenant, key="words")
        bump(created.tenant)
    return created


def test_an_event_for_an_organization_in_cell2_is_written_in_cell2_only(cell2_ids):
    created = organization_in_cell2()
    response = _client(created.full_key).post(
        "/v1/metrics/words/event", {"user": {"id": "u1"}, "value": 5}, format="json"
    )
    assert response.status_code == 201, response.content
    assert MetricEvent.objects.using(CELL).count() == 1
    assert MetricTotal.objects.using(CELL).get().total == 5
    assert MetricEvent.objects.using("default").count() == 0
    assert not Organization.objects.using("default").filter(name="Beta").exists()
    # The directory, in the control database, knows where the organization and its key are.
    placement = Placement.objects.using("default").get()
    assert (placement.organization, placement.cell) == (created.organization.public_id, CELL)
    assert KeyEntry.objects.using("default").get().prefix == created.api_key.prefix


def test_an_organization_in_the_default_cell_stays_there(cell2_ids):
    created = organization_create("Alpha")
    MetricFactory(tenant=created.tenant, key="words")
    bump(created.tenant)
    response = _client(created.full_key).post(
        "/v1/metrics/words/event", {"user": {"id": "u1"}, "value": 2}, format="json"
    )
    assert response.status_code == 201
    assert MetricEvent.objects.using("default").count() == 1
    assert MetricEvent.objects.using(CELL).count() == 0


def test_ids_made_in_cell2_come_from_its_own_range(cell2_ids):
    created = organization_in_cell2()
    alpha = organization_create("Alpha")
    assert created.organization.pk >= 10**15 > alpha.organization.pk


def test_the_directory_follows_keys_created_and_deleted(cell2_ids):
    created = organization_in_cell2()
    with using_cell(CELL):
        api_key, full_key = api_key_create_admin(created.environment, name="second")
    entry = KeyEntry.objects.using("default").get(prefix=api_key.prefix)
    assert entry.organization == created.organization.public_id
    assert _client(full_key).get("/admin/v1/metrics").status_code == 200
    with using_cell(CELL):
        api_key_delete(ApiKey.objects.get(pk=api_key.pk))
    assert not KeyEntry.objects.using("default").filter(prefix=api_key.prefix).exists()
    assert _client(full_key).get("/admin/v1/metrics").status_code == 401
    # The organization's first key still opens cell2.
    assert _client(created.full_key).get("/admin/v1/metrics").status_code == 200


def test_a_cell_cannot_be_entered_inside_a_transaction(cell2_ids):
    from django.db import transaction

    with transaction.atomic(), pytest.raises(CellSwitchError), using_cell(CELL):
        pass
    assert current_cell() == "default"


def test_a_periodic_job_runs_once_in_each_cell(cell2_ids, monkeypatch):
    seen: list[tuple[str, list[str]]] = []

    def job(now: dt.datetime) -> None:
        seen.append((current_cell(), sorted(Organization.objects.values_list("name", flat=True))))

    monkeypatch.setattr(periodic, "_REGISTRY", {})
    periodic.periodic_job("cells-probe", every=dt.timedelta(hours=1))(job)
    organization_in_cell2("Beta")
    organization_create("Alpha")
    assert periodic.periodic_jobs_run_due() == ["cells-probe", "cells-probe@cell2"]
    assert seen == [("default", ["Alpha"]), ("cell2", ["Beta"])]
    # Each cell claimed the job in its own schedule: not due again in either.
    assert PeriodicJobRun.objects.using("default").get().name == "cells-probe"
    assert PeriodicJobRun.objects.using(CELL).get().name == "cells-probe"
    assert periodic.periodic_jobs_run_due() == []


BROKER = "redis://127.0.0.1:6379/13"


@pytest.fixture
def redis_worker(settings):
    if not redis_up():
        pytest.skip("needs Redis on 127.0.0.1:6379")
    with worker_through(BROKER, settings):
        yield


def test_a_task_published_in_cell2_runs_in_cell2(cell2_ids, redis_worker):
    # The batch is queued by the request (in cell2) and processed by a worker thread, which
    # knows its cell only from the message's header.
    created = organization_in_cell2()
    events = [{"key": "words", "user": {"id": f"u{i % 3}"}, "value": i} for i in range(12)]
    response = _client(created.full_key).post("/admin/v1/metrics/events", events, format="json")
    assert response.status_code == 202
    import time

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if not QueuedEvent.objects.using(CELL).filter(status="pending").exists():
            break
        time.sleep(0.2)
    assert sum(t.total for t in MetricTotal.objects.using(CELL).all()) == sum(range(12))
    assert MetricTotal.objects.using("default").count() == 0


def test_the_dashboard_shows_and_writes_the_selected_organization_in_its_cell(cell2_ids, client):
    from django.contrib.auth import get_user_model

    from apps.cells.middleware import SESSION_ORGANIZATION
    from apps.metrics.models import Metric

    created = organization_in_cell2("Beta in cell two")
    staff = get_user_model().objects.create_superuser("boss", "boss@example.com", "pw")
    client.force_login(staff)
    session = client.session
    session[SESSION_ORGANIZATION] = str(created.organization.public_id)
    session.save()
    response = client.get("/dashboard/metrics/metric/")
    assert response.status_code == 200
    assert "Beta in cell two" in response.content.decode()
    # A configuration write from the dashboard lands in cell2 with its history naming the
    # staff member, whose row the cell holds a copy of.
    metric = Metric.objects.using(CELL).get(key="words")
    response = client.post(
        f"/dashboard/metrics/metric/{metric.pk}/change/",
        {"name": "Words renamed", "key": "words", "unit_type": "number", "status": "active"},
    )
    assert response.status_code == 302, response.content.decode()[-3000:]
    assert Metric.objects.using(CELL).get(pk=metric.pk).name == "Words renamed"
    from apps.accounts.models import ConfigChange

    assert ConfigChange.objects.using(CELL).get(key="words", action="changed").staff_id == staff.pk
    assert not get_user_model().objects.using(CELL).get(pk=staff.pk).has_usable_password()


def test_the_tenant_switcher_offers_every_cells_tenants_and_follows_one_into_its_cell(
    cell2_ids, client
):
    from django.contrib.auth import get_user_model

    from apps.cells.middleware import SESSION_ORGANIZATION

    alpha = organization_create("Alpha in default")
    beta = organization_in_cell2("Beta in cell two")
    staff = get_user_model().objects.create_superuser("boss", "boss@example.com", "pw")
    client.force_login(staff)
    page = client.get("/dashboard/").content.decode()
    assert "Alpha in default Production" in page
    assert "Beta in cell two Production" in page
    response = client.post(
        "/dashboard/tenant/", {"tenant": beta.tenant.pk, "next": "/dashboard/metrics/metric/"}
    )
    assert response.status_code == 302
    assert client.session[SESSION_ORGANIZATION] == str(beta.organization.public_id)
    listed = client.get("/dashboard/metrics/metric/").content.decode()
    assert "words" in listed  # the cell2 tenant's metric
    client.post("/dashboard/tenant/", {"tenant": alpha.tenant.pk, "next": "/dashboard/"})
    assert client.session[SESSION_ORGANIZATION] == str(alpha.organization.public_id)


def test_staff_given_to_an_organization_in_cell2_are_kept_there(cell2_ids):
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from apps.accounts.services import organization_staff_set

    created = organization_in_cell2()
    ada = get_user_model().objects.create_user("ada", "ada@example.com", "pw", is_staff=True)
    with using_cell(CELL), transaction.atomic():  # the foreign keys are checked at commit
        organization_staff_set(Organization.objects.get(), [ada])
    with using_cell(CELL):
        assert Organization.objects.get(pk=created.organization.pk).staff.get().pk == ada.pk


def test_staff_whose_tenants_are_all_in_cell2_are_taken_there(cell2_ids, client):
    from django.contrib.auth import get_user_model

    from apps.cells.middleware import SESSION_ORGANIZATION

    created = organization_in_cell2("Only in cell two")
    boss = get_user_model().objects.create_superuser("boss", "boss@example.com", "pw")
    client.force_login(boss)
    first = client.get("/dashboard/metrics/metric/").content.decode()
    assert "words" not in first  # nothing in the default cell: the session now names cell2's
    listed = client.get("/dashboard/metrics/metric/").content.decode()
    assert "words" in listed
    assert client.session[SESSION_ORGANIZATION] == str(created.organization.public_id)
