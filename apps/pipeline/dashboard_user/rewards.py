"""The points, achievements and leaderboards cards of the end-user page."""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from apps.accounts.models import Tenant
from apps.achievements.choices import Status as AchievementStatus
from apps.achievements.choices import Trigger
from apps.achievements.domain import anniversary_date
from apps.achievements.selectors import (
    AchievementDef,
    achievement_definitions,
    user_completion_rows,
)
from apps.core.wording import counted
from apps.leaderboards.choices import Status as BoardStatus
from apps.leaderboards.selectors import board_definitions, run_current, user_standing
from apps.metrics.selectors import metric_definitions, metric_filtered_total
from apps.pipeline.dashboard_user.metrics import amount
from apps.points.choices import SystemStatus
from apps.points.models import PointsAward
from apps.points.selectors import points_config, user_awards_latest, user_points_totals
from apps.users.models import EndUser

RECENT_AWARDS = 10

# --- points --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SystemRow:
    pk: int
    key: str
    name: str
    total: int
    archived: bool
    level: str | None
    next_level: str | None
    next_points: int | None
    percent: int | None  # of the way from the current level to the next
    top: bool = False  # the user holds the highest level of an active system


def _system_row(total: Any, levels: tuple[Any, ...]) -> SystemRow:
    """`levels`: the system's levels by threshold (points_config: none for an archived system,
    which awards no more points, so it has no next level, and no "top level" either for a user
    below its highest one)."""
    archived = total.system.status == SystemStatus.ARCHIVED
    above = [level for level in levels if level.points > total.total]
    below = [level for level in levels if level.points <= total.total]
    following = above[0] if above else None
    percent = None
    if following is not None:
        floor = below[-1].points if below else 0
        percent = int((total.total - floor) * 100 // max(1, following.points - floor))
    return SystemRow(
        pk=total.system_id,
        key=total.system.key,
        name=total.system.name,
        total=total.total,
        archived=archived,
        level=total.level.name if total.level is not None else None,
        next_level=following.name if following else None,
        next_points=following.points if following else None,
        percent=percent,
        top=not archived and bool(below) and following is None,
    )


@dataclass(frozen=True)
class AwardRow:
    created: dt.datetime
    system: str
    awarded: int
    total_after: int
    trigger: str
    boosts: str


def _award_row(award: PointsAward) -> AwardRow:
    trigger = award.trigger_snapshot or {}
    boosts = ", ".join(
        f"{boost.get('name', '?')} x{boost.get('multiplier', '?')}" for boost in award.boosts or []
    )
    return AwardRow(
        created=award.created,
        system=award.system.key,
        awarded=award.awarded,
        total_after=award.total_after,
        trigger=str(trigger.get("type", "-")).replace("_", " "),
        boosts=boosts,
    )


def points_rows(tenant: Tenant, user: EndUser) -> tuple[list[SystemRow], list[AwardRow]]:
    """Totals with level and the way to the next one, then the latest awards: two queries."""
    levels = {system.pk: system.levels for system in points_config(tenant).values()}
    systems = [_system_row(t, levels.get(t.system_id, ())) for t in user_points_totals(user)]
    awards = [_award_row(a) for a in user_awards_latest(user, RECENT_AWARDS)]
    return systems, awards


# --- achievements --------------------------------------------------------------------------


@dataclass(frozen=True)
class AchievementRow:
    pk: int
    name: str
    key: str | None
    trigger: str
    status: str
    completed_at: dt.datetime | None = None
    backdated: bool = False
    progress: str = ""  # how far the user is, in words
    percent: int | None = None
    completable: bool = False  # an API achievement staff may complete for the user

    @property
    def locked(self) -> bool:
        return self.status == AchievementStatus.LOCKED


def _percent(done: Decimal | int, target: Decimal | int | None) -> int | None:
    if not target or target <= 0:
        return None
    return int(min(Decimal(100), Decimal(done) * 100 / Decimal(target)))


class _Progress:
    """How far a user is towards the achievements they have not completed; each total is read
    once, whatever the number of achievements counting it."""

    def __init__(
        self,
        tenant: Tenant,
        user: EndUser,
        totals: dict[int, Decimal],
        streak_length: int,
        done: set[int],
    ):
        self.user, self.totals, self.streak_length, self.done = user, totals, streak_length, done
        self.filtered: dict[tuple[int, tuple[tuple[str, str], ...]], Decimal] = {}
        self.names = {m.pk: m.name for m in metric_definitions(tenant).values()}

    def metric(self, d: AchievementDef) -> tuple[str, int | None]:
        if d.metric_pk is None or d.metric_value is None:
            return "-", None
        if d.event_filters is None:
            return "never: an event filter names a deleted attribute", None
        total = self.totals.get(d.metric_pk, Decimal(0))
        if d.event_filters:
            signature = (d.metric_pk, tuple(sorted(d.event_filters.items())))
            if signature not in self.filtered:
                self.filtered[signature] = metric_filtered_total(
                    self.user, d.metric_pk, d.event_filters
                )
            total = self.filtered[signature]
        name = self.names.get(d.metric_pk, d.metric_name or "")
        return f"{amount(total)} of {amount(d.metric_value)} {name}", _percent(
            total, d.metric_value
        )

    def of(self, d: AchievementDef) -> tuple[str, int | None]:
        if d.trigger == Trigger.METRIC:
            return self.metric(d)
        if d.trigger == Trigger.STREAK:
            target = d.streak_length or 0
            return f"streak {self.streak_length} of {target}", _percent(self.streak_length, target)
        if d.trigger == Trigger.ACHIEVEMENT:
            have = len(d.prerequisites & self.done)
            return f"{have} of {counted(len(d.prerequisites), 'prerequisite')}", _percent(
                have, len(d.prerequisites)
            )
        if d.trigger == Trigger.ANNIVERSARY:
            sign_up = self.user.sign_up_date
            if sign_up is None:
                return "no sign-up date", None
            return f"due on {anniversary_date(sign_up, d.anniversary_years or 0):%d %b %Y}", None
        return "by the API, or from here", None


def achievement_rows(
    tenant: Tenant, user: EndUser, totals: dict[int, Decimal], streak_length: int
) -> tuple[list[AchievementRow], list[AchievementRow]]:
    """(completed, not yet): completed ones oldest first, whatever their status now; then the
    active and locked ones the user has not completed, in the tenant's order. `totals`:
    user_metric_totals(user); `streak_length`: the streak as read now."""
    definitions = achievement_definitions(tenant)
    completions = user_completion_rows(user)
    done = {c.achievement_id for c in completions}
    completed = [
        _row(definitions[c.achievement_id], completed_at=c.completed_at, backdated=c.backdated)
        for c in completions
        if c.achievement_id in definitions
    ]
    progress = _Progress(tenant, user, totals, streak_length, done)
    pending = []
    for d in definitions.values():
        if d.pk in done or d.status == AchievementStatus.INACTIVE:
            continue
        words, percent = progress.of(d)
        if not d.open_to(user.attributes):
            words, percent = "not open to this user: user attribute filters", None
        completable = d.trigger == Trigger.API and d.completable and d.open_to(user.attributes)
        pending.append(_row(d, progress=words, percent=percent, completable=completable))
    return completed, pending


def _row(d: AchievementDef, **fields: Any) -> AchievementRow:
    return AchievementRow(
        pk=d.pk, name=d.name, key=d.key, trigger=d.trigger, status=d.status, **fields
    )


# --- leaderboards --------------------------------------------------------------------------


@dataclass(frozen=True)
class BoardRow:
    pk: int
    key: str
    name: str
    rank_by: str
    run: dt.date
    run_end: dt.date | None
    max_participants: int
    rank: int | None
    value: str | None
    note: str


def board_rows(tenant: Tenant, user: EndUser, today: dt.date) -> list[BoardRow]:
    """The user's rank in the current run of each active board, as GET
    /users/{id}/leaderboards/{key} answers it: two queries per board."""
    rows = []
    for board in board_definitions(tenant).values():
        if board.status != BoardStatus.ACTIVE:
            continue
        run = run_current(board, today)
        standing = user_standing(board, run, user)
        note = ""
        if standing.group is None:
            note = "not taking part: a breakdown attribute is missing"
        elif standing.entry is None:
            note = "not ranked in this run"
        elif standing.beyond_top:
            note = f"outside the top {board.max_participants}"
        elif standing.group:
            note = f"group {standing.group}"
        entry, rank = standing.entry, standing.rank
        rows.append(
            BoardRow(
                pk=board.pk,
                key=board.key,
                name=board.name,
                rank_by=board.rank_by,
                run=run,
                run_end=board.run_end(run),
                max_participants=board.max_participants,
                rank=rank,
                value=amount(entry.value) if entry is not None and rank is not None else None,
                note=note,
            )
        )
    return rows
