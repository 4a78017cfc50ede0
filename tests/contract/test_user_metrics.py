"""A user's metrics and event summaries through the SDK."""

import datetime as dt
import itertools
import zoneinfo

import pytest
from trophy import TrophyApi, UpsertedUser
from trophy.errors import NotFoundError, UnprocessableEntityError
from trophy.types import CreatedMetric, MetricResponse
from trophy.users import UsersMetricEventSummaryResponseItem

from tests.contract.helpers import CONTRACT_DB, create_metric, error_message

pytestmark = [pytest.mark.contract, CONTRACT_DB]


def utc_today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


def test_all_metrics_lists_every_metric_with_the_users_totals(
    client: TrophyApi, words: CreatedMetric
) -> None:
    lessons = create_metric(client, "lessons", "Lessons")
    client.metrics.event("words", user={"id": "user-1"}, value=2.5)
    client.metrics.event("words", user={"id": "user-1"}, value=-1)

    metrics = client.users.all_metrics("user-1")

    assert all(isinstance(m, MetricResponse) for m in metrics)
    by_key = {m.key: m for m in metrics}
    assert set(by_key) == {"words", "lessons"}
    assert (by_key["words"].id, by_key["words"].name) == (words.id, "Words")
    assert by_key["words"].current == 1.5
    assert by_key["words"].achievements == []
    assert (by_key["lessons"].id, by_key["lessons"].current) == (lessons.id, 0)


def test_single_metric_returns_the_users_total(client: TrophyApi, words: CreatedMetric) -> None:
    for value in (4, 0.25, -1.5):
        client.metrics.event("words", user={"id": "user-1"}, value=value)

    metric = client.users.single_metric("user-1", "words")

    assert isinstance(metric, MetricResponse)
    assert (metric.id, metric.key, metric.name, metric.current) == (
        words.id,
        "words",
        "Words",
        2.75,
    )
    assert metric.achievements == []


def test_a_metric_without_events_has_a_zero_total(client: TrophyApi, words: CreatedMetric) -> None:
    client.users.create(id="user-1")

    assert client.users.single_metric("user-1", "words").current == 0


def test_metric_reads_raise_not_found_for_unknown_users_and_metrics(
    client: TrophyApi, words: CreatedMetric
) -> None:
    client.users.create(id="user-1")
    today = utc_today().isoformat()

    for call in (
        lambda: client.users.all_metrics("ghost"),
        lambda: client.users.single_metric("ghost", "words"),
        lambda: client.users.single_metric("user-1", "sentences"),
        lambda: client.users.metric_event_summary(
            "ghost", "words", aggregation="daily", start_date=today, end_date=today
        ),
        lambda: client.users.metric_event_summary(
            "user-1", "sentences", aggregation="daily", start_date=today, end_date=today
        ),
    ):
        with pytest.raises(NotFoundError) as caught:
            call()
        error_message(caught.value)


def test_daily_summary_has_one_bucket_per_day_with_change_and_running_total(
    client: TrophyApi, words: CreatedMetric
) -> None:
    before = utc_today()
    for value in (3, 0.5, -1.25):
        client.metrics.event("words", user={"id": "user-1"}, value=value)

    summary = client.users.metric_event_summary(
        "user-1",
        "words",
        aggregation="daily",
        start_date=(before - dt.timedelta(days=3)).isoformat(),
        end_date=(before + dt.timedelta(days=1)).isoformat(),
    )

    assert all(isinstance(item, UsersMetricEventSummaryResponseItem) for item in summary)
    assert [item.date for item in summary] == [
        (before + dt.timedelta(days=offset)).isoformat() for offset in range(-3, 2)
    ]
    active = [item for item in summary if item.change != 0]
    assert len(active) == 1
    assert active[0].date in {before.isoformat(), utc_today().isoformat()}
    assert active[0].change == 2.25
    assert [item.total for item in summary if item.date < active[0].date] == [0] * (
        summary.index(active[0])
    )
    assert all(item.total == 2.25 for item in summary[summary.index(active[0]) :])


def test_events_land_on_the_users_local_date(client: TrophyApi, words: CreatedMetric) -> None:
    # UTC+14: the user's local date is a day ahead of UTC for most of the UTC day.
    zone = "Pacific/Kiritimati"
    local_today = dt.datetime.now(zoneinfo.ZoneInfo(zone)).date()
    client.metrics.event("words", user=UpsertedUser(id="user-1", tz=zone), value=4)

    summary = client.users.metric_event_summary(
        "user-1",
        "words",
        aggregation="daily",
        start_date=(local_today - dt.timedelta(days=2)).isoformat(),
        end_date=(local_today + dt.timedelta(days=1)).isoformat(),
    )

    changed = {item.date: item.change for item in summary if item.change}
    assert changed == {local_today.isoformat(): 4}


def test_weekly_summary_buckets_start_on_sundays(client: TrophyApi, words: CreatedMetric) -> None:
    today = utc_today()
    client.metrics.event("words", user={"id": "user-1"}, value=6)

    summary = client.users.metric_event_summary(
        "user-1",
        "words",
        aggregation="weekly",
        start_date=(today - dt.timedelta(days=20)).isoformat(),
        end_date=today.isoformat(),
    )

    dates = [dt.date.fromisoformat(item.date) for item in summary]
    assert all(day.weekday() == 6 for day in dates)  # Sunday
    week = dt.timedelta(days=7)
    assert all(later - earlier == week for earlier, later in itertools.pairwise(dates))
    assert dates[0] <= today - dt.timedelta(days=20) < dates[0] + dt.timedelta(days=7)
    assert dates[-1] <= today < dates[-1] + dt.timedelta(days=7)
    assert [item.change for item in summary] == [0] * (len(summary) - 1) + [6]
    assert summary[-1].total == 6


def test_monthly_summary_buckets_start_on_the_first_of_the_month(
    client: TrophyApi, words: CreatedMetric
) -> None:
    today = utc_today()
    client.metrics.event("words", user={"id": "user-1"}, value=-2.5)
    start = (today.replace(day=1) - dt.timedelta(days=70)).replace(day=15)

    summary = client.users.metric_event_summary(
        "user-1",
        "words",
        aggregation="monthly",
        start_date=start.isoformat(),
        end_date=today.isoformat(),
    )

    dates = [dt.date.fromisoformat(item.date) for item in summary]
    assert all(day.day == 1 for day in dates)
    assert dates[0] == start.replace(day=1)
    assert dates[-1] == today.replace(day=1)
    assert len(dates) == 4
    assert [item.change for item in summary] == [0, 0, 0, -2.5]
    assert [item.total for item in summary] == [0, 0, 0, -2.5]


def test_summary_totals_include_events_before_the_range(
    client: TrophyApi, words: CreatedMetric
) -> None:
    today = utc_today()
    client.metrics.event("words", user={"id": "user-1"}, value=10)
    tomorrow = (today + dt.timedelta(days=1)).isoformat()

    summary = client.users.metric_event_summary(
        "user-1", "words", aggregation="daily", start_date=tomorrow, end_date=tomorrow
    )

    assert [(item.date, item.change, item.total) for item in summary] == [(tomorrow, 0, 10)]


@pytest.mark.parametrize(
    ("aggregation", "start", "end", "names"),
    [
        ("yearly", "2024-01-01", "2024-01-31", "aggregation"),
        ("daily", "2024-02-01", "2024-01-01", "startDate"),
        ("daily", "2023-01-01", "2024-12-31", "400"),
        ("daily", "2024-01-01", "01/31/2024", "endDate"),
    ],
)
def test_summary_parameters_are_validated_with_422(
    client: TrophyApi, words: CreatedMetric, aggregation: str, start: str, end: str, names: str
) -> None:
    client.users.create(id="user-1")

    with pytest.raises(UnprocessableEntityError) as caught:
        client.users.metric_event_summary(
            "user-1",
            "words",
            aggregation=aggregation,  # type: ignore[arg-type]
            start_date=start,
            end_date=end,
        )

    assert names in error_message(caught.value)
