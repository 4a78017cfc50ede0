import datetime as dt

import pytest
import time_machine

from tests.factories import MetricFactory, bump, event_body


def send(client, user_id, value, when, key="words", **user):
    with time_machine.travel(when):
        response = client.post(f"/v1/metrics/{key}/event", event_body(user_id, value, **user))
    assert response.status_code == 201, response.content


def at(day, hour=12):
    return dt.datetime(2026, 1, day, hour, tzinfo=dt.UTC)


def test_all_metrics_lists_every_metric_with_the_users_total(api_client, tenant, metric):
    MetricFactory(tenant=tenant, key="lessons", name="Lessons")
    bump(tenant)
    send(api_client, "u1", 5, at(1))
    response = api_client.get("/v1/users/u1/metrics")
    assert response.status_code == 200
    assert response.json() == [
        {
            "id": str(metric.public_id),
            "key": "words",
            "name": "Words",
            "status": "active",  # required by the Node SDK
            "current": 5,
            "achievements": [],
        },
        {
            "id": response.json()[1]["id"],
            "key": "lessons",
            "name": "Lessons",
            "status": "active",
            "current": 0,
            "achievements": [],
        },
    ]


def test_single_metric_and_unknowns(api_client, metric):
    send(api_client, "u1", 2.5, at(1))
    assert api_client.get("/v1/users/u1/metrics/words").json()["current"] == 2.5
    assert api_client.get("/v1/users/u1/metrics/nope").status_code == 404
    assert api_client.get("/v1/users/ghost/metrics/words").status_code == 404
    assert api_client.get("/v1/users/ghost/metrics").status_code == 404


class TestEventSummary:
    URL = "/v1/users/u1/metrics/words/event-summary"

    @pytest.fixture
    def history(self, api_client, metric):
        send(api_client, "u1", 10, at(1))  # Thursday 1 January 2026
        send(api_client, "u1", 5, at(3))
        send(api_client, "u1", -2, at(3, 18))
        send(api_client, "u1", 7, at(5))  # Monday

    def get(self, client, **params):
        return client.get(self.URL, params)

    def test_daily_buckets_with_running_total(self, api_client, history):
        response = self.get(
            api_client, aggregation="daily", startDate="2026-01-02", endDate="2026-01-05"
        )
        assert response.status_code == 200
        assert response.json() == [
            {"date": "2026-01-02", "total": 10, "change": 0},
            {"date": "2026-01-03", "total": 13, "change": 3},
            {"date": "2026-01-04", "total": 13, "change": 0},
            {"date": "2026-01-05", "total": 20, "change": 7},
        ]

    def test_weekly_buckets_start_on_sunday(self, api_client, history):
        response = self.get(
            api_client, aggregation="weekly", startDate="2026-01-01", endDate="2026-01-10"
        )
        assert response.json() == [
            {"date": "2025-12-28", "total": 13, "change": 13},
            {"date": "2026-01-04", "total": 20, "change": 7},
        ]

    def test_monthly_buckets(self, api_client, history):
        response = self.get(
            api_client, aggregation="monthly", startDate="2025-12-15", endDate="2026-02-01"
        )
        assert response.json() == [
            {"date": "2025-12-01", "total": 0, "change": 0},
            {"date": "2026-01-01", "total": 20, "change": 20},
            {"date": "2026-02-01", "total": 20, "change": 0},
        ]

    def test_buckets_follow_the_local_date_of_each_event(self, api_client, metric):
        # 20:00 UTC on 1 January is 2 January in Auckland (UTC+13).
        send(api_client, "u1", 4, at(1, 20), tz="Pacific/Auckland")
        response = self.get(
            api_client, aggregation="daily", startDate="2026-01-01", endDate="2026-01-02"
        )
        assert [b["change"] for b in response.json()] == [0, 4]

    @pytest.mark.parametrize(
        "params",
        [
            {"aggregation": "hourly", "startDate": "2026-01-01", "endDate": "2026-01-02"},
            {"startDate": "2026-01-01", "endDate": "2026-01-02"},
            {"aggregation": "daily", "endDate": "2026-01-02"},
            {"aggregation": "daily", "startDate": "2026-13-01", "endDate": "2026-01-02"},
            {"aggregation": "daily", "startDate": "2026-01-05", "endDate": "2026-01-02"},
            {"aggregation": "daily", "startDate": "2024-01-01", "endDate": "2026-01-02"},
        ],
    )
    def test_invalid_parameters_are_422(self, api_client, history, params):
        response = self.get(api_client, **params)
        assert response.status_code == 422
        assert set(response.json()) == {"error"}

    def test_summary_of_another_tenants_user_is_404(
        self, other_tenant_client, history, other_tenant
    ):
        MetricFactory(tenant=other_tenant, key="words")
        bump(other_tenant)
        response = self.get(
            other_tenant_client, aggregation="daily", startDate="2026-01-01", endDate="2026-01-02"
        )
        assert response.status_code == 404


@pytest.mark.parametrize(
    "query",
    [
        "aggregation=weekly&startDate=0001-01-01&endDate=0001-01-10",
        "aggregation=daily&startDate=9999-12-30&endDate=9999-12-31",
        "aggregation=monthly&startDate=9999-12-01&endDate=9999-12-31",
    ],
)
def test_summaries_at_the_calendar_limits_are_422_not_500(api_client, metric, query):
    api_client.post("/v1/metrics/words/event", {"user": {"id": "u1"}, "value": 1})
    response = api_client.get(f"/v1/users/u1/metrics/words/event-summary?{query}")
    assert response.status_code == 422
    assert "years 1 to 9999" in response.json()["error"]


def test_an_astronomically_large_value_is_422(api_client, metric):
    for path, body in (
        ("/v1/metrics/words/event", '{"user": {"id": "u1"}, "value": 1e999999999}'),
        (
            "/admin/v1/metrics/events",
            '[{"key": "words", "user": {"id": "u1"}, "value": 1e999999999}]',
        ),
    ):
        response = api_client.post(path, body, content_type="application/json", format=None)
        assert response.status_code == 422, path
        assert "value: must be between" in response.json()["error"]
