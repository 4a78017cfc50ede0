import datetime as dt
from decimal import Decimal

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.metrics.models import MetricDailyChange, MetricEvent, MetricTotal
from apps.users.models import EndUser
from tests.factories import AttributeFactory, MetricFactory, bump, event_body

URL = "/v1/metrics/words/event"


def post_event(client, body, key=None, url=URL):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return client.post(url, body, **headers)


@time_machine.travel(dt.datetime(2026, 3, 1, 23, 30, tzinfo=dt.UTC))
def test_first_event_creates_user_and_returns_full_response(api_client, metric):
    # 23:30 UTC is already 2 March in Paris: the current period is the user's local day.
    response = post_event(api_client, event_body("u1", 750, tz="Europe/Paris"))
    assert response.status_code == 201
    body = response.json()
    event = MetricEvent.objects.get()
    assert body == {
        "eventId": str(event.public_id),
        "metricId": str(metric.public_id),
        "total": 750,
        "achievements": [],
        "currentStreak": {
            "length": 0,
            "frequency": "daily",
            "started": None,
            "periodStart": "2026-03-02",
            "periodEnd": "2026-03-02",
            "expires": None,
            "extended": False,
        },
        "points": {},
        "leaderboards": {},
    }
    assert EndUser.objects.get(external_id="u1").tz == "Europe/Paris"


def test_totals_accumulate_exactly_with_decimals_and_negatives(api_client, metric):
    for value in [0.1, 0.2, -0.3, 10, 2.5]:
        response = post_event(api_client, event_body("u1", value))
        assert response.status_code == 201
    assert response.json()["total"] == 12.5
    assert MetricTotal.objects.get().total == Decimal("12.5")


def test_values_are_kept_to_six_decimal_places(api_client, metric):
    response = post_event(api_client, event_body("u1", 1.23456789))
    assert response.json()["total"] == 1.234568


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        ('{"user": {"id": "u1"}, "value": NaN}', 400),
        ('{"user": {"id": "u1"}, "value": Infinity}', 400),
        ('{"user": {"id": "u1"}, "value": -Infinity}', 400),
        ('{"user": {"id": "u1"}, "value": 1e400}', 422),
        ('{"user": {"id": "u1"}, "value": "5"}', 422),
        ('{"user": {"id": "u1"}, "value": true}', 422),
        ('{"user": {"id": "u1"}, "value": null}', 422),
        ('{"user": {"id": "u1"}, "value": 1000000000001}', 422),
        ('{"user": {"id": "u1"}}', 422),
        ('{"value": 1}', 422),
        ('{"user": "u1", "value": 1}', 422),
        ('{"user": {"id": "u1"}, "value": 1, "attributes": {"x": 1}}', 422),
        ("[1, 2]", 422),
        ("{not json", 400),
        ("", 422),
    ],
)
def test_bad_event_bodies_get_a_clear_4xx_and_write_nothing(api_client, metric, raw, status):
    response = api_client.generic("POST", URL, raw, content_type="application/json")
    assert response.status_code == status, response.content
    assert set(response.json()) == {"error"}
    assert not EndUser.objects.exists()
    assert not MetricEvent.objects.exists()


def test_oversized_body_is_413(api_client, metric, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = event_body("u1", 1, name="x" * 2000)
    response = post_event(api_client, body)
    assert response.status_code == 413
    assert not MetricEvent.objects.exists()


def test_unknown_metric_is_404_and_creates_no_user(api_client, metric):
    response = post_event(api_client, event_body("u1"), url="/v1/metrics/nope/event")
    assert response.status_code == 404
    assert response.json() == {"error": 'Metric not found: "nope"'}
    assert not EndUser.objects.exists()


def test_event_attributes_accept_only_defined_event_keys(api_client, tenant, metric):
    AttributeFactory(tenant=tenant, key="source", type="event")
    AttributeFactory(tenant=tenant, key="plan", type="user")
    bump(tenant)
    ok = post_event(api_client, {**event_body("u1"), "attributes": {"source": "web"}})
    assert ok.status_code == 201
    assert MetricEvent.objects.get().attributes == {"source": "web"}
    bad = post_event(api_client, {**event_body("u1"), "attributes": {"plan": "pro"}})
    assert bad.status_code == 422
    assert bad.json()["error"].startswith("Invalid attribute keys: plan.")
    assert MetricEvent.objects.count() == 1


def test_inline_identification_updates_user_fields(api_client, metric):
    post_event(api_client, event_body("u1", name="Ada"))
    post_event(api_client, event_body("u1", email="ada@example.com"))
    user = EndUser.objects.get()
    assert (user.name, user.email) == ("Ada", "ada@example.com")


def test_inline_user_validation_errors_write_nothing(api_client, metric):
    response = post_event(api_client, event_body("u1", tz="Nowhere/City"))
    assert response.status_code == 422
    assert not EndUser.objects.exists()
    assert not MetricEvent.objects.exists()


class TestIdempotency:
    def test_replay_returns_202_with_current_state_and_applies_nothing(self, api_client, metric):
        first = post_event(api_client, event_body("u1", 5), key="k1")
        assert first.status_code == 201
        assert first.json()["idempotencyKey"] == "k1"
        assert first.json()["idempotentReplayed"] is False
        post_event(api_client, event_body("u1", 2))
        replay = post_event(api_client, event_body("u1", 5, name="Changed"), key="k1")
        assert replay.status_code == 202
        body = replay.json()
        assert body["idempotentReplayed"] is True
        assert body["idempotencyKey"] == "k1"
        assert body["eventId"] == first.json()["eventId"]
        assert body["total"] == 7
        assert MetricEvent.objects.count() == 2
        assert MetricTotal.objects.get().total == 7
        # Nothing applied: not even the inline user fields.
        assert EndUser.objects.get().name is None

    def test_key_scope_is_user_and_metric(self, api_client, tenant, metric):
        MetricFactory(tenant=tenant, key="lessons")
        bump(tenant)
        assert post_event(api_client, event_body("u1"), key="k").status_code == 201
        assert post_event(api_client, event_body("u2"), key="k").status_code == 201
        other_metric = post_event(
            api_client, event_body("u1"), key="k", url="/v1/metrics/lessons/event"
        )
        assert other_metric.status_code == 201
        assert post_event(api_client, event_body("u1"), key="k").status_code == 202
        assert MetricEvent.objects.count() == 3

    def test_without_key_response_has_no_idempotency_fields(self, api_client, metric):
        body = post_event(api_client, event_body("u1")).json()
        assert "idempotencyKey" not in body
        assert "idempotentReplayed" not in body

    def test_overlong_key_is_rejected(self, api_client, metric):
        assert post_event(api_client, event_body("u1"), key="k" * 256).status_code == 422
        assert not MetricEvent.objects.exists()

    def test_same_key_in_another_tenant_is_independent(
        self, api_client, other_tenant_client, metric, other_tenant
    ):
        MetricFactory(tenant=other_tenant, key="words")
        bump(other_tenant)
        assert post_event(api_client, event_body("u1"), key="k").status_code == 201
        assert post_event(other_tenant_client, event_body("u1"), key="k").status_code == 201


class TestDailyRollup:
    def test_rollup_uses_the_users_local_date(self, api_client, metric):
        # 23:30 UTC on 1 March is already 2 March in Tokyo and still 1 March in New York.
        with time_machine.travel(dt.datetime(2026, 3, 1, 23, 30, tzinfo=dt.UTC)):
            post_event(api_client, event_body("tokyo", 3, tz="Asia/Tokyo"))
            post_event(api_client, event_body("ny", 4, tz="America/New_York"))
            post_event(api_client, event_body("utc", 5))
        dates = dict(MetricDailyChange.objects.values_list("user__external_id", "date"))
        assert dates == {
            "tokyo": dt.date(2026, 3, 2),
            "ny": dt.date(2026, 3, 1),
            "utc": dt.date(2026, 3, 1),
        }

    def test_same_day_events_share_one_rollup_row(self, api_client, metric):
        with time_machine.travel(dt.datetime(2026, 3, 1, 9, tzinfo=dt.UTC)):
            post_event(api_client, event_body("u1", 3))
            post_event(api_client, event_body("u1", -1))
        row = MetricDailyChange.objects.get()
        assert (row.change, row.events) == (Decimal(2), 2)


class TestTenancyAndAccess:
    def test_metric_of_another_tenant_is_not_found(self, other_tenant_client, metric):
        response = post_event(other_tenant_client, event_body("u1"))
        assert response.status_code == 404

    def test_events_and_totals_do_not_leak_between_tenants(
        self, api_client, other_tenant_client, metric, other_tenant
    ):
        MetricFactory(tenant=other_tenant, key="words")
        bump(other_tenant)
        post_event(api_client, event_body("u1", 10))
        response = post_event(other_tenant_client, event_body("u1", 1))
        assert response.json()["total"] == 1
        assert api_client.get("/v1/users/u1/metrics/words").json()["current"] == 10
        assert other_tenant_client.get("/v1/users/u1/metrics/words").json()["current"] == 1

    def test_missing_key_is_401(self, anon_client, metric):
        response = post_event(anon_client, event_body("u1"))
        assert response.status_code == 401
        assert response.json() == {"error": "Missing or invalid API key"}

    def test_invalid_key_is_401(self, anon_client, metric):
        anon_client.credentials(HTTP_X_API_KEY="abcdefgh.wrong")
        assert post_event(anon_client, event_body("u1")).status_code == 401

    def test_unknown_tenant_is_404(self, org, anon_client, metric):
        anon_client.credentials(HTTP_X_API_KEY=org.admin_key, HTTP_TENANT_ID="nobody")
        response = post_event(anon_client, event_body("u1"))
        assert response.status_code == 404
        assert "Tenant" in response.json()["error"]

    def test_application_key_may_send_events_only_for_its_user(self, org, anon_client, metric):
        anon_client.credentials(HTTP_X_API_KEY=org.application_key("me"))
        assert post_event(anon_client, event_body("me")).status_code == 201
        assert post_event(anon_client, event_body("other")).status_code == 403
        assert not EndUser.objects.filter(external_id="other").exists()


@pytest.mark.sql  # the event's record is one statement on PostgreSQL: make unit runs it there
class TestQueryCount:
    """The event endpoint's query count is fixed: it does not grow with users or history."""

    def _count(self, client, body, key=None):
        with CaptureQueriesContext(connection) as ctx:
            response = post_event(client, body, key=key)
        assert response.status_code in (201, 202)
        return len(ctx.captured_queries)

    def test_query_count_is_constant(self, api_client, tenant, metric):
        AttributeFactory(tenant=tenant, key="source", type="event")
        bump(tenant)
        post_event(api_client, event_body("warm"))  # fill the configuration snapshot
        first_event_of_user = self._count(api_client, event_body("u0"))
        steady = self._count(api_client, event_body("u0"))
        for i in range(30):
            post_event(api_client, event_body(f"bulk-{i}", i))
            post_event(api_client, event_body("u0", 1))
        assert self._count(api_client, event_body("u0")) == steady
        assert self._count(api_client, event_body("u-new")) == first_event_of_user
        with_attributes = {**event_body("u0"), "attributes": {"source": "web"}}
        assert self._count(api_client, with_attributes) == steady
        # Pinned exactly so a change that adds a query to the hot path is a deliberate one.
        # Steady: key+environment+tenant, user lock, total upsert, event insert, rollup upsert
        # (on PostgreSQL these three are one statement, apps/metrics/sql.py), plus the test
        # transaction's savepoint and release. A new user adds its insert (ON CONFLICT DO
        # NOTHING: no savepoint), with its activity of the day in the row.
        recorded = 1 if connection.vendor == "postgresql" else 3
        assert steady == 4 + recorded
        assert first_event_of_user == 5 + recorded

    def test_replay_costs_a_bounded_number_of_queries(self, api_client, metric):
        post_event(api_client, event_body("u0"), key="k")
        # key, user lock, idempotency lookup, current total (+ savepoint and release).
        assert self._count(api_client, event_body("u0"), key="k") == 6
