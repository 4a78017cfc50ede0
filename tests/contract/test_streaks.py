"""Streaks through the SDK: admin settings, the streak on metric events, a user's streak and its
history, several users' streaks, preferences, and the admin freezes, pauses, restore and reset.

The live server runs on the real clock, so every scenario holds within the current UTC day
(every user here is a UTC user): an event extends a streak to 1, a second one the same day does
not, tomorrow and the days after only show up as expiry dates, and pauses start today or later.
"""

import datetime as dt
import time
import uuid
from typing import Any

import pytest
from trophy import TrophyApi
from trophy.core import ApiError
from trophy.errors import ForbiddenError, NotFoundError, UnprocessableEntityError
from trophy.types import (
    AdminIssue,
    AdminStreakPause,
    BulkStreakResponseItem,
    CreatedMetric,
    MetricEventStreakResponse,
    StreakResponse,
    StreakSettings,
    StreakSettingsFreezes,
    StreakSettingsMetric,
    UpdateStreakSettingsFreezes,
    UserPreferencesResponse,
)

from tests.contract.helpers import CONTRACT_DB, MakeClient, create_metric, error_message

pytestmark = [pytest.mark.contract, CONTRACT_DB]

UTC = dt.UTC


def today() -> dt.date:
    return dt.datetime.now(UTC).date()


def day(offset: int = 0) -> str:
    """Today (UTC) shifted by `offset` days, as the API writes dates."""
    return (today() + dt.timedelta(days=offset)).isoformat()


def sunday0(date: dt.date) -> int:
    """The numbering of daysOff: 0 = Sunday ... 6 = Saturday."""
    return (date.weekday() + 1) % 7


def act(client: TrophyApi, user: str, value: float = 1, key: str = "words") -> Any:
    """Send one metric event for a UTC user; the streak after it."""
    streak = client.metrics.event(key, user={"id": user, "tz": "UTC"}, value=value).current_streak
    assert isinstance(streak, MetricEventStreakResponse)
    return streak


def assert_recent(moment: dt.datetime | None) -> None:
    assert isinstance(moment, dt.datetime)
    assert moment.tzinfo is not None
    assert abs(dt.datetime.now(UTC) - moment) < dt.timedelta(minutes=1)


def issues_of(issues: list[AdminIssue]) -> list[tuple[str | None, str, str]]:
    return [(issue.user_id, issue.severity, issue.message) for issue in issues]


@pytest.fixture(autouse=True)
def _within_one_utc_day() -> None:
    """Each scenario must start and end on the same UTC date: a test starting in the last
    seconds of a day waits for the next one."""
    now = dt.datetime.now(UTC)
    midnight = dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(), tzinfo=UTC)
    if midnight - now < dt.timedelta(seconds=20):
        time.sleep((midnight - now).total_seconds() + 0.5)


@pytest.fixture
def daily(client: TrophyApi, words: CreatedMetric) -> TrophyApi:
    """A daily streak: at least 1 word a day."""
    client.admin.streaks.settings.update(
        frequency="daily", metrics=[StreakSettingsMetric(key="words", threshold=1)]
    )
    return client


@pytest.fixture
def with_freezes(daily: TrophyApi) -> TrophyApi:
    """The daily streak, with freezes: users start with 1, keep at most 2."""
    daily.admin.streaks.settings.update(
        freezes=UpdateStreakSettingsFreezes(start_count=1, max_count=2)
    )
    return daily


# --- admin: streak settings -------------------------------------------------------------------


def test_default_settings_are_a_daily_and_streak_without_metrics_or_freezes(
    client: TrophyApi,
) -> None:
    settings = client.admin.streaks.settings.get()

    assert isinstance(settings, StreakSettings)
    assert settings.frequency == "daily"
    assert settings.evaluation_mode == "AND"
    assert settings.customization_enabled is False
    assert settings.days_off == []
    assert settings.metrics == []
    assert settings.freezes is None


def test_update_sets_every_field_and_get_reads_them_back(
    client: TrophyApi, words: CreatedMetric
) -> None:
    create_metric(client, "lessons")

    response = client.admin.streaks.settings.with_raw_response.update(
        frequency="daily",
        evaluation_mode="OR",
        customization_enabled=True,
        days_off=[6, 0, 6],
        metrics=[{"key": "words", "threshold": 50}, {"key": "lessons", "threshold": 1}],
        freezes={"start_count": 1, "max_count": 3, "auto_earn_interval": 7, "auto_earn_amount": 2},
    )

    assert response.status_code == 200
    updated = response.data
    assert updated.frequency == "daily"
    assert updated.evaluation_mode == "OR"
    assert updated.customization_enabled is True
    assert updated.days_off == [0, 6]  # sorted, without duplicates
    assert sorted((m.key, m.threshold) for m in updated.metrics) == [
        ("lessons", 1),
        ("words", 50),
    ]
    assert updated.freezes == StreakSettingsFreezes(
        start_count=1, max_count=3, auto_earn_interval=7, auto_earn_amount=2
    )
    assert client.admin.streaks.settings.get() == updated


def test_update_keeps_omitted_fields_and_metrics_replace_the_whole_list(
    client: TrophyApi, words: CreatedMetric
) -> None:
    create_metric(client, "lessons")
    client.admin.streaks.settings.update(
        evaluation_mode="OR",
        days_off=[3],
        metrics=[{"key": "words", "threshold": 5}, {"key": "lessons", "threshold": 2}],
        freezes=UpdateStreakSettingsFreezes(start_count=0, max_count=1),
    )

    updated = client.admin.streaks.settings.update(
        metrics=[StreakSettingsMetric(key="lessons", threshold=4)]
    )

    assert [(m.key, m.threshold) for m in updated.metrics] == [("lessons", 4)]
    assert updated.evaluation_mode == "OR"
    assert updated.days_off == [3]
    assert updated.freezes is not None
    assert (updated.freezes.start_count, updated.freezes.max_count) == (0, 1)
    assert (updated.freezes.auto_earn_interval, updated.freezes.auto_earn_amount) == (None, None)
    assert client.admin.streaks.settings.update(metrics=[]).metrics == []


def test_freezes_none_disables_freezes(client: TrophyApi) -> None:
    enabled = client.admin.streaks.settings.update(
        freezes=UpdateStreakSettingsFreezes(start_count=2, max_count=2)
    )
    assert enabled.freezes is not None

    disabled = client.admin.streaks.settings.update(freezes=None)

    assert disabled.freezes is None
    assert client.admin.streaks.settings.get().freezes is None


def test_switching_away_from_daily_clears_days_off(client: TrophyApi) -> None:
    client.admin.streaks.settings.update(days_off=[0, 6])

    weekly = client.admin.streaks.settings.update(frequency="weekly")

    assert (weekly.frequency, weekly.days_off) == ("weekly", [])
    assert client.admin.streaks.settings.update(frequency="monthly").frequency == "monthly"


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"frequency": "weekly", "days_off": [0]}, "daysOff"),
        ({"days_off": [7]}, "daysOff"),
        ({"metrics": [{"key": "sentences", "threshold": 1}]}, "sentences"),
        (
            {"metrics": [{"key": "words", "threshold": 1}, {"key": "words", "threshold": 2}]},
            "unique",
        ),
        ({"metrics": [{"key": "words", "threshold": 0}]}, "threshold"),
        ({"freezes": {"start_count": 3, "max_count": 2}}, "maxCount"),
        ({"freezes": {"start_count": 0, "max_count": 2, "auto_earn_interval": 7}}, "autoEarn"),
    ],
)
def test_invalid_settings_are_rejected_with_422_and_change_nothing(
    client: TrophyApi, words: CreatedMetric, fields: dict[str, Any], expected: str
) -> None:
    before = client.admin.streaks.settings.get()

    with pytest.raises(UnprocessableEntityError) as caught:
        client.admin.streaks.settings.update(evaluation_mode="OR", **fields)

    assert expected in error_message(caught.value)
    assert client.admin.streaks.settings.get() == before


# --- the streak on a metric event -------------------------------------------------------------


def test_an_event_starts_a_streak_and_a_second_one_the_same_day_does_not_extend_it(
    daily: TrophyApi,
) -> None:
    first = act(daily, "ada")

    assert first.length == 1
    assert first.extended is True
    assert first.frequency == "daily"
    assert first.started == day()
    assert (first.period_start, first.period_end) == (day(), day())
    assert first.expires == day(1)
    assert (first.freezes, first.max_freezes) == (None, None)  # freezes are disabled
    assert (first.freeze_auto_earn_interval, first.freeze_auto_earn_amount) == (None, None)

    second = act(daily, "ada", value=4)

    assert (second.length, second.extended, second.started) == (1, False, day())
    assert second.expires == day(1)


def test_without_streak_metrics_an_event_leaves_the_streak_at_zero(
    client: TrophyApi, words: CreatedMetric
) -> None:
    streak = act(client, "ada")

    assert (streak.length, streak.extended) == (0, False)
    assert (streak.started, streak.expires) == (None, None)
    assert (streak.period_start, streak.period_end) == (day(), day())


def test_a_metric_outside_the_streak_conditions_does_not_extend(daily: TrophyApi) -> None:
    create_metric(daily, "lessons")

    streak = act(daily, "ada", key="lessons")

    assert (streak.length, streak.extended) == (0, False)


def test_changes_add_up_within_the_period_until_the_threshold_is_met(
    client: TrophyApi, words: CreatedMetric
) -> None:
    client.admin.streaks.settings.update(metrics=[{"key": "words", "threshold": 5}])

    below = act(client, "ada", value=3)
    met = act(client, "ada", value=2)

    assert (below.length, below.extended) == (0, False)
    assert (met.length, met.extended, met.started) == (1, True, day())


@pytest.mark.parametrize(("mode", "extended_by_one_metric"), [("AND", False), ("OR", True)])
def test_the_evaluation_mode_decides_whether_one_metric_is_enough(
    client: TrophyApi, words: CreatedMetric, mode: str, extended_by_one_metric: bool
) -> None:
    create_metric(client, "lessons")
    client.admin.streaks.settings.update(
        evaluation_mode=mode,
        metrics=[{"key": "words", "threshold": 1}, {"key": "lessons", "threshold": 1}],
    )

    one = act(client, "ada", key="words")
    both = act(client, "ada", key="lessons")

    assert (one.length, one.extended) == (int(extended_by_one_metric), extended_by_one_metric)
    assert (both.length, both.extended) == (1, not extended_by_one_metric)


def test_freeze_fields_are_present_once_freezes_are_enabled(daily: TrophyApi) -> None:
    daily.admin.streaks.settings.update(
        freezes={"start_count": 2, "max_count": 3, "auto_earn_interval": 7, "auto_earn_amount": 1}
    )

    streak = act(daily, "ada")

    assert (streak.length, streak.extended) == (1, True)
    assert (streak.freezes, streak.max_freezes) == (2, 3)
    assert (streak.freeze_auto_earn_interval, streak.freeze_auto_earn_amount) == (7, 1)
    # Tomorrow and the day after are covered by the two freezes.
    assert streak.expires == day(3)


def test_freeze_auto_earn_fields_are_left_out_without_auto_earn(with_freezes: TrophyApi) -> None:
    streak = act(with_freezes, "ada")

    assert (streak.freezes, streak.max_freezes) == (1, 2)
    assert (streak.freeze_auto_earn_interval, streak.freeze_auto_earn_amount) == (None, None)
    assert streak.expires == day(2)


def test_a_day_off_tomorrow_pushes_the_expiry_back(daily: TrophyApi) -> None:
    tomorrow = today() + dt.timedelta(days=1)
    daily.admin.streaks.settings.update(days_off=[sunday0(tomorrow)])

    streak = act(daily, "ada")

    assert (streak.length, streak.expires) == (1, day(2))


def test_a_weekly_streak_spans_sunday_to_saturday(client: TrophyApi, words: CreatedMetric) -> None:
    client.admin.streaks.settings.update(
        frequency="weekly", metrics=[{"key": "words", "threshold": 1}]
    )
    sunday = today() - dt.timedelta(days=sunday0(today()))

    streak = act(client, "ada")

    assert (streak.frequency, streak.length, streak.extended) == ("weekly", 1, True)
    assert streak.period_start == sunday.isoformat()
    assert streak.period_end == (sunday + dt.timedelta(days=6)).isoformat()
    assert streak.started == sunday.isoformat()
    assert streak.expires == (sunday + dt.timedelta(days=13)).isoformat()
    history = client.users.streak("ada", history_periods=2).streak_history
    assert [(h.period_start, h.length) for h in history] == [
        ((sunday - dt.timedelta(days=7)).isoformat(), 0),
        (sunday.isoformat(), 1),
    ]


# --- a user's streak --------------------------------------------------------------------------


def test_a_user_without_activity_has_an_empty_streak_and_history(daily: TrophyApi) -> None:
    daily.users.create(id="ada", tz="UTC")

    streak = daily.users.streak("ada", history_periods=3)

    assert isinstance(streak, StreakResponse)
    assert (streak.length, streak.frequency) == (0, "daily")
    assert (streak.started, streak.expires, streak.extended) == (None, None, None)
    assert (streak.period_start, streak.period_end) == (day(), day())
    assert [(h.period_start, h.period_end, h.length) for h in streak.streak_history] == [
        (day(-2), day(-2), 0),
        (day(-1), day(-1), 0),
        (day(), day(), 0),
    ]
    assert all(h.used_pause is False and h.used_freeze is None for h in streak.streak_history)
    assert all(h.reset_at is None for h in streak.streak_history)
    assert streak.pauses == []


def test_a_user_streak_after_an_extension(daily: TrophyApi) -> None:
    act(daily, "ada")

    streak = daily.users.streak("ada", history_periods=5)

    assert (streak.length, streak.started, streak.expires) == (1, day(), day(1))
    assert_recent(streak.extended)
    history = streak.streak_history
    assert [h.period_start for h in history] == [day(offset) for offset in range(-4, 1)]
    assert [h.length for h in history] == [0, 0, 0, 0, 1]
    assert all(h.period_end == h.period_start for h in history)


def test_history_covers_seven_periods_by_default(daily: TrophyApi) -> None:
    act(daily, "ada")

    history = daily.users.streak("ada").streak_history

    assert len(history) == 7
    assert (history[0].period_start, history[-1].period_start) == (day(-6), day())


def test_history_reports_used_freeze_once_freezes_are_enabled(with_freezes: TrophyApi) -> None:
    act(with_freezes, "ada")

    streak = with_freezes.users.streak("ada", history_periods=2)

    assert (streak.freezes, streak.max_freezes) == (1, 2)
    assert [(h.length, h.used_freeze) for h in streak.streak_history] == [(0, False), (1, False)]


def test_an_unknown_user_streak_is_404(daily: TrophyApi) -> None:
    with pytest.raises(NotFoundError) as caught:
        daily.users.streak("ghost")

    assert "ghost" in error_message(caught.value)


@pytest.mark.parametrize("periods", [0, 366])
def test_history_periods_out_of_range_is_422(daily: TrophyApi, periods: int) -> None:
    act(daily, "ada")

    with pytest.raises(UnprocessableEntityError) as caught:
        daily.users.streak("ada", history_periods=periods)

    assert "historyPeriods" in error_message(caught.value)


# --- several users' streaks -------------------------------------------------------------------


def test_streaks_list_longest_first_and_omits_unknown_users(daily: TrophyApi) -> None:
    act(daily, "zoe")
    act(daily, "mia")
    act(daily, "ada", key="words", value=0)  # known, but no streak

    streaks = daily.streaks.list(user_ids=["ada", "ghost", "zoe", "mia"])

    assert all(isinstance(item, BulkStreakResponseItem) for item in streaks)
    assert [(item.user_id, item.streak_length) for item in streaks] == [
        ("mia", 1),
        ("zoe", 1),
        ("ada", 0),
    ]
    for item in streaks[:2]:
        assert item.extended is not None
        assert_recent(dt.datetime.fromisoformat(item.extended))
    assert streaks[2].extended is None


def test_streaks_list_with_a_single_user_id(daily: TrophyApi) -> None:
    act(daily, "ada")

    streaks = daily.streaks.list(user_ids="ada")

    assert [(item.user_id, item.streak_length) for item in streaks] == [("ada", 1)]


def test_streaks_list_without_user_ids_is_422(daily: TrophyApi) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        daily.streaks.list()

    assert "userIds" in error_message(caught.value)


# --- preferences ------------------------------------------------------------------------------


def test_default_preferences_have_no_streak_part_without_customization(daily: TrophyApi) -> None:
    daily.users.create(id="ada", tz="UTC")

    prefs = daily.users.get_preferences("ada")

    assert isinstance(prefs, UserPreferencesResponse)
    assert prefs.streak is None
    assert prefs.notifications.recap in (None, [])


def test_notification_preferences_are_merged_per_type(daily: TrophyApi) -> None:
    daily.users.create(id="ada", tz="UTC")

    daily.users.update_preferences(
        "ada", notifications={"recap": ["email"], "streak_reminder": ["email", "push"]}
    )
    updated = daily.users.update_preferences("ada", notifications={"streak_reminder": []})

    assert updated.notifications.recap == ["email"]
    assert updated.notifications.streak_reminder == []
    assert daily.users.get_preferences("ada") == updated


def test_disabling_the_streak_is_always_allowed_and_keeps_it_at_zero(daily: TrophyApi) -> None:
    assert act(daily, "ada").length == 1

    disabled = daily.users.update_preferences("ada", streak={"enabled": False})

    assert disabled.streak is not None
    assert disabled.streak.enabled is False
    assert (disabled.streak.evaluation_mode, disabled.streak.metrics) == (None, None)
    assert daily.users.get_preferences("ada").streak == disabled.streak
    assert daily.users.streak("ada").length == 0
    assert (act(daily, "ada").length, act(daily, "ada").extended) == (0, False)

    enabled = daily.users.update_preferences("ada", streak={"enabled": True})

    assert enabled.streak is None  # back to the tenant's rules, nothing personal to show
    assert (act(daily, "ada").length, act(daily, "ada").length) == (1, 1)


@pytest.mark.parametrize(
    "streak",
    [
        {"evaluation_mode": "OR"},
        {"metrics": [{"key": "words", "threshold": 2}]},
        {"days_off": [0]},
        {"enabled": True, "days_off": []},
    ],
)
def test_personal_streak_rules_are_403_when_customization_is_disabled(
    daily: TrophyApi, streak: dict[str, Any]
) -> None:
    daily.users.create(id="ada", tz="UTC")

    with pytest.raises(ForbiddenError) as caught:
        daily.users.update_preferences("ada", streak=streak)

    assert caught.value.status_code == 403
    assert "customization" in error_message(caught.value)
    assert daily.users.get_preferences("ada").streak is None


def test_personal_streak_rules_apply_when_customization_is_enabled(daily: TrophyApi) -> None:
    daily.admin.streaks.settings.update(customization_enabled=True)
    daily.users.create(id="ada", tz="UTC")

    updated = daily.users.update_preferences(
        "ada",
        streak={
            "evaluation_mode": "OR",
            "metrics": [{"key": "words", "threshold": 2.5}],
            "days_off": [6, 0],
        },
    )

    assert updated.streak is not None
    assert updated.streak.enabled is True
    assert updated.streak.evaluation_mode == "OR"
    assert [(m.key, m.threshold) for m in updated.streak.metrics or []] == [("words", 2.5)]
    assert updated.streak.days_off == [0, 6]
    assert daily.users.get_preferences("ada") == updated
    # The personal threshold of 2.5 replaces the tenant's 1.
    assert (act(daily, "ada", value=2).length, act(daily, "ada", value=1).length) == (0, 1)


def test_an_unknown_metric_in_preferences_is_422(daily: TrophyApi) -> None:
    daily.admin.streaks.settings.update(customization_enabled=True)
    daily.users.create(id="ada", tz="UTC")

    with pytest.raises(UnprocessableEntityError) as caught:
        daily.users.update_preferences(
            "ada", streak={"metrics": [{"key": "sentences", "threshold": 1}]}
        )

    assert "sentences" in error_message(caught.value)


def test_preferences_of_an_unknown_user_are_404(daily: TrophyApi) -> None:
    with pytest.raises(NotFoundError):
        daily.users.get_preferences("ghost")
    with pytest.raises(NotFoundError):
        daily.users.update_preferences("ghost", streak={"enabled": False})


# --- admin: freezes ---------------------------------------------------------------------------


def test_granting_freezes_needs_freezes_enabled(daily: TrophyApi) -> None:
    act(daily, "ada")

    with pytest.raises(UnprocessableEntityError) as caught:
        daily.admin.streaks.freezes.create(freezes=[{"user_id": "ada"}])

    assert "freezes" in error_message(caught.value).lower()


def test_freezes_are_granted_up_to_the_maximum(with_freezes: TrophyApi) -> None:
    act(with_freezes, "ada")

    granted = with_freezes.admin.streaks.freezes.with_raw_response.create(
        freezes=[{"user_id": "ada"}]
    )

    assert granted.status_code == 201
    assert granted.data.issues == []
    assert with_freezes.users.streak("ada").freezes == 2
    assert with_freezes.users.streak("ada").expires == day(3)

    over = with_freezes.admin.streaks.freezes.with_raw_response.create(freezes=[{"user_id": "ada"}])

    assert over.status_code == 200
    assert issues_of(over.data.issues) == [("ada", "warning", "Would exceed maximum freeze limit")]
    assert with_freezes.users.streak("ada").freezes == 2


def test_a_repeated_user_gets_one_freeze_per_item_until_the_cap(with_freezes: TrophyApi) -> None:
    with_freezes.users.create(id="ada", tz="UTC")

    response = with_freezes.admin.streaks.freezes.create(
        freezes=[{"user_id": "ada"}, {"user_id": "ada"}]
    )

    assert issues_of(response.issues) == [("ada", "warning", "Would exceed maximum freeze limit")]
    assert with_freezes.users.streak("ada").freezes == 2


def test_an_unknown_user_is_an_error_issue_and_other_grants_proceed(
    with_freezes: TrophyApi,
) -> None:
    with_freezes.users.create(id="ada", tz="UTC")

    response = with_freezes.admin.streaks.freezes.with_raw_response.create(
        freezes=[{"user_id": "ghost"}, {"user_id": "ada"}]
    )

    assert response.status_code == 201
    assert issues_of(response.data.issues) == [("ghost", "error", 'User not found: "ghost"')]
    assert with_freezes.users.streak("ada").freezes == 2


# --- admin: pauses ----------------------------------------------------------------------------


def test_a_pause_is_created_listed_and_keeps_the_streak_past_its_days(daily: TrophyApi) -> None:
    act(daily, "ada")

    response = daily.admin.streaks.pauses.with_raw_response.create(
        pauses=[{"user_id": "ada", "start": day(1), "end": day(2)}]
    )

    assert response.status_code == 201
    assert response.data.issues == []
    (pause,) = response.data.created
    assert isinstance(pause, AdminStreakPause)
    assert uuid.UUID(pause.id)
    assert (pause.user_id, pause.start, pause.end, pause.status) == (
        "ada",
        day(1),
        day(2),
        "active",
    )
    streak = daily.users.streak("ada")
    assert [(p.id, p.start, p.end) for p in streak.pauses] == [(pause.id, day(1), day(2))]
    assert (streak.length, streak.expires) == (1, day(3))
    assert daily.streaks.list(user_ids=["ada"])[0].streak_length == 1


def test_a_pause_may_start_today(daily: TrophyApi) -> None:
    daily.users.create(id="ada", tz="UTC")

    created = daily.admin.streaks.pauses.create(
        pauses=[{"user_id": "ada", "start": day(), "end": day()}]
    ).created

    assert [(p.start, p.end) for p in created] == [(day(), day())]
    assert [p.id for p in daily.users.streak("ada").pauses] == [created[0].id]


def test_invalid_pauses_are_error_issues_and_create_nothing(daily: TrophyApi) -> None:
    daily.users.create(id="ada", tz="UTC")

    response = daily.admin.streaks.pauses.with_raw_response.create(
        pauses=[
            {"user_id": "ada", "start": day(-1), "end": day(1)},
            {"user_id": "ada", "start": day(3), "end": day(2)},
            {"user_id": "ada", "start": "tomorrow", "end": day(2)},
            {"user_id": "ghost", "start": day(1), "end": day(2)},
        ]
    )

    assert response.status_code == 200
    assert response.data.created == []
    issues = response.data.issues
    assert [(i.user_id, i.severity) for i in issues] == [
        ("ada", "error"),
        ("ada", "error"),
        ("ada", "error"),
        ("ghost", "error"),
    ]
    assert "today" in issues[0].message
    assert "end" in issues[1].message
    assert "start" in issues[2].message
    assert issues[3].message == 'User not found: "ghost"'
    assert daily.users.streak("ada").pauses == []


def test_deleting_pauses_archives_them_and_reports_unknown_ids(daily: TrophyApi) -> None:
    act(daily, "ada")
    created = daily.admin.streaks.pauses.create(
        pauses=[
            {"user_id": "ada", "start": day(1), "end": day(1)},
            {"user_id": "ada", "start": day(5), "end": day(6)},
        ]
    ).created
    first, second = (pause.id for pause in created)
    unknown = str(uuid.uuid4())

    response = daily.admin.streaks.pauses.delete(ids=[first, unknown, "not-a-uuid"])

    assert [deleted.id for deleted in response.deleted] == [first]
    assert [(i.id, i.severity, i.message) for i in response.issues] == [
        (unknown, "error", "Streak pause not found by ID"),
        ("not-a-uuid", "error", "Streak pause not found by ID"),
    ]
    streak = daily.users.streak("ada")
    assert [p.id for p in streak.pauses] == [second]
    assert streak.expires == day(1)

    again = daily.admin.streaks.pauses.delete(ids=first)

    assert again.deleted == []
    assert [(i.id, i.severity) for i in again.issues] == [(first, "error")]


# --- admin: reset and restore -----------------------------------------------------------------


def test_reset_sets_the_streak_to_zero_and_restore_brings_it_back(daily: TrophyApi) -> None:
    act(daily, "ada")

    reset = daily.admin.streaks.with_raw_response.reset(users=[{"id": "ada"}, {"id": "ghost"}])

    assert reset.status_code == 201
    assert reset.data.reset_users == ["ada"]
    assert issues_of(reset.data.issues) == [("ghost", "error", 'User not found: "ghost"')]
    streak = daily.users.streak("ada", history_periods=2)
    assert (streak.length, streak.started, streak.expires, streak.extended) == (0, None, None, None)
    yesterday, current = streak.streak_history
    assert (yesterday.length, yesterday.reset_at) == (0, None)
    assert (current.period_start, current.length) == (day(), 0)
    assert_recent(current.reset_at)
    assert daily.streaks.list(user_ids=["ada"])[0].streak_length == 0

    restore = daily.admin.streaks.with_raw_response.restore(users=[{"id": "ada"}])

    assert restore.status_code == 201
    assert (restore.data.restored_users, restore.data.issues) == (["ada"], [])
    restored = daily.users.streak("ada")
    assert restored.length == 1
    assert_recent(restored.extended)
    assert restored.expires is not None
    assert daily.streaks.list(user_ids=["ada"])[0].streak_length == 1


def test_a_streak_restored_to_todays_length_counts_today_as_done(daily: TrophyApi) -> None:
    # The restored length 1 is today's extension: the streak started today, and today's
    # activity already keeps it alive until tomorrow.
    act(daily, "ada")
    daily.admin.streaks.reset(users=[{"id": "ada"}])
    daily.admin.streaks.restore(users=[{"id": "ada"}])

    restored = daily.users.streak("ada", history_periods=2)

    assert (restored.length, restored.started, restored.expires) == (1, day(), day(1))


def test_an_event_after_a_restore_the_same_day_does_not_count_the_day_twice(
    daily: TrophyApi,
) -> None:
    # The user acted on one day only, so no sequence of admin calls should give a streak of 2.
    act(daily, "ada")
    daily.admin.streaks.reset(users=[{"id": "ada"}])
    daily.admin.streaks.restore(users=[{"id": "ada"}])

    after = act(daily, "ada")

    assert after.length == 1


def test_restore_with_nothing_to_restore_is_a_warning(daily: TrophyApi) -> None:
    daily.users.create(id="ada", tz="UTC")
    act(daily, "bea")

    response = daily.admin.streaks.with_raw_response.restore(
        users=[{"id": "ada"}, {"id": "bea"}, {"id": "ghost"}]
    )

    assert response.status_code == 200
    assert response.data.restored_users == []
    assert issues_of(response.data.issues) == [
        ("ada", "warning", "No streak to restore"),
        ("bea", "warning", "No streak to restore"),
        ("ghost", "error", 'User not found: "ghost"'),
    ]
    assert daily.users.streak("bea").length == 1


def test_an_event_after_a_reset_the_same_day_starts_a_new_streak(daily: TrophyApi) -> None:
    act(daily, "ada")
    daily.admin.streaks.reset(users=[{"id": "ada"}])

    after = act(daily, "ada")

    assert (after.length, after.extended, after.started) == (1, True, day())


def test_reset_and_restore_bodies_must_name_users(daily: TrophyApi) -> None:
    with pytest.raises(UnprocessableEntityError):
        daily.admin.streaks.reset(users=[])
    with pytest.raises(UnprocessableEntityError):
        daily.admin.streaks.restore(users=[])


def test_the_admin_streak_endpoints_refuse_an_unknown_key(
    daily: TrophyApi, make_client: MakeClient
) -> None:
    anonymous = make_client("not-a-key")

    for call in (
        anonymous.admin.streaks.settings.get,
        lambda: anonymous.admin.streaks.reset(users=[{"id": "ada"}]),
    ):
        with pytest.raises(ApiError) as caught:
            call()
        assert caught.value.status_code == 401
