"""Writes of leaderboard configuration, for the admin API and the dashboard alike: creating,
changing (status changes are the `status` setting) and deleting a board. Every change bumps the
tenant's configuration version."""

from typing import Any

from django.utils import timezone

from apps.accounts.history import ALL, recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.declarations import given_values, required_check
from apps.core.errors import ValidationError
from apps.leaderboards import domain, ranks
from apps.leaderboards.choices import RankBy, Status
from apps.leaderboards.domain import FROZEN_ONCE_LIVE, LeaderboardSettings
from apps.leaderboards.models import Leaderboard, LeaderboardEntry
from apps.leaderboards.selectors import leaderboard_deletion_impact, ordered
from apps.metrics.models import Metric
from apps.points.selectors import points_system_get
from apps.users.choices import AttributeType
from apps.users.configuration import attribute_refs_check

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


@recorded("leaderboard")
def leaderboard_create(tenant: Tenant, settings: LeaderboardSettings) -> Leaderboard:
    """A new board, inactive unless `status` says otherwise; it starts today unless `start`
    says otherwise."""
    required_check(settings)
    values = given_values(settings)
    return _save(tenant, Leaderboard(tenant=tenant, start=timezone.now().date()), values)


@recorded("leaderboard")
def leaderboard_update(
    tenant: Tenant, board: Leaderboard, changes: LeaderboardSettings
) -> Leaderboard:
    """Change the given settings; the others are kept. A live board keeps its key, ranking and
    participation filters (resending the stored value is not a change)."""
    values = given_values(changes)
    if board.status != Status.INACTIVE:
        frozen = [
            name
            for name in FROZEN_ONCE_LIVE
            if name in values and values[name] != getattr(board, name)
        ]
        if frozen:
            placeholders = ", ".join("{" + name + "}" for name in frozen)
            raise ValidationError(
                f"{placeholders} can only change while the leaderboard is inactive",
                fields=frozen,
                code="frozen",
            )
    return _save(tenant, board, values, creating=False)


def _save(
    tenant: Tenant, board: Leaderboard, values: dict[str, Any], *, creating: bool = True
) -> Leaderboard:
    if "key" in values:
        clash = Leaderboard.objects.filter(tenant=tenant, key=values["key"]).exclude(pk=board.pk)
        if clash.exists():
            raise ValidationError(
                "Key already in use by another leaderboard", fields="key", code="unique"
            )
        board.key = values["key"]
    for name in _PLAIN:
        if name in values:
            setattr(board, name, values[name])
    if values.get("metric_id") is not None:
        board.metric = Metric.objects.filter(tenant=tenant, public_id=values["metric_id"]).first()
        if board.metric is None:
            raise ValidationError(
                "{metric_id}: Metric not found by ID", fields="metric_id", code="not_found"
            )
    if values.get("points_system_id") is not None:
        board.points_system = points_system_get(tenant, values["points_system_id"])
        if board.points_system is None:
            raise ValidationError(
                "{points_system_id}: Points system not found by ID",
                fields="points_system_id",
                code="not_found",
            )
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
        raise ValidationError(
            "{metric_id} is required for metric leaderboards", fields="metric_id", code="required"
        )
    if board.rank_by == RankBy.POINTS and board.points_system is None:
        raise ValidationError(
            "{points_system_id} is required for points leaderboards",
            fields="points_system_id",
            code="required",
        )
    if board.rank_by != RankBy.METRIC:
        board.metric = None
    if board.rank_by != RankBy.POINTS:
        board.points_system = None
    if (board.run_unit is None) != (board.run_interval is None):
        raise ValidationError(
            "{run_unit} and {run_interval} go together",
            fields=("run_unit", "run_interval"),
            code="conflict",
        )
    if board.rank_by == RankBy.STREAK and board.run_unit is not None:
        raise ValidationError("Streak leaderboards can only be perpetual")
    if board.end is not None and board.end < board.start:
        raise ValidationError(
            "{end} must not be before {start}", fields=("end", "start"), code="out_of_range"
        )


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


@recorded(ALL)
def leaderboard_delete(tenant: Tenant, board: Leaderboard, *, confirm: str = "") -> None:
    """Deletes the leaderboard with its rankings and history. One that ranks users needs its key
    as `confirm` (leaderboard_deletion_impact); deactivating it instead (status inactive) keeps
    its rankings out of the API."""
    leaderboard_deletion_impact(tenant, board).check(confirm=confirm)
    pk = board.pk
    board.delete()
    ranks.forget_board(pk)
    tenant_config_changed(tenant)
