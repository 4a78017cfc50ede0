"""`manage.py cells move`: copy, read-only, catch up, verify, switch; exact afterwards, under
load, and nothing half done when it fails."""

import threading
import time
from decimal import Decimal
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import IntegrityError, connections
from rest_framework.test import APIClient

from apps.accounts.models import Organization
from apps.accounts.services import organization_create
from apps.cells.directory import organization_cell, read_only_set
from apps.cells.models import Placement
from apps.cells.move import MoveError, organization_counts, organization_move
from apps.core.cells import using_cell
from apps.metrics.models import MetricEvent, MetricTotal
from apps.users.models import EndUser
from tests.cells.conftest import CELL, needs_cell2
from tests.factories import MetricFactory, bump

pytestmark = needs_cell2

EVENT = "/v1/metrics/words/event"


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=key)
    return client


def _post(key: str, user: str, value: Any, idempotency: str | None = None) -> Any:
    headers = {"HTTP_IDEMPOTENCY_KEY": idempotency} if idempotency else {}
    return _client(key).post(
        EVENT, {"user": {"id": user}, "value": value}, format="json", **headers
    )


def _organization_with_events(name: str = "Acme", events: int = 20) -> Any:
    created = organization_create(name)
    MetricFactory(tenant=created.tenant, key="words")
    bump(created.tenant)
    for i in range(events):
        assert _post(created.full_key, f"u{i % 4}", i + 1).status_code == 201
    return created


def test_a_move_copies_every_row_exactly_and_switches_the_organization(cell2_ids):
    created = _organization_with_events()
    other = _organization_with_events("Other", events=3)
    org_pk = created.organization.pk
    staff = get_user_model().objects.create_user("ada", "ada@example.com", "secret", is_staff=True)
    created.organization.staff.add(staff)
    before = organization_counts("default", org_pk)
    totals = dict(
        MetricTotal.objects.filter(tenant=created.tenant).values_list("user__external_id", "total")
    )
    user_ids = sorted(EndUser.objects.filter(tenant=created.tenant).values_list("pk", flat=True))

    out = StringIO()
    call_command("cells", "move", str(created.organization.public_id), "--to", CELL, stdout=out)

    assert organization_cell(created.organization.public_id) == CELL
    assert organization_counts(CELL, org_pk) == before
    assert sum(before.values()) > 30
    assert all(count == 0 for count in organization_counts("default", org_pk).values())
    # Ids are kept, totals exact.
    assert sorted(EndUser.objects.using(CELL).values_list("pk", flat=True)) == user_ids
    assert dict(MetricTotal.objects.using(CELL).values_list("user__external_id", "total")) == (
        totals
    )
    assert sum(totals.values()) == sum(range(1, 21))
    # The other organization did not move; the moved one's requests now reach cell2.
    assert organization_counts("default", other.organization.pk)["metrics.MetricEvent"] == 3
    assert _post(created.full_key, "u0", 100).status_code == 201
    assert MetricEvent.objects.using(CELL).count() == 21
    assert (
        Placement.objects.get(organization=created.organization.public_id).read_only_since is None
    )
    assert "cell2 is writable" in out.getvalue()
    # Its staff still belong to it: their user rows are copied for the foreign keys, unable to
    # log in there (staff log in against the control database, whose row is untouched).
    assert Organization.objects.using(CELL).get(pk=org_pk).staff.get().username == "ada"
    assert not get_user_model().objects.using(CELL).get(pk=staff.pk).has_usable_password()
    assert get_user_model().objects.using("default").get(pk=staff.pk).check_password("secret")


def test_a_move_back_to_the_default_cell_restores_the_organization_there(cell2_ids):
    created = _organization_with_events(events=5)
    organization_move(created.organization.public_id, CELL)
    organization_move(created.organization.public_id, "default")
    assert organization_cell(created.organization.public_id) == "default"
    assert MetricEvent.objects.using("default").count() == 5
    assert MetricEvent.objects.using(CELL).count() == 0
    assert _post(created.full_key, "u0", 1).status_code == 201


def test_writes_answer_503_with_retry_after_while_read_only_and_reads_go_on(cell2_ids):
    created = _organization_with_events(events=1)
    read_only_set(created.organization.public_id, "default", on=True)
    response = _post(created.full_key, "u0", 1)
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "moving to another database cell" in response.json()["error"]
    assert _client(created.full_key).get("/admin/v1/metrics").status_code == 200
    read_only_set(created.organization.public_id, "default", on=False)
    assert _post(created.full_key, "u0", 1).status_code == 201


@pytest.mark.skipif(
    connections["default"].vendor != "postgresql",
    reason="threads writing while a move reads: PostgreSQL (SQLite's test databases lock)",
)
def test_a_move_while_events_are_sent_loses_and_doubles_nothing(cell2_ids, settings):
    settings.CELL_MOVE_GRACE_SECONDS = 1
    created = _organization_with_events(events=4)
    accepted: list[Decimal] = []
    refused: list[int] = []
    stop = threading.Event()

    def send() -> None:
        try:
            n = 0
            while not stop.is_set():
                n += 1
                value = Decimal(n) / 4
                while True:  # a client retrying 503 with the same idempotency key
                    response = _post(created.full_key, f"load{n % 5}", float(value), f"k{n}")
                    if response.status_code != 503:
                        break
                    refused.append(n)
                    time.sleep(0.05)
                assert response.status_code == 201, response.content
                accepted.append(value)
        finally:
            connections.close_all()

    thread = threading.Thread(target=send)
    thread.start()
    try:
        time.sleep(0.5)
        organization_move(created.organization.public_id, CELL)
        time.sleep(0.5)
    finally:
        stop.set()
        thread.join(timeout=60)
    assert len(accepted) > 10
    load_total = sum(
        MetricTotal.objects.using(CELL)
        .filter(user__external_id__startswith="load")
        .values_list("total", flat=True)
    )
    assert load_total == sum(accepted)
    assert MetricEvent.objects.using(CELL).filter(
        user__external_id__startswith="load"
    ).count() == len(accepted)
    assert MetricEvent.objects.using("default").count() == 0
    assert refused, "the sender never met the read-only window"


@pytest.mark.parametrize("step", ["copying", "copied"])
def test_a_failure_mid_move_leaves_the_organization_whole_and_writable_in_its_source(
    cell2_ids, step
):
    created = _organization_with_events(events=6)
    org_pk = created.organization.pk
    before = organization_counts("default", org_pk)
    squatter = organization_create("Squatter", cell=CELL)

    def inject(message: str) -> None:
        # A row the move must copy collides with a row of another organization in the target
        # (which the id ranges rule out in real life): before the copy (an existing user), or
        # after it, while read-only (a user the catch-up must copy).
        if message.startswith(step):
            user = (
                EndUser.objects.filter(tenant=created.tenant).first()
                if step == "copying"
                else EndUser.objects.create(tenant=created.tenant, external_id="late")
            )
            with using_cell(CELL):
                EndUser.objects.create(pk=user.pk, tenant=squatter.tenant, external_id="x")

    with pytest.raises(IntegrityError, match=r"duplicate key|UNIQUE constraint failed"):
        organization_move(created.organization.public_id, CELL, say=inject)

    assert organization_cell(created.organization.public_id) == "default"
    placement = Placement.objects.get(organization=created.organization.public_id)
    assert placement.read_only_since is None
    after = organization_counts("default", org_pk)
    late = 1 if step == "copied" else 0
    assert after == {**before, "users.EndUser": before["users.EndUser"] + late}
    assert all(count == 0 for count in organization_counts(CELL, org_pk).values())
    # The squatter's row is untouched and the organization takes writes in its source.
    assert EndUser.objects.using(CELL).get(external_id="x").tenant_id == squatter.tenant.pk
    assert _post(created.full_key, "u0", 1).status_code == 201
    assert MetricEvent.objects.using("default").filter(tenant=created.tenant).count() == 7


def test_a_move_to_the_cell_it_is_in_is_refused(cell2_ids):
    created = organization_create("Acme")
    with pytest.raises(MoveError, match="already in cell"):
        organization_move(created.organization.public_id, "default")


def test_the_command_lists_cells_and_lifts_a_read_only_left_behind(cell2_ids):
    created = organization_create("Acme")
    organization_create("Beta", cell=CELL)
    out = StringIO()
    call_command("cells", "list", stdout=out)
    assert out.getvalue().splitlines() == [
        "default: 1 organizations (1 in the directory)",
        "cell2: 1 organizations (1 in the directory)",
    ]
    read_only_set(created.organization.public_id, "default", on=True)
    call_command("cells", "writable", "Acme", stdout=StringIO())
    assert (
        Placement.objects.get(organization=created.organization.public_id).read_only_since is None
    )


def test_a_move_into_a_cell_whose_ids_are_not_in_its_range_is_refused(cell2_ids):
    from apps.cells.move import _sequenced_tables, cell_sequences_set

    created = organization_create("Acme")
    table, column = _sequenced_tables(CELL)[0]
    with connections[CELL].cursor() as cursor:
        if connections[CELL].vendor == "postgresql":
            cursor.execute("SELECT setval(pg_get_serial_sequence(%s, %s), 1)", [table, column])
        else:
            cursor.execute("UPDATE sqlite_sequence SET seq = 1 WHERE name = %s", [table])
    try:
        with pytest.raises(MoveError, match="cells migrate"):
            organization_move(created.organization.public_id, CELL)
        assert organization_cell(created.organization.public_id) == "default"
    finally:
        cell_sequences_set(CELL)
