"""The hand-compiled key lookup (apps/accounts/sql.py) makes exactly what select_related made,
in one statement."""

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.keys import key_split
from apps.accounts.models import ApiKey, Environment, Tenant
from apps.accounts.sql import api_key_with_tenants
from tests.factories import OrganizationWithKey

# `sql`: make unit runs these on PostgreSQL too, whose statements differ (apps/core/db.py).
pytestmark = [pytest.mark.django_db, pytest.mark.sql]


def fields(obj: Any) -> dict[str, Any]:
    return {f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}


def orm(prefix: str) -> ApiKey:
    return ApiKey.objects.select_related("environment__default_tenant", "tenant").get(prefix=prefix)


def prefix_of(raw: str) -> str:
    parts = key_split(raw)
    assert parts is not None
    return parts[0]


def test_an_admin_key_with_its_environment_and_default_tenant():
    org = OrganizationWithKey("Keys")
    prefix = prefix_of(org.admin_key)
    with CaptureQueriesContext(connection) as queries:
        key = api_key_with_tenants(prefix)
    assert len(queries.captured_queries) == 1
    expected = orm(prefix)
    assert key is not None
    assert fields(key) == fields(expected)
    assert isinstance(key.environment, Environment)
    assert fields(key.environment) == fields(expected.environment)
    assert isinstance(key.environment.default_tenant, Tenant)
    assert fields(key.environment.default_tenant) == fields(expected.environment.default_tenant)
    assert key.tenant is None
    with CaptureQueriesContext(connection) as queries:  # all loaded: no lazy query after
        assert key.environment.default_tenant.config_version >= 0
    assert queries.captured_queries == []


def test_an_application_key_with_its_tenant():
    org = OrganizationWithKey("Keys")
    prefix = prefix_of(org.application_key("u1"))
    key = api_key_with_tenants(prefix)
    assert key is not None
    assert key.tenant is not None
    assert fields(key.tenant) == fields(orm(prefix).tenant)
    assert fields(key) == fields(orm(prefix))


def test_an_environment_without_default_tenant_and_unknown_or_inactive_keys():
    org = OrganizationWithKey("Keys")
    prefix = prefix_of(org.admin_key)
    Environment.objects.update(default_tenant=None)
    key = api_key_with_tenants(prefix)
    assert key is not None
    assert key.environment.default_tenant is None
    assert api_key_with_tenants("nope") is None
    ApiKey.objects.filter(prefix=prefix).update(is_active=False)
    assert api_key_with_tenants(prefix) is None
