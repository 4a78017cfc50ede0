"""The live rankings of one leaderboard for staff: the API's ranks of a run and breakdown group,
page by page, and, when a ranking is empty, the reasons found in the board's settings and the
tenant's activity.

Ranks come from selectors.rankings_page (through dashboard_reads.rankings_page_entries), so the
dashboard and the API never disagree on who is where; the current run is selectors.run_current,
the one the API shows when no run is asked for.
"""

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from django.http import HttpRequest, QueryDict
from django.urls import reverse
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.core.stream_tokens import stream_token_mint, streams_enabled
from apps.leaderboards import dashboard_reads, selectors
from apps.leaderboards.admin.display import (
    day,
    group_label,
    run_label,
    value_text,
    window_text,
)
from apps.leaderboards.choices import RankBy, Status
from apps.leaderboards.models import Leaderboard
from apps.leaderboards.selectors import BoardDef
from apps.streaks.selectors import streak_config, streaks_configured

PAGE_SIZE = 50


@dataclass(frozen=True)
class Choice:
    value: str
    label: str
    selected: bool


@dataclass(frozen=True)
class Row:
    rank: int
    user_url: str
    user_id: str
    user_name: str
    value: str
    reached_at: dt.datetime


def live_since(board: Leaderboard) -> dt.datetime:
    """When the board went live, as far as its row tells: a board is made live by a save
    (`updated` is then at least that moment), or by the lifecycle job on its start date. A
    later edit moves `updated` on, which only narrows "no activity since"."""
    start = dt.datetime.combine(board.start, dt.time(), tzinfo=dt.UTC)
    return max(board.updated, start)


def _parse_run(raw: str, definition: BoardDef) -> dt.date | None:
    try:
        asked = dt.date.fromisoformat(raw)
    except ValueError:
        return None
    # Any date inside a run names it, as the API's `run` parameter.
    return definition.run_for(asked)


def _page(raw: str, pages: int) -> int:
    try:
        number = int(raw)
    except ValueError:
        return 1
    return min(max(number, 1), max(pages, 1))


def _filters_text(definition: BoardDef) -> str:
    return ", ".join(f"{k} = {v}" for k, v in (definition.user_filters or {}).items())


def _activity_noun(board: Leaderboard) -> str:
    if board.rank_by == RankBy.METRIC and board.metric is not None:
        return f"“{board.metric.name}” events"
    if board.rank_by == RankBy.POINTS and board.points_system is not None:
        return f"“{board.points_system.name}” points awarded"
    return "events"


def _status_reasons(board: Leaderboard, today: dt.date) -> list[str]:
    """Reasons that hold whatever the activity: the board is not counting now."""
    if board.status == Status.INACTIVE:
        return [
            "The leaderboard is inactive: it counts no activity and enters no one. Set its "
            "status to Active to go live (with a future start date it is scheduled); it "
            "counts activity from then on."
        ]
    if board.status == Status.SCHEDULED:
        return [
            f"The leaderboard is scheduled: it goes live on {day(board.start)} and counts "
            "activity from then on."
        ]
    if board.status == Status.FINISHED:
        end = f" on {day(board.end)}" if board.end else ""
        return [f"The leaderboard finished{end}, and no one took part in this run."]
    if board.start > today:
        return [f"The leaderboard starts on {day(board.start)}: it counts activity from then on."]
    if board.end is not None and board.end < today:
        return [
            f"Its end date, {day(board.end)}, has passed: it counts no more activity and is "
            "marked finished about 12 hours after the end (UTC)."
        ]
    return []


def _participation_reasons(
    definition: BoardDef, activity: dashboard_reads.BoardActivity
) -> list[str]:
    if definition.breakdown_keys is None:
        return [
            "A breakdown attribute of this leaderboard was deleted: no end-user can be placed "
            "in a group, so no one takes part. Choose its breakdown attributes again."
        ]
    if definition.user_filters is None:
        return [
            "A participation filter names a deleted attribute: it matches no one. Edit the "
            "participation filters."
        ]
    if activity.users == 0:
        return ["This tenant has no end-users yet: they appear with their first event."]
    if activity.eligible > 0:
        return []
    parts = []
    if definition.user_filters:
        parts.append(f"match the participation filters ({_filters_text(definition)})")
    if definition.breakdown_keys:
        parts.append(f"have a value for {', '.join(definition.breakdown_keys)}")
    who = "end-user" if activity.users == 1 else f"{activity.users:,} end-users"
    return [
        f"The participation rules exclude everyone: none of the {who} "
        f"{' and '.join(parts)}, so no one takes part."
    ]


def _activity_reasons(
    board: Leaderboard,
    run: dt.date,
    since: dt.datetime,
    activity: dashboard_reads.BoardActivity,
    excluded: bool,
) -> list[str]:
    """What happened to the activity of the run, given that it entered no one."""
    noun = _activity_noun(board)
    if not activity.in_run:
        return [f"No {noun} since this run started on {day(run)}."]
    if not activity.since_live:
        return [
            f"No {noun} since the leaderboard became active on {day(since.date())}: "
            "leaderboards count activity from activation, earlier events are not replayed. "
            "End-users active before then enter with their total for the run at their next "
            "event."
        ]
    checked = (
        f" (the latest {activity.recent} were checked)"
        if activity.recent >= dashboard_reads.RECENT_ACTIVITY
        else ""
    )
    if activity.recent_taking_part == 0:
        # Already explained when the participation rules exclude everyone.
        return (
            []
            if excluded
            else [
                f"The {noun} since the leaderboard became active came from end-users who do "
                f"not take part (participation filters or breakdown attributes){checked}."
            ]
        )
    if activity.recent_in_window == 0:
        return [
            f"Only activity {window_text(board)} in each end-user's own time counts, and the "
            f"{noun} of end-users who take part came outside that window{checked}."
        ]
    if board.rank_by == RankBy.STREAK:
        return [
            "End-users who take part were active since the leaderboard became active, but "
            "no streak grew: a streak leaderboard enters end-users when their streak is "
            "extended."
        ]
    return [f"No one has entered yet, though there were {noun} since it became active."]


def empty_reasons(
    tenant: Tenant, board: Leaderboard, definition: BoardDef, run: dt.date, current: dt.date
) -> list[str]:
    """Why a run of the board has no entries, most decisive first."""
    today = timezone.now().date()
    since = live_since(board)
    if run < current:
        reasons = ["No one took part in this run."]
        end = definition.run_end(run)
        if board.status != Status.INACTIVE and end is not None and since.date() > end:
            reasons.append(f"The leaderboard went live on {day(since.date())}, after this run.")
        return reasons
    reasons = _status_reasons(board, today)
    if reasons:
        return reasons
    activity = dashboard_reads.board_activity(tenant, definition, run, since)
    participation = _participation_reasons(definition, activity)
    reasons = list(participation)
    if board.rank_by == RankBy.STREAK and not streaks_configured(streak_config(tenant)):
        reasons.append(
            "Streaks are not set up for this tenant: a streak leaderboard enters end-users "
            "when their streak grows."
        )
    reasons.extend(_activity_reasons(board, run, since, activity, excluded=bool(participation)))
    return reasons


@dataclass(frozen=True)
class Selection:
    """The run, breakdown group and page the query string asks for, made valid."""

    current: dt.date
    run: dt.date
    groups: dict[str, int]  # the run's groups with participants, by name
    group: str
    total: int  # participants ranked in the group
    page: int
    pages: int

    def url(self, **changes: Any) -> str:
        query = {"run": self.run.isoformat(), "group": self.group, "p": str(self.page)}
        query.update({k: str(v) for k, v in changes.items()})
        kept = {k: v for k, v in query.items() if v and not (k == "p" and v == "1")}
        return f"?{urlencode(kept)}"


def _select(params: QueryDict, definition: BoardDef) -> Selection:
    current = selectors.run_current(definition, timezone.now().date())
    run = _parse_run(params.get("run", ""), definition) or current
    groups = dashboard_reads.run_groups(definition, run)
    group = params.get("group", "") if definition.breakdown_keys else ""
    if definition.breakdown_keys and not group and groups:
        group = next(iter(groups))  # the first group by name
    total = groups.get(group, 0)
    pages = math.ceil(total / PAGE_SIZE)
    page = _page(params.get("p", "1"), pages)
    return Selection(current, run, groups, group, total, page, pages)


def _rows(board: Leaderboard, definition: BoardDef, chosen: Selection) -> list[Row]:
    offset = (chosen.page - 1) * PAGE_SIZE
    ranked = dashboard_reads.rankings_page_entries(
        definition, chosen.run, chosen.group, offset, PAGE_SIZE
    )
    frequency = streak_config(board.tenant).frequency if board.rank_by == RankBy.STREAK else ""
    return [
        Row(
            rank=r.rank,
            user_url=reverse("admin:users_enduser_change", args=[r.entry.user_id]),
            user_id=r.entry.user.external_id,
            user_name=r.entry.user.name or "",
            value=value_text(board, r.entry.value, frequency),
            reached_at=r.entry.reached_at,
        )
        for r in ranked
    ]


def _reasons(board: Leaderboard, definition: BoardDef, chosen: Selection) -> list[str]:
    if chosen.total:
        return []
    if chosen.groups:
        return [
            f"No one in the group {group_label(chosen.group)} took part in this run; other "
            "groups did: choose one above."
        ]
    return empty_reasons(board.tenant, board, definition, chosen.run, chosen.current)


# The dashboard's live rankings follow their board's stream (README, "Live streams") with a token
# of this lifetime; a page kept open longer falls back to refreshing every 15 seconds.
STREAM_TOKEN_SECONDS = 12 * 3600
# The stream tells of changes in the top 100 (its most); a deeper page refreshes every 15 s.
STREAM_TOP = 100


def stream_url(board: Leaderboard, definition: BoardDef, group: str, now: Any) -> str | None:
    """The board stream that tells this page when its ranking changes (a token in the URL: the
    page's staff user has no API key), or None: streams off, or a group the stream cannot name
    (a breakdown value holding a comma, which userAttributes cannot spell)."""
    if not streams_enabled():
        return None
    query: dict[str, str] = {"top": str(STREAM_TOP)}
    if definition.breakdown_keys:
        values = group_values(definition.breakdown_keys, group)
        if values is None or any("," in v for v in values.values()):
            return None
        query["userAttributes"] = ",".join(f"{k}:{v}" for k, v in values.items())
    token, _ = stream_token_mint(board.tenant_id, "board", board.key, STREAM_TOKEN_SECONDS, now)
    query["token"] = token
    return f"/ext/v1/leaderboards/{quote(board.key, safe='')}/stream?{urlencode(query)}"


def group_values(keys: tuple[str, ...], group: str) -> dict[str, str] | None:
    """The attribute values of a breakdown group (selectors.group_of writes `k=v|k2=v2` in the
    keys' order; a value may hold `|` or `=`, so each is read up to the next key's prefix)."""
    values: dict[str, str] = {}
    rest = group
    for index, key in enumerate(keys):
        if not rest.startswith(f"{key}="):
            return None
        rest = rest[len(key) + 1 :]
        if index + 1 < len(keys):
            cut = rest.find(f"|{keys[index + 1]}=")
            if cut < 0:
                return None
            values[key], rest = rest[:cut], rest[cut + 1 :]
        else:
            values[key] = rest
    return values


def rankings_context(request: HttpRequest, board: Leaderboard, definition: BoardDef) -> dict:
    """The rankings page's data for the run, group and page in the query string."""
    chosen = _select(request.GET, definition)
    run, current, page, pages = chosen.run, chosen.current, chosen.page, chosen.pages
    runs = sorted({*dashboard_reads.board_runs(definition), current, run}, reverse=True)
    rows = _rows(board, definition, chosen)
    breakdown = bool(definition.breakdown_keys)
    group_names = sorted({*chosen.groups, chosen.group} - {""}) if breakdown else []
    return {
        "run": run,
        "run_end": definition.run_end(run),
        "is_current_run": run == current,
        "run_choices": [
            Choice(r.isoformat(), run_label(definition, r, current), r == run) for r in runs
        ],
        "breakdown": breakdown,
        "breakdown_keys": ", ".join(definition.breakdown_keys or ()),
        "group": chosen.group,
        "group_label": group_label(chosen.group),
        "group_choices": [
            Choice(g, f"{group_label(g)} ({chosen.groups.get(g, 0):,})", g == chosen.group)
            for g in group_names
        ],
        "rows": rows,
        "total": chosen.total,
        "first": (page - 1) * PAGE_SIZE + 1 if rows else 0,
        "last": (page - 1) * PAGE_SIZE + len(rows),
        "page": page,
        "pages": pages,
        "previous_url": chosen.url(p=page - 1) if page > 1 else None,
        "next_url": chosen.url(p=page + 1) if page < pages else None,
        "page_urls": [(n, chosen.url(p=n)) for n in range(1, pages + 1)] if 1 < pages <= 20 else [],
        "reasons": _reasons(board, definition, chosen),
        "full": chosen.total >= definition.max_participants,
        "stream_url": stream_url(board, definition, chosen.group, timezone.now())
        if run == current and board.status == Status.ACTIVE and page * PAGE_SIZE <= STREAM_TOP
        else None,
    }
