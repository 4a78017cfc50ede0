"""Reads of leaderboards: configuration snapshot, ranks, rankings pages, history."""

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, QuerySet

from apps.accounts.models import Tenant
from apps.core.config_cache import tenant_cached
from apps.core.errors import NotFoundError, ValidationError
from apps.core.guards import Consequence, Impact
from apps.core.replicas import primary_reads
from apps.core.wording import counted
from apps.leaderboards import domain, ranks, sql, wire
from apps.leaderboards.choices import Status
from apps.leaderboards.models import Leaderboard, LeaderboardEntry, LeaderboardSnapshot
from apps.users.models import EndUser
from apps.users.selectors import attribute_definitions, attribute_filters_resolve


@dataclass(frozen=True)
class BoardDef:
    pk: int
    public_id: str
    key: str
    name: str
    description: str | None
    rank_by: str
    status: str
    metric_pk: int | None
    metric_key: str | None
    metric_name: str | None
    points_pk: int | None
    points_key: str | None
    points_name: str | None
    max_participants: int
    start: dt.date
    end: dt.date | None
    start_time: dt.time | None
    end_time: dt.time | None
    run_unit: str | None
    run_interval: int | None
    breakdown_keys: tuple[str, ...] | None  # None: a breakdown attribute was deleted
    user_filters: dict[str, str] | None

    def run_for(self, day: dt.date) -> dt.date | None:
        if self.end is not None and day > self.end:
            return None
        return domain.run_for(day, self.start, self.run_unit, self.run_interval)

    def run_end(self, run_start: dt.date) -> dt.date | None:
        return domain.run_end(run_start, self.start, self.run_unit, self.run_interval, self.end)


def board_definitions(tenant: Tenant) -> dict[str, BoardDef]:
    def load() -> dict[str, BoardDef]:
        definitions = attribute_definitions(tenant)
        keys_by_id = {pid: key for (_, key), pid in definitions.ids_by_type_key.items()}
        boards = {}
        for b in (
            Leaderboard.objects.filter(tenant=tenant)
            .select_related("metric", "points_system")
            .order_by("created", "id")
        ):
            breakdown = tuple(keys_by_id.get(aid) for aid in b.breakdown_attributes)
            boards[b.key] = BoardDef(
                pk=b.pk,
                public_id=str(b.public_id),
                key=b.key,
                name=b.name,
                description=b.description,
                rank_by=b.rank_by,
                status=b.status,
                metric_pk=b.metric_id,
                metric_key=b.metric.key if b.metric else None,
                metric_name=b.metric.name if b.metric else None,
                points_pk=b.points_system_id,
                points_key=b.points_system.key if b.points_system else None,
                points_name=b.points_system.name if b.points_system else None,
                max_participants=b.max_participants,
                start=b.start,
                end=b.end,
                start_time=b.start_time,
                end_time=b.end_time,
                run_unit=b.run_unit,
                run_interval=b.run_interval,
                breakdown_keys=None if None in breakdown else tuple(k for k in breakdown if k),
                user_filters=attribute_filters_resolve(tenant, b.user_attributes),
            )
        return boards

    return tenant_cached(tenant, "leaderboards", load)


def group_of(board: BoardDef, attributes: dict[str, str]) -> str | None:
    """The breakdown group of a user ("" without breakdown); None when the user lacks one of
    the breakdown attributes (they do not take part)."""
    if not board.breakdown_keys:
        return "" if board.breakdown_keys is not None else None
    values = [attributes.get(key) for key in board.breakdown_keys]
    if any(v is None for v in values):
        return None
    return "|".join(f"{k}={v}" for k, v in zip(board.breakdown_keys, values, strict=True))


def group_placed(board: BoardDef, user: EndUser) -> str | None:
    """The group the user's entries are kept in: their breakdown group (group_of), or, for a
    user excluded from the rankings, its excluded twin (domain.EXCLUDED_PREFIX)."""
    group = group_of(board, user.attributes)
    if group is None or user.excluded_at is None:
        return group
    return domain.group_excluded(group)


def run_entries(board_pk: int, run_start: dt.date, group: str) -> QuerySet[LeaderboardEntry]:
    return LeaderboardEntry.objects.filter(
        leaderboard_id=board_pk, run_start=run_start, group=group
    )


def rank_of(entry: LeaderboardEntry) -> int:
    run = ranks.RunKey(entry.leaderboard_id, entry.run_start, entry.group)
    return ranks.rank(run, entry.user_id, (entry.value, entry.reached_at))


def ordered(board_pk: int, run_start: dt.date, group: str) -> QuerySet[LeaderboardEntry]:
    return run_entries(board_pk, run_start, group).order_by(*domain.rank_order_by())


def history(
    board_pk: int, run_start: dt.date, user_pk: int, days: int
) -> list[LeaderboardSnapshot]:
    return list(
        LeaderboardSnapshot.objects.filter(
            leaderboard_id=board_pk, run_start=run_start, user_id=user_pk
        ).order_by("-date")[:days]
    )


def rankings_page(
    board: BoardDef, run: dt.date, group: str, offset: int, limit: int
) -> list[dict[str, Any]]:
    """A page of a run's rankings, best first, as the API renders them. A lowered
    maxParticipants shows only the top of the entries kept before."""
    limit = max(0, min(limit, board.max_participants - offset))
    if offset >= DEEP_PAGE:
        members = ranks.page(ranks.RunKey(board.pk, run, group), offset, limit)
        if members is not None:
            return _rankings_from_members(members, offset)
    # Three columns, not two model instances per row: at 100 rows the instances cost more than
    # the query; and a statement built once (apps/leaderboards/sql.py), not compiled per read.
    rows = sql.rankings_page(board.pk, run, group, offset, limit)
    render = wire.leaderboard_ranking_render
    return [
        render(external_id, name, offset + i + 1, value)
        for i, (external_id, name, value) in enumerate(rows)
    ]


# From this offset on, a page comes from Redis when it holds the ranks: PostgreSQL would walk
# every entry before the page.
DEEP_PAGE = 1000


def _rankings_from_members(members: list[str], offset: int) -> list[dict[str, Any]]:
    pks = [ranks.member_user(m) for m in members]
    users = _users_named(pks)
    if missing := [pk for pk in pks if pk not in users]:
        # Redis ranks users a replica may not have yet (apps/core/replicas.py).
        with primary_reads():
            users.update(_users_named(missing))
    render = wire.leaderboard_ranking_render
    return [
        render(*users[user], offset + i + 1, ranks.member_value(m))
        for i, m in enumerate(members)
        if (user := ranks.member_user(m)) in users
    ]


def _users_named(pks: list[int]) -> dict[int, tuple[str, str | None]]:
    return {
        pk: (external_id, name)
        for pk, external_id, name in EndUser.objects.filter(pk__in=pks).values_list(
            "pk", "external_id", "name"
        )
    }


# --- the application API's reads: boards, runs, rankings, a user's standing -----------------

# What the application API shows; an inactive board is being set up and does not exist there.
VISIBLE = (Status.ACTIVE, Status.SCHEDULED, Status.FINISHED)


def board_visible(tenant: Tenant, key: str) -> BoardDef:
    board = board_definitions(tenant).get(key)
    if board is None or board.status not in VISIBLE:
        raise NotFoundError(f'Leaderboard not found: "{key}"')
    return board


def boards_listed(tenant: Tenant, *, include_finished: bool) -> list[BoardDef]:
    """The active and scheduled boards, oldest first, and the finished ones when asked."""
    shown = (Status.ACTIVE, Status.SCHEDULED, *((Status.FINISHED,) if include_finished else ()))
    return [b for b in board_definitions(tenant).values() if b.status in shown]


def run_current(board: BoardDef, today: dt.date) -> dt.date:
    """The run the API shows when no `run` is asked for: the one holding today (UTC date), a
    finished board's last run, the board's start before it begins."""
    day = today if board.end is None or today <= board.end else board.end
    return board.run_for(day) or board.start


def run_asked(board: BoardDef, asked: dt.date | None, today: dt.date) -> dt.date:
    """The run asked for (its start date, or any date inside it), else the current one."""
    if asked is None:
        return run_current(board, today)
    run = board.run_for(asked)
    if run is None:
        raise ValidationError("run is outside this leaderboard's dates")
    return run


def breakdown_group(board: BoardDef, filters: dict[str, str]) -> str:
    """The group a breakdown board's rankings are asked for: one value per breakdown
    attribute, no more and no fewer."""
    keys = board.breakdown_keys or ()
    if set(filters) != set(keys):
        raise ValidationError(
            "{user_attributes} must give a value for each breakdown attribute: " + ", ".join(keys),
            fields="user_attributes",
            code="required",
        )
    group = group_of(board, filters)
    assert group is not None  # noqa: S101 - every key given above
    return group


def rankings_from(
    board: BoardDef, run: dt.date, group: str, *, offset: int, limit: int, user_id: str | None
) -> list[dict[str, Any]] | None:
    """A page of rankings; with `user_id`, the page starts `offset` places after the user's own
    (None when the user has no place in the run)."""
    if user_id:
        entry = (
            ordered(board.pk, run, group)
            .select_related("user")
            .filter(user__external_id=user_id)
            .first()
        )
        if entry is None:
            return None
        offset = max(0, rank_of(entry) - 1 + offset)
    return rankings_page(board, run, group, offset, limit)


@dataclass(frozen=True)
class UserStanding:
    group: str | None  # None: a breakdown attribute is missing, so the user takes no part
    entry: LeaderboardEntry | None  # None: not ranked in the run
    rank: int | None  # None when not ranked, or ranked below the places the board shows

    @property
    def beyond_top(self) -> bool:
        """Ranked, below the board's maxParticipants (a lowered maximum keeps the entry)."""
        return self.entry is not None and self.rank is None


def user_standing(board: BoardDef, run: dt.date, user: EndUser) -> UserStanding:
    """The user's place in one run of the board (in their breakdown group): two queries. An
    excluded user reads their entry and the rank it would have among the others (the others
    never see them): their own reads answer as before the exclusion."""
    group = group_of(board, user.attributes)
    entry = None
    if group is not None:
        kept = group_placed(board, user) or group
        entry = run_entries(board.pk, run, kept).filter(user=user).first()
    rank = None
    if entry is not None and group is not None:
        ranking = ranks.RunKey(board.pk, run, group)
        rank = ranks.rank(ranking, user.pk, (entry.value, entry.reached_at))
    if rank is not None and rank > board.max_participants:
        rank = None
    return UserStanding(group, entry, rank)


def history_days(
    board_pk: int, run: dt.date, user_pk: int, days: int
) -> list[tuple[LeaderboardSnapshot, LeaderboardSnapshot | None]]:
    """The user's latest `days` daily snapshots in the run, newest first, each with the day
    before it (one more row is read: the oldest shown day needs its predecessor)."""
    snapshots = history(board_pk, run, user_pk, days + 1) if days else []
    return [
        (snapshot, snapshots[i + 1] if i + 1 < len(snapshots) else None)
        for i, snapshot in enumerate(snapshots[:days])
    ]


LIVE = (Status.ACTIVE, Status.SCHEDULED)


def board_loss(board: Leaderboard, users: int) -> Consequence:
    """What goes with a leaderboard: "the live leaderboard Weekly words is deleted, with the
    rankings of 50 users"."""
    live = "live " if board.status in LIVE else ""
    text = f"the {live}leaderboard {board.name} is deleted"
    if users:
        text += f", with the rankings of {counted(users, 'user')}"
    return Consequence(text, users=users)


def board_users(boards: QuerySet[Leaderboard]) -> dict[int, int]:
    """Board pk -> how many users it ranks or ranked (entries of any run), one query."""
    rows = (
        LeaderboardEntry.objects.filter(leaderboard__in=boards)
        .values("leaderboard_id")
        .annotate(users=Count("user_id", distinct=True))
    )
    return {row["leaderboard_id"]: row["users"] for row in rows}


def leaderboard_deletion_impact(tenant: Tenant, board: Leaderboard) -> Impact:
    """What deleting the leaderboard does: its rankings, runs and daily history go."""
    users = board_users(Leaderboard.objects.filter(tenant=tenant, pk=board.pk)).get(board.pk, 0)
    own = [board_loss(board, users)] if users else []
    return Impact(
        noun="leaderboard",
        name=board.name,
        key=board.key,
        public_id=str(board.public_id),
        consequences=tuple(own),
    )


# --- neighbours (the gamify extension's /ext/v1 routes) ---------------------------------------


@dataclass(frozen=True)
class Neighbourhood:
    """A user's rank in a run and group (None: not on the board, or below the places it shows)
    and the rankings from `k` places above it to `k` below, best first, as the rankings page
    renders them."""

    rank: int | None
    value: int | None
    rankings: list[dict[str, Any]]


def neighbours(
    board: BoardDef, run: dt.date, group: str | None, user_pk: int, k: int
) -> Neighbourhood:
    """From the rank store: Redis (O(log n + k)) when it holds the ranks, else one statement
    (a count of those ahead and two windows of k on the rank index). Ranks are the rankings
    page's: places in domain.RANK_ORDER, no further than the board's maxParticipants."""
    if group is None:
        return Neighbourhood(None, None, [])
    window = ranks.neighbours(ranks.RunKey(board.pk, run, group), user_pk, k)
    if window is not None:
        place, first = window.place, window.first
        rankings = _rankings_from_members(window.members, first)
    else:
        found = sql.neighbours(board.pk, run, group, user_pk, k)
        place, first = found.place, found.first
        render = wire.leaderboard_ranking_render
        rankings = [render(*row[:2], first + i + 1, row[2]) for i, row in enumerate(found.rows)]
    if place is None or place >= board.max_participants:
        return Neighbourhood(None, None, [])
    shown = [r for r in rankings if r["rank"] <= board.max_participants]
    own = next((r for r in shown if r["rank"] == place + 1), None)
    if own is None:  # the user's row went between the two reads
        return Neighbourhood(None, None, [])
    return Neighbourhood(place + 1, own["value"], shown)
