"""The answers of metric events and of achievement completion, each documented by a `Shape`
and rendered by the typed function below it (apps/core/api/shapes.py). EventResponse follows
the Trophy wire model in full; the achievement, streak, points and leaderboard shapes it
carries are declared by their apps' wire modules, shared with those apps' own endpoints."""

from decimal import Decimal
from typing import TYPE_CHECKING, Any, NamedTuple

from rest_framework import serializers

from apps.achievements.wire import UserAchievementResponse, user_achievement_response_render
from apps.core.api.shapes import Shape, renders
from apps.leaderboards.services import standings_render
from apps.leaderboards.wire import MetricEventLeaderboardResponse
from apps.metrics.selectors import MetricDef
from apps.pipeline.outcomes import (
    AchievementsOutcome,
    LeaderboardsOutcome,
    PointsOutcome,
    StreakOutcome,
)
from apps.points.wire import MetricEventPointsResponse, points_render
from apps.streaks.wire import MetricEventStreakResponse, metric_event_streak_response_render

if TYPE_CHECKING:  # the intake answers with this module's services
    from apps.pipeline.intake import KeyedCompletion


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


class EventResponse(Shape):
    # An EventAnswer. The idempotency fields are present when an Idempotency-Key was sent.
    eventId = serializers.CharField()
    metricId = serializers.CharField()
    total = serializers.FloatField(help_text="The user's new total of the metric.")
    achievements = UserAchievementResponse(
        many=True, help_text="Achievements this event completed."
    )
    currentStreak = MetricEventStreakResponse()
    points = serializers.DictField(
        child=MetricEventPointsResponse(), help_text="Points systems changed, by system key."
    )
    leaderboards = serializers.DictField(
        child=MetricEventLeaderboardResponse(),
        help_text="Leaderboards affected, by leaderboard key.",
    )
    idempotencyKey = serializers.CharField(
        required=False, help_text="Present when an Idempotency-Key was sent."
    )
    idempotentReplayed = serializers.BooleanField(
        required=False, help_text="Present when an Idempotency-Key was sent."
    )


@renders(EventResponse)
def event_response_render(answer: EventAnswer) -> dict[str, Any]:
    """The answer to an event, rendered once from the steps' outcomes."""
    streak = answer.streak
    body: dict[str, Any] = {
        "eventId": answer.event_id,
        "metricId": answer.metric.public_id,
        "total": answer.total,
        "achievements": [
            user_achievement_response_render(c.definition, c.completed_at)
            for c in answer.achievements.completed
        ],
        "currentStreak": metric_event_streak_response_render(streak.view, streak.extended),
        "points": points_render(answer.points.changes),
        "leaderboards": standings_render(answer.leaderboards.standings),
    }
    if answer.idempotency_key is not None:
        body["idempotencyKey"] = answer.idempotency_key
        body["idempotentReplayed"] = answer.replayed
    return body


class BatchEventsResponse(Shape):
    # The number of events queued.
    accepted = serializers.IntegerField(help_text="Number of events queued.")


@renders(BatchEventsResponse)
def batch_events_response_render(accepted: int) -> dict[str, Any]:
    return {"accepted": accepted}


class AchievementCompletionResponse(Shape):
    # A KeyedCompletion (apps.pipeline.intake).
    completionId = serializers.CharField(help_text="The completion's id.")
    achievement = UserAchievementResponse(help_text="The completed achievement.")
    points = serializers.DictField(
        child=MetricEventPointsResponse(),
        help_text="Points systems changed by the completion's achievement triggers, by key.",
    )


@renders(AchievementCompletionResponse)
def achievement_completion_response_render(done: "KeyedCompletion") -> dict[str, Any]:
    completion = done.result.completion
    return {
        "completionId": completion.completion_id,
        "achievement": user_achievement_response_render(done.definition, completion.completed_at),
        "points": done.result.points,
    }
