"""The answers of metric events and of achievement completion, each one `Shape` that renders
and documents it (apps/core/api/shapes.py). EventResponse follows the Trophy wire model in
full; the achievement, streak, points and leaderboard shapes it carries are declared by their
apps' wire modules, shared with those apps' own endpoints."""

from decimal import Decimal
from typing import Any, NamedTuple

from rest_framework import serializers

from apps.achievements.wire import UserAchievementResponse, user_achievement_render
from apps.core.api.shapes import OMIT, Shape, out
from apps.leaderboards.wire import MetricEventLeaderboardResponse
from apps.metrics.selectors import MetricDef
from apps.pipeline.outcomes import (
    AchievementsOutcome,
    LeaderboardsOutcome,
    PointsOutcome,
    StreakOutcome,
)
from apps.points.wire import MetricEventPointsResponse
from apps.streaks.wire import MetricEventStreakResponse


class EventAnswer(NamedTuple):
    """What an event's answer is made of: the steps' outcomes (empty ones for a replay)."""

    event_id: str
    metric: MetricDef
    total: Decimal
    streak: StreakOutcome
    achievements: AchievementsOutcome
    points: PointsOutcome
    leaderboards: LeaderboardsOutcome
    idempotency_key: str | None
    replayed: bool


def _keyed(get: Any) -> Any:
    """A field written only when the request carried an Idempotency-Key."""
    return lambda answer, _: OMIT if answer.idempotency_key is None else get(answer)


class EventResponse(Shape):
    # Renders an EventAnswer.
    eventId = out(serializers.CharField(), "event_id")
    metricId = out(serializers.CharField(), "metric.public_id")
    total = serializers.FloatField(help_text="The user's new total of the metric.")
    achievements = out(
        UserAchievementResponse(many=True, help_text="Achievements this event completed."),
        lambda answer, _: answer.achievements.render(),
    )
    currentStreak = out(MetricEventStreakResponse(), lambda answer, _: answer.streak.render())
    points = out(
        serializers.DictField(
            child=MetricEventPointsResponse(), help_text="Points systems changed, by system key."
        ),
        lambda answer, _: answer.points.render(),
    )
    leaderboards = out(
        serializers.DictField(
            child=MetricEventLeaderboardResponse(),
            help_text="Leaderboards affected, by leaderboard key.",
        ),
        lambda answer, _: answer.leaderboards.render(),
    )
    idempotencyKey = out(
        serializers.CharField(
            required=False, help_text="Present when an Idempotency-Key was sent."
        ),
        _keyed(lambda answer: answer.idempotency_key),
    )
    idempotentReplayed = out(
        serializers.BooleanField(
            required=False, help_text="Present when an Idempotency-Key was sent."
        ),
        _keyed(lambda answer: answer.replayed),
    )


class BatchEventsResponse(Shape):
    # Renders the number of events queued.
    accepted = out(
        serializers.IntegerField(help_text="Number of events queued."), lambda count, _: count
    )


class AchievementCompletionResponse(Shape):
    # Renders a KeyedCompletion (apps.pipeline.intake).
    completionId = out(
        serializers.CharField(help_text="The completion's id."), "result.completion.completion_id"
    )
    achievement = out(
        UserAchievementResponse(help_text="The completed achievement."),
        lambda done, _: user_achievement_render(
            done.definition, done.result.completion.completed_at
        ),
    )
    points = out(
        serializers.DictField(
            child=MetricEventPointsResponse(),
            help_text="Points systems changed by the completion's achievement triggers, by key.",
        ),
        "result.points",
    )
