"""Application API keys through the SDK: created by the admin API, bound to one end-user."""

import datetime as dt
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from trophy import CreateApplicationKeyRequestItem, CreateTenantRequestItem, TrophyApi
from trophy.core import ApiError
from trophy.errors import ForbiddenError, UnauthorizedError
from trophy.types import CreatedApplicationKey, CreatedMetric, DeletedResource

from tests.contract.helpers import CONTRACT_DB, MakeClient, create_metric, error_message
from tests.factories import OrganizationWithKey

pytestmark = [pytest.mark.contract, CONTRACT_DB]


def create_key(client: TrophyApi, user_id: str) -> CreatedApplicationKey:
    response = client.admin.application_api_keys.create(
        request=[CreateApplicationKeyRequestItem(user_id=user_id)]
    )
    assert response.issues == []
    (key,) = response.created
    return key


def test_create_returns_201_with_each_full_key_once(client: TrophyApi) -> None:
    response = client.admin.application_api_keys.with_raw_response.create(
        request=[
            CreateApplicationKeyRequestItem(user_id="alice"),
            CreateApplicationKeyRequestItem(user_id="bob"),
            CreateApplicationKeyRequestItem(user_id=""),
        ]
    )

    assert response.status_code == 201
    created = response.data.created
    assert all(isinstance(k, CreatedApplicationKey) for k in created)
    assert [k.user_id for k in created] == ["alice", "bob"]
    for key in created:
        uuid.UUID(key.id)
        assert key.prefix.startswith("app_")
        assert key.key.startswith(key.prefix + ".")
    assert created[0].key != created[1].key
    assert [(i.index, i.severity) for i in response.data.issues] == [(2, "error")]
    assert "userId" in response.data.issues[0].message


def test_a_key_works_on_the_application_api_for_its_own_user(
    client: TrophyApi, make_client: MakeClient, words: CreatedMetric
) -> None:
    alice = make_client(create_key(client, "alice").key)
    today = dt.datetime.now(dt.UTC).date().isoformat()

    assert alice.users.create(id="alice", name="Alice").name == "Alice"
    assert alice.users.identify("alice", email="alice@example.com").email == "alice@example.com"
    assert alice.users.update("alice", name="Alice L.").name == "Alice L."
    assert alice.users.get("alice").name == "Alice L."
    assert alice.metrics.event("words", user={"id": "alice"}, value=3).total == 3
    assert alice.metrics.event("words", user={"id": "alice"}, value=1.5).total == 4.5
    assert [m.current for m in alice.users.all_metrics("alice")] == [4.5]
    assert alice.users.single_metric("alice", "words").current == 4.5
    summary = alice.users.metric_event_summary(
        "alice", "words", aggregation="daily", start_date=today, end_date=today
    )
    assert [item.total for item in summary] == [4.5]


def _other_users_calls(app: TrophyApi, today: str) -> list[Callable[[], Any]]:
    return [
        lambda: app.users.create(id="bob"),
        lambda: app.users.get("bob"),
        lambda: app.users.identify("bob", name="Mallory"),
        lambda: app.users.update("bob", name="Mallory"),
        lambda: app.users.all_metrics("bob"),
        lambda: app.users.single_metric("bob", "words"),
        lambda: app.users.metric_event_summary(
            "bob", "words", aggregation="daily", start_date=today, end_date=today
        ),
        lambda: app.metrics.event("words", user={"id": "bob"}, value=100),
    ]


def test_a_key_is_forbidden_for_another_users_data(
    client: TrophyApi, make_client: MakeClient, words: CreatedMetric
) -> None:
    client.metrics.event("words", user={"id": "bob", "name": "Bob"}, value=1)
    alice = make_client(create_key(client, "alice").key)
    today = dt.datetime.now(dt.UTC).date().isoformat()

    for call in _other_users_calls(alice, today):
        # None of these calls declares a 403 in the SDK: a plain ApiError.
        with pytest.raises(ApiError) as caught:
            call()
        assert caught.value.status_code == 403
        error_message(caught.value)

    assert client.users.get("bob").name == "Bob"
    assert client.users.single_metric("bob", "words").current == 1


def test_a_key_is_forbidden_on_the_admin_api(client: TrophyApi, make_client: MakeClient) -> None:
    alice = make_client(create_key(client, "alice").key)

    with pytest.raises(ForbiddenError) as declared:
        alice.admin.application_api_keys.create(
            request=[CreateApplicationKeyRequestItem(user_id="alice")]
        )
    error_message(declared.value)
    for call in (
        lambda: alice.admin.metrics.list(),
        lambda: alice.admin.attributes.list(),
        lambda: alice.admin.tenants.list(),
        lambda: alice.admin.environments.list(),
        lambda: alice.admin.settings.get(),
        lambda: alice.admin.metrics.batch_events(request=[]),
    ):
        with pytest.raises(ApiError) as caught:
            call()
        assert caught.value.status_code == 403
        error_message(caught.value)


def test_a_deleted_key_no_longer_authenticates(client: TrophyApi, make_client: MakeClient) -> None:
    key = create_key(client, "alice")
    alice = make_client(key.key)
    alice.users.identify("alice")
    unknown = str(uuid.uuid4())

    response = client.admin.application_api_keys.delete(ids=[key.id, unknown])

    assert response.deleted == [DeletedResource(id=key.id)]
    assert [(i.id, i.message) for i in response.issues] == [
        (unknown, "Application API key not found by ID")
    ]
    with pytest.raises(UnauthorizedError) as caught:
        alice.users.get("alice")
    error_message(caught.value)


def test_a_key_belongs_to_the_tenant_it_was_created_in(
    client: TrophyApi, make_client: MakeClient, org: OrganizationWithKey
) -> None:
    client.admin.tenants.create(
        request=[
            CreateTenantRequestItem(customer_id="acme-eu", name="EU"),
            CreateTenantRequestItem(customer_id="acme-us", name="US"),
        ]
    )
    eu_admin = make_client(org.admin_key, tenant_id="acme-eu")
    create_metric(eu_admin, "words")
    eu_admin.metrics.event("words", user={"id": "alice"}, value=7)
    key = create_key(eu_admin, "alice").key

    # Without a Tenant-ID header, and with its own, the key acts in its tenant.
    assert make_client(key).users.single_metric("alice", "words").current == 7
    assert make_client(key, tenant_id="acme-eu").users.single_metric("alice", "words").current == 7
    # Naming another tenant is forbidden.
    with pytest.raises(ApiError) as caught:
        make_client(key, tenant_id="acme-us").users.get("alice")
    assert caught.value.status_code == 403
    error_message(caught.value)


def test_a_key_of_a_deleted_tenant_no_longer_authenticates(
    client: TrophyApi, make_client: MakeClient, org: OrganizationWithKey
) -> None:
    (tenant,) = client.admin.tenants.create(
        request=[CreateTenantRequestItem(customer_id="acme-eu", name="EU")]
    ).created
    key = create_key(make_client(org.admin_key, tenant_id="acme-eu"), "alice").key
    make_client(key).users.identify("alice")

    client.admin.tenants.delete(ids=[tenant.id])

    with pytest.raises(UnauthorizedError):
        make_client(key).users.get("alice")
