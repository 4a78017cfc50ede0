"""Plain helpers of the contract suite: its database marker, setup through the admin API, and
error-body checks."""

from collections.abc import Callable

import pytest
from django.apps import apps
from trophy import CreateAttributeRequestItem, CreateMetricRequestItem, TrophyApi
from trophy.core import ApiError
from trophy.types import AdminAttribute, CreatedMetric

# make_client(api_key, *, tenant_id=None, api_prefix="/v1") -> TrophyApi (see conftest.py)
MakeClient = Callable[..., TrophyApi]

# The live server needs the transactional database, flushed after every test. A full flush
# re-emits post_migrate, which rebuilds every content type and permission (tens of ms per test,
# most of this suite's run time). The API touches none of these apps, so they are left out of
# the test's app registry: their rows are neither flushed nor rebuilt.
_UNUSED_BY_THE_API = {"django.contrib.admin", "django.contrib.auth", "django.contrib.contenttypes"}
CONTRACT_DB = pytest.mark.django_db(
    transaction=True,
    available_apps=[c.name for c in apps.get_app_configs() if c.name not in _UNUSED_BY_THE_API],
)


def create_metric(client: TrophyApi, key: str, name: str | None = None) -> CreatedMetric:
    response = client.admin.metrics.create(
        request=[CreateMetricRequestItem(key=key, name=name or key.title())]
    )
    assert response.issues == []
    (metric,) = response.created
    return metric


def create_attribute(client: TrophyApi, key: str, type: str) -> AdminAttribute:
    response = client.admin.attributes.create(
        request=[CreateAttributeRequestItem(key=key, name=key.title(), type=type)]
    )
    assert response.issues == []
    (attribute,) = response.created
    return attribute


def error_message(exc: ApiError) -> str:
    """The message of the `{"error": "<message>"}` body that every error response carries."""
    assert isinstance(exc.body, dict), exc.body
    assert set(exc.body) == {"error"}, exc.body
    assert isinstance(exc.body["error"], str)
    assert exc.body["error"]
    return exc.body["error"]
