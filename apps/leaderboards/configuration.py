"""Writes of leaderboard configuration, for the admin API and the dashboard alike: creating,
changing (status changes are the `status` setting) and deleting a board. Every change bumps the
tenant's configuration version."""

import datetime as dt
from typing import Any, TypedDict, Unpack

from django.utils import timezone

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.arguments import arguments_check
from apps.core.errors import ValidationError
from apps.leaderboards import domain, ranks
from apps.leaderboards.choices import RankBy, Status
from apps.leaderboards.models import Leaderboard, LeaderboardEntry
from apps.leaderboards.selectors import ordered
from apps.metrics.models import Metric
from apps.points.selectors import points_system_get
from apps.users.choices import AttributeType
from apps.users.services import attribute_refs_check


class LeaderboardSettings(TypedDict, total=False):
    """What a board may be given besides its name, key and ranking. Ids are public ids; the
    attribute filters are {"attributeId", "attributeValue"} references."""

    description: str | None
    status: str  # a wish, as the dashboard's actions: "active" schedules a future board
    metric_id: str | None
    points_system_id: str | None
    max_participants: int
    start: dt.date
    end: dt.date | None
    start_time: dt.time | None
    end_time: dt.time | None
    breakdown_attributes: list[str] | None  # user attribute ids
    run_unit: str | None
    run_interval: int | None
    user_attributes: list[dict[str, str]] | None


class LeaderboardChanges(LeaderboardSettings, total=False):
    name: str
    key: str
    rank_by: str


# What a live board keeps, by the name its messages use (those of the admin API).
FROZEN_ONCE_LIVE = {"key": "key", "rank_by": "rankBy", "user_attributes": "userAttributes"}
_PLAIN = (
    "name",
    "description",
    "rank_by",
    "max_participants",
    "start",
    "end",
    "start_time",
    "end_time",
    "run_unit",
    "run_interval",
)


def leaderboard_create(
    tenant: Tenant, *, name: str, key: str, rank_by: str, **settings: Unpack[LeaderboardSettings]
) -> Leaderboard:
    """A new board, inactive unless `status` says otherwise; it starts today unless `start`
    says otherwise."""
    arguments_check("leaderboard_create", settings, LeaderboardSettings)
    board = Leaderboard(tenant=tenant, start=timezone.now().date())
    return _save(tenant, board, {"name": name, "key": key, "rank_by": rank_by, **settings})


def leaderboard_update(
    tenant: Tenant, board: Leaderboard, **changes: Unpack[LeaderboardChanges]
) -> Leaderboard:
    """Change the given settings; the others are kept. A live board keeps its key, ranking and
    participation filters (resending the stored value is not a change)."""
    arguments_check("leaderboard_update", changes, LeaderboardChanges)
    if board.status != Status.INACTIVE:
        current = {
            "key": board.key,
            "rank_by": board.rank_by,
            "user_attributes": board.user_attributes,
        }
        frozen = [
            wire
            for name, wire in FROZEN_ONCE_LIVE.items()
            if name in changes and changes[name] != current[name]  # type: ignore[literal-required]
        ]
        if frozen:
            raise ValidationError(
                f"{', '.join(frozen)} can only change while the leaderboard is inactive"
            )
    return _save(tenant, board, dict(changes), creating=False)


def _save(
    tenant: Tenant, board: Leaderboard, values: dict[str, Any], *, creating: bool = True
) -> Leaderboard:
    if "key" in values:
        clash = Leaderboard.objects.filter(tenant=tenant, key=values["key"]).exclude(pk=board.pk)
        if clash.exists():
            raise ValidationError("Key already in use by another leaderboard")
        board.key = values["key"]
    for name in _PLAIN:
        if name in values:
            setattr(board, name, values[name])
    if values.get("metric_id") is not None:
        board.metric = Metric.objects.filter(tenant=tenant, public_id=values["metric_id"]).first()
        if board.metric is None:
            raise ValidationError("metricId: Metric not found by ID")
    if values.get("points_system_id") is not None:
        board.points_system = points_system_get(tenant, values["points_system_id"])
        if board.points_system is None:
            raise ValidationError("pointsSystemId: Points system not found by ID")
    if "breakdown_attributes" in values:
        refs = [
            {"attributeId": a, "attributeValue": ""} for a in values["breakdown_attributes"] or []
        ]
        board.breakdown_attributes = [
            r["attributeId"] for r in attribute_refs_check(tenant, refs, AttributeType.USER)
        ]
    if "user_attributes" in values:
        board.user_attributes = attribute_refs_check(
            tenant, values["user_attributes"], AttributeType.USER
        )
    _validate(board)
    if "status" in values:
        _transition(board, values["status"])
    lowered = (
        not creating
        and "max_participants" in values
        and Leaderboard.objects.filter(
            pk=board.pk, max_participants__gt=board.max_participants
        ).exists()
    )
    board.save()
    if lowered:
        _trim(board)
    tenant_config_changed(tenant)
    return board


def _trim(board: Leaderboard) -> None:
    """A lowered maxParticipants keeps the top entries of every run and group."""
    runs = (
        LeaderboardEntry.objects.filter(leaderboard=board)
        .values_list("run_start", "group")
        .distinct()
    )
    for run_start, group in runs:
        extra = list(
            ordered(board.pk, run_start, group).values_list("pk", flat=True)[
                board.max_participants :
            ]
        )
        LeaderboardEntry.objects.filter(pk__in=extra).delete()
    ranks.forget_board(board.pk)


def _validate(board: Leaderboard) -> None:
    if board.rank_by == RankBy.METRIC and board.metric is None:
        raise ValidationError("metricId is required for metric leaderboards")
    if board.rank_by == RankBy.POINTS and board.points_system is None:
        raise ValidationError("pointsSystemId is required for points leaderboards")
    if board.rank_by != RankBy.METRIC:
        board.metric = None
    if board.rank_by != RankBy.POINTS:
        board.points_system = None
    if (board.run_unit is None) != (board.run_interval is None):
        raise ValidationError("runUnit and runInterval go together")
    if board.rank_by == RankBy.STREAK and board.run_unit is not None:
        raise ValidationError("Streak leaderboards can only be perpetual")
    if board.end is not None and board.end < board.start:
        raise ValidationError("end must not be before start")


def _transition(board: Leaderboard, wanted: str) -> None:
    """Status changes behave like the dashboard's actions (spec: States and transitions)."""
    today = timezone.now().date()
    if wanted in (Status.ACTIVE, Status.SCHEDULED):
        if board.end is not None and board.end < today:
            raise ValidationError("A leaderboard whose end date has passed cannot go live")
        board.status = domain.status_after_activation(board.start, today)
    elif wanted == Status.FINISHED:
        if board.end is None or board.end >= today:
            raise ValidationError("Only a leaderboard whose end date has passed can be finished")
        board.status = Status.FINISHED
    else:
        board.status = Status.INACTIVE  # back to editing; entries are kept


def leaderboard_delete(tenant: Tenant, board: Leaderboard) -> None:
    pk = board.pk
    board.delete()
    ranks.forget_board(pk)
    tenant_config_changed(tenant)
