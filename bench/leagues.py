"""The league pair of issue 26 (`run.py --leagues`, `make bench-leagues`): what an active
league costs an event, side by side with the same events without it. The server counts its SQL
statements (bench/counting_wsgi.py), so the table has statements per event beside the
throughput and the CPU per event.

- `league-off`: `POST /v1/metrics/league/event` for random users among `--users` (2,000 in
  `make bench-leagues`) existing users `s-0` .. (seeded in SQL, as bench/scale.py's), each
  of whom has sent one event of the metric already (in setup, through the API): no league;
- `league-on`: the same events of the same users, after an active league scoring the metric
  (cohorts of 30, the ten default tiers) was created (`manage.py shell`: the league's admin
  API is not written yet) and every user joined this week's league with one event each (in
  setup, through the API, one at a time: see `LeagueOnCase.configure`). Every
  measured event is then one of a user already in this week's cohort: what it adds is the
  entry's score UPDATE (tests/leagues/test_league_query_count.py pins it at one statement).

`league-off` runs first, before the league exists. Checks: those of bench/scale.py (each
user's stored total is the highest total answered to them; the metric's rows and totals grew
by what was answered), and for `league-on`: one entry per user this week, the entries' scores
add up to every value sent since the league began, cohorts of at most 30 holding every user
once (ceil(users / 30) cohorts of the lowest tier).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cases import Case, Check
from scale import SCALE_USER, ScaleCase, _tenant_users

LEAGUE_METRIC = "league"
LEAGUE_KEY = "weekly"
COHORT_SIZE = 30
LEAGUE_ORDER = ["league-off", "league-on"]
FIRST_VALUE = 1  # each user's setup event
JOIN_THREADS = 1  # see LeagueOnCase.configure

# The league through the configuration service, in the server's settings (manage.py shell).
_CREATE = """
from apps.accounts.models import Tenant
from apps.leagues.choices import ScoreBy, Status
from apps.leagues.configuration import league_create
from apps.leagues.domain import LeagueSettings
from apps.metrics.models import Metric
metric = Metric.objects.get(key={metric!r})
league_create(metric.tenant, LeagueSettings(name="Weekly", key={key!r}, score_by=ScoreBy.METRIC,
    metric_id=str(metric.public_id), status=Status.ACTIVE, cohort_size={size}))
"""


def _first_events(ctx: Any, users: int, threads: int = 16) -> None:
    """One event of value FIRST_VALUE for each user, `threads` at a time, through the API."""
    path = f"/v1/metrics/{LEAGUE_METRIC}/event"

    def send(n: int) -> int:
        body = {"user": {"id": SCALE_USER.format(n)}, "value": FIRST_VALUE}
        return int(ctx.api("POST", path, body)[0])

    with ThreadPoolExecutor(threads) as pool:
        statuses = list(pool.map(send, range(users)))
    if set(statuses) != {201}:
        raise RuntimeError(f"the setup events failed: statuses {sorted(set(statuses))}")


class LeagueOffCase(ScaleCase):
    name = "league-off"
    summary = "POST /v1/metrics/league/event of existing users, no league (the pair's baseline)"
    metric_key = LEAGUE_METRIC
    seed_offset = 60

    def __init__(self, args: Any) -> None:
        super().__init__(args)
        self.users = args.users

    def configure(self, ctx: Any) -> None:
        ctx.ensure_metric(LEAGUE_METRIC, "League")
        _tenant_users(ctx, self.users, LEAGUE_METRIC)
        _first_events(ctx, self.users)

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "league": None, "setup": "one event per user"}


class LeagueOnCase(LeagueOffCase):
    name = "league-on"
    summary = (
        f"the same events, every user in this week's cohort of an active league (cohorts of "
        f"{COHORT_SIZE})"
    )
    seed_offset = 61

    def configure(self, ctx: Any) -> None:
        ctx.ensure_metric(LEAGUE_METRIC, "League")
        _tenant_users(ctx, self.users, LEAGUE_METRIC)
        code = _CREATE.format(metric=LEAGUE_METRIC, key=LEAGUE_KEY, size=COHORT_SIZE)
        ctx.manage("shell", "-c", code)
        # The joins, one at a time: two joiners opening a cohort of the same tier at once can
        # both take the same number (`_OPEN`, apps/leagues/sql.py: MAX(number) + 1), and the
        # second fails on league_cohort_unique, which ON CONFLICT does not arbitrate (a 500;
        # 16 at a time, 1 of 2,000 joins failed so).
        _first_events(ctx, self.users, threads=JOIN_THREADS)

    def settings(self) -> dict[str, Any]:
        return {
            **super().settings(),
            "league": f"{LEAGUE_KEY}: active, metric {LEAGUE_METRIC}, cohorts of {COHORT_SIZE}, "
            "ten tiers",
            "setup": "one event per user: each joins this week's league",
        }

    def verify(self, ctx: Any, workers: list[Any]) -> list[Check]:
        checks = super().verify(ctx, workers)
        unsure = sum(sum(w.unsure.values()) for w in workers)
        sent = sum(sum(w.sent.values()) for w in workers)
        rows = ctx.db_query(
            "SELECT count(*), count(DISTINCT e.user_id), coalesce(sum(e.score), 0),"
            " count(DISTINCT e.week_start) FROM leagues_leagueentry e"
            " JOIN leagues_league l ON l.id = e.league_id WHERE l.key = %s",
            (LEAGUE_KEY,),
        )
        cohorts = ctx.db_query(
            "SELECT count(*), coalesce(sum(c.members), 0), coalesce(max(c.members), 0),"
            " count(*) FILTER (WHERE c.tier <> 0) FROM leagues_leaguecohort c"
            " JOIN leagues_league l ON l.id = c.league_id WHERE l.key = %s",
            (LEAGUE_KEY,),
        )
        if not rows or not cohorts:
            return [*checks, Check("league entries", False, "query failed (see log)")]
        entries, users, score, weeks = rows[0]
        count, members, largest, other_tier = cohorts[0]
        want_score = self.users * FIRST_VALUE + sent
        checks.append(
            Check(
                "one league entry per user; scores = values sent since the league began",
                entries == users == self.users
                and weeks == 1
                and (score == want_score if not unsure else score >= want_score),
                f"{entries} entries of {users} users in {weeks} week(s), sum of scores {score} "
                f"(sent {want_score})" + (f"; {unsure} requests without 201" if unsure else ""),
            )
        )
        want_cohorts = math.ceil(self.users / COHORT_SIZE)
        checks.append(
            Check(
                f"cohorts of at most {COHORT_SIZE} hold every user once",
                count == want_cohorts
                and members == entries == self.users
                and largest <= COHORT_SIZE
                and other_tier == 0,
                f"{count} cohorts (expected {want_cohorts}), {members} members counted, "
                f"{entries} entries, largest {largest}, {other_tier} not of the lowest tier",
            )
        )
        return checks


def print_leagues(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each case's events/s (median), p99, CPU and statements per event, and the league's cost:
    the ratio of throughputs and the difference in statements and CPU."""
    by_name = {r["case"]: r for r in results}
    rows = []
    print("\n== leagues: an event with and without an active league (the same events)")
    print(f"   {'case':<52} {'events/s':>9} {'p99 ms':>7} {'CPU ms/event':>15} {'statements':>10}")
    for name in LEAGUE_ORDER:
        result = by_name.get(name)
        if result is None:
            continue
        cpu, median = result["cpu"], result["median"]
        gunicorn, postgres = cpu.get("gunicorn_cpu_ms_per_ok"), cpu.get("postgres_cpu_ms_per_ok")
        label = "no league" if name == "league-off" else "in this week's cohort of a league"
        print(
            f"   {label:<52} {median['ok_per_second'] or 0:>9.1f} {_ms(median['p99_ms']):>7} "
            f"{_ms(gunicorn):>7} + {_ms(postgres):>5} {_ms(cpu.get('statements_per_ok')):>10}"
        )
        rows.append(
            {
                "case": name,
                "events_per_second": median["ok_per_second"],
                "p99_ms": median["p99_ms"],
                "gunicorn_cpu_ms_per_event": gunicorn,
                "postgres_cpu_ms_per_event": postgres,
                "statements_per_event": cpu.get("statements_per_ok"),
                "other_cores": cpu.get("other_cores"),
            }
        )
    if len(rows) == 2:
        off, on = rows
        ratio = (
            on["events_per_second"] / off["events_per_second"]
            if on["events_per_second"] and off["events_per_second"]
            else None
        )
        extra = (
            on["statements_per_event"] - off["statements_per_event"]
            if on["statements_per_event"] is not None and off["statements_per_event"] is not None
            else None
        )
        cpu = [
            (on[k] or 0) - (off[k] or 0)
            for k in ("gunicorn_cpu_ms_per_event", "postgres_cpu_ms_per_event")
        ]
        print(
            f"   the league's cost: events/s x{'-' if ratio is None else f'{ratio:.2f}'}, "
            f"statements per event {'-' if extra is None else f'{extra:+.2f}'} (issue: at most "
            f"+2), CPU ms per event {cpu[0]:+.2f} + {cpu[1]:+.2f}"
        )
        rows.append(
            {
                "measure": "league's cost",
                "events_per_second_ratio": None if ratio is None else round(ratio, 3),
                "extra_statements_per_event": None if extra is None else round(extra, 2),
                "extra_cpu_ms_per_event": [round(c, 2) for c in cpu],
            }
        )
    return rows


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


LEAGUE_CASES: dict[str, type[Case]] = {case.name: case for case in (LeagueOffCase, LeagueOnCase)}
