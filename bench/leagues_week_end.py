"""The week end of a league at scale (issue 26, "Performance"): `cohorts_finish` over a finished
week of N users (default 1,000,000) in cohorts of 30, by 1 and by 2 worker processes.

    .venv/bin/python bench/leagues_week_end.py [--users 1000000] [--workers 1 2]
        [--db-name gamify_bench_leagues] [--profile] [--keep-db]

What one run does:
1. drops and recreates its own PostgreSQL database (`--db-name`) and migrates it;
2. creates an organization, a metric, a points system and an active metric league (cohorts of
   `--cohort-size`, the ten default tiers), through the configuration services in-process;
3. seeds, in SQL (generate_series; the event API would take hours for a million users), the
   users `lw-0` .. `lw-(N-1)` and one finished league week per measured run: ceil(N / size)
   closed cohorts spread over the ten tiers, user n in cohort n // size, scores random
   integers 0..999 (5 % of them 0: idle users; ties frequent, broken by `reached_at`), random
   `reached_at` within the week;
4. per run, oldest week first: sets the league's rewards (none, or points for places 1-3),
   starts W worker processes (spawned, Django set up, connected), releases them at once, each
   calling `cohorts_finish(now=<that week's end>)` (they split the cohorts between them by
   FOR UPDATE SKIP LOCKED), and times from the release to the last one's return; each worker
   reports the cohorts it finished, its CPU time and its resident memory before the call and
   at its peak (`resource.getrusage`, ru_maxrss);
5. verifies the week in SQL: every entry has a placement, zone and next tier; each cohort's
   placements are 1..n and follow the standing order (score, then reached_at, then user);
   every cohort finished, at that week's end, and the workers' counts add up to the number of
   cohorts (each finished once); with rewards, exactly the places 1-3 earned them and are due;
6. prints a table (and writes bench/results/leagues-week-end-<time>.json), drops the database.

The rewards are paid by a separate job; only `cohorts_finish` is measured. With `--profile`, a
one-worker run is also made on one more week under cProfile (not timed with the others), and
its top functions printed. Nothing here is part of `make test`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import multiprocessing
import os
import queue
import resource
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.support import database_recreate, psql  # noqa: E402

RESULTS = ROOT / "bench" / "results"
USER = "lw-"
TIERS = 10  # the default tiers, Bronze .. Diamond
IDLE_SHARE = 0.05
# Places 1-3 of every cohort earn points (paid later by the rewards job).
REWARDS = [
    {"from_place": 1, "to_place": 1, "points": 30},
    {"from_place": 2, "to_place": 2, "points": 20},
    {"from_place": 3, "to_place": 3, "points": 10},
]
# The first measured week: a Monday long enough ago that every seeded week has ended.
FIRST_WEEK = dt.datetime(2026, 1, 5, 12, 0, tzinfo=dt.UTC)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--users", type=int, default=1_000_000, help="users in each week")
    parser.add_argument("--cohort-size", type=int, default=30)
    parser.add_argument(
        "--workers", type=int, nargs="+", default=[1, 2], help="worker processes, per run"
    )
    parser.add_argument(
        "--rewards",
        choices=["both", "none", "places"],
        default="both",
        help="runs without rewards, with points for places 1-3, or both (default)",
    )
    parser.add_argument("--chunk", type=int, default=None, help="cohorts per transaction")
    parser.add_argument("--db-name", default="gamify_bench_leagues", help="dropped and recreated!")
    parser.add_argument("--profile", action="store_true", help="one more week under cProfile")
    parser.add_argument("--keep-db", action="store_true")
    args = parser.parse_args(argv)
    if not args.db_name.startswith(("gamify_bench", "gamify_h_bench")):
        parser.error("--db-name must start with gamify_bench (the database is dropped)")
    if args.users < 1 or not 5 <= args.cohort_size <= 100 or min(args.workers) < 1:
        parser.error("--users and --workers must be positive, --cohort-size within 5..100")
    return args


def setup_env(db_name: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="gamify.settings",
        DEBUG="false",
        SECRET_KEY="bench-only-" + "x" * 50,
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="false",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{db_name}",
        LOG_LEVEL="WARNING",
        CELERY_BROKER_URL="",
        BACKGROUND_TASKS="inline",
    )
    os.environ.pop("REDIS_URL", None)


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# --- a worker process -----------------------------------------------------------------------


def worker(
    db_name: str,
    now: dt.datetime,
    chunk: int | None,
    barrier: Any,
    results: Any,
    profile: str | None,
) -> None:
    """One week-end worker: set up, connect, wait for the others, run `cohorts_finish`."""
    setup_env(db_name)
    import django

    django.setup()
    from django.db import connection

    from apps.leagues.services import cohorts_finish

    connection.ensure_connection()
    kwargs = {} if chunk is None else {"chunk": chunk}
    before_rss = rss_kib()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_before = usage.ru_utime + usage.ru_stime
    barrier.wait()
    started = time.perf_counter()
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        done = profiler.runcall(cohorts_finish, now, **kwargs)
        profiler.dump_stats(profile)
    else:
        done = cohorts_finish(now, **kwargs)
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    results.put(
        {
            "pid": os.getpid(),
            "cohorts": done,
            "seconds": round(seconds, 2),
            "cpu_s": round(usage.ru_utime + usage.ru_stime - cpu_before, 2),
            "rss_before_mib": round(before_rss / 1024, 1),
            "rss_peak_mib": round(usage.ru_maxrss / 1024, 1),  # Linux: KiB
        }
    )
    connection.close()


def run_workers(
    args: argparse.Namespace, count: int, now: dt.datetime, profile: str | None = None
) -> tuple[float, list[dict[str, Any]]]:
    """`count` workers finishing the week that ends at `now`: wall seconds and their reports."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(count + 1)
    results = ctx.Queue()
    processes = [
        ctx.Process(target=worker, args=(args.db_name, now, args.chunk, barrier, results, profile))
        for _ in range(count)
    ]
    for process in processes:
        process.start()
    barrier.wait(timeout=300)
    started = time.perf_counter()
    reports: list[dict[str, Any]] = []
    while len(reports) < count:
        try:
            reports.append(results.get(timeout=2))
        except queue.Empty:
            dead = [p for p in processes if p.exitcode not in (None, 0)]
            if dead:
                raise RuntimeError(f"worker {dead[0].pid} exited with {dead[0].exitcode}") from None
    wall = time.perf_counter() - started
    for process in processes:
        process.join(timeout=60)
        if process.exitcode != 0:
            raise RuntimeError(f"worker {process.pid} exited with {process.exitcode}")
    return wall, sorted(reports, key=lambda r: -r["cohorts"])


# --- configuration and seeding --------------------------------------------------------------


def configure(args: argparse.Namespace) -> dict[str, Any]:
    """An organization, a metric, a points system and an active metric league."""
    from apps.accounts.services import organization_create
    from apps.leagues.choices import ScoreBy, Status
    from apps.leagues.configuration import league_create
    from apps.leagues.domain import LeagueSettings
    from apps.metrics.configuration import metric_create
    from apps.metrics.domain import MetricSettings
    from apps.points.configuration.systems import points_system_create
    from apps.points.domain import PointsSystemSettings

    tenant = organization_create("Bench").tenant
    metric = metric_create(tenant, MetricSettings(key="words", name="Words"))
    system, _ = points_system_create(tenant, PointsSystemSettings(key="xp", name="XP"))
    league = league_create(
        tenant,
        LeagueSettings(
            name="Weekly",
            key="weekly",
            score_by=ScoreBy.METRIC,
            metric_id=str(metric.public_id),
            status=Status.ACTIVE,
            cohort_size=args.cohort_size,
        ),
    )
    return {"tenant": tenant, "league": league, "system": system}


def rewards_set(config: dict[str, Any], rewards: bool) -> None:
    from apps.leagues.configuration import league_update
    from apps.leagues.domain import LeagueSettings

    system_id = str(config["system"].public_id)
    given = [{**r, "points_system_id": system_id} for r in REWARDS] if rewards else []
    config["league"] = league_update(
        config["tenant"], config["league"], LeagueSettings(rewards=given)
    )


def seed(args: argparse.Namespace, config: dict[str, Any], weeks: list[Any]) -> float:
    """The users, then each week's closed cohorts and entries, in SQL; seconds taken."""
    from django.db import connection

    started = time.perf_counter()
    league, tenant = config["league"], config["tenant"]
    size, users = args.cohort_size, args.users
    cohorts = math.ceil(users / size)
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.26)")
        # The entries join users to cohorts on an expression: a nested loop would compare
        # every user with every cohort.
        cursor.execute("SET enable_nestloop = off")
        cursor.execute(
            "INSERT INTO users_enduser (tenant_id, external_id, subscribe_to_emails,"
            " device_tokens, attributes, control, notification_preferences, created, updated)"
            " SELECT %s, %s || n, true, '[]', '{}', false, '{}', now(), now()"
            " FROM generate_series(0, %s - 1) n",
            [tenant.pk, USER, users],
        )
        cursor.execute("ANALYZE users_enduser")
        for week in weeks:
            # Cohort c: tier c % 10, number c // 10 + 1; the last one may be partly full.
            cursor.execute(
                "INSERT INTO leagues_leaguecohort (public_id, league_id, week_start, week_end,"
                " tier, number, capacity, members, open)"
                " SELECT gen_random_uuid(), %s, %s, %s, c %% %s, c / %s + 1, %s,"
                "        LEAST(%s, %s - c * %s), false"
                " FROM generate_series(0, %s - 1) c",
                [league.pk, week.start, week.end, TIERS, TIERS, size, size, users, size, cohorts],
            )
            cursor.execute("ANALYZE leagues_leaguecohort")
            span = (week.end - week.start).total_seconds()
            cursor.execute(
                "INSERT INTO leagues_leagueentry (cohort_id, league_id, week_start, user_id,"
                ' tier, score, reached_at, joined_at, "left", rewards, rewards_due)'
                " SELECT co.id, co.league_id, co.week_start, u.id, co.tier,"
                "        CASE WHEN random() < %s THEN 0 ELSE 1 + floor(random() * 999) END,"
                "        co.week_start + make_interval(secs => floor(random() * %s)),"
                "        co.week_start, false, '[]', false"
                " FROM users_enduser u JOIN leagues_leaguecohort co"
                "   ON co.league_id = %s AND co.week_start = %s"
                "  AND (co.number - 1) * %s + co.tier = substr(u.external_id, %s)::int / %s"
                " WHERE u.tenant_id = %s AND u.external_id LIKE %s",
                [
                    *(IDLE_SHARE, span, league.pk, week.start, TIERS, len(USER) + 1, size),
                    *(tenant.pk, USER + "%"),
                ],
            )
        cursor.execute("ANALYZE leagues_leaguecohort")
        cursor.execute("ANALYZE leagues_leagueentry")
        cursor.execute("RESET enable_nestloop")
    return time.perf_counter() - started


# --- verification ---------------------------------------------------------------------------


def verify(
    config: dict[str, Any], week: Any, finished: int, rewards: bool, users: int, cohorts: int
) -> list[tuple[str, bool, str]]:
    from django.db import connection

    league = config["league"]
    week_rows = "FROM leagues_leagueentry WHERE league_id = %s AND week_start = %s"  # constant
    key = [league.pk, week.start]
    checks = []

    def one(sql: str, params: list[Any]) -> tuple[Any, ...]:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return tuple(cursor.fetchone())

    entries, unplaced = one(
        "SELECT count(*), count(*) FILTER (WHERE placement IS NULL OR zone IS NULL"
        f" OR next_tier IS NULL) {week_rows}",
        key,
    )
    checks.append(
        (
            "every entry has a placement, zone and next tier",
            entries == users and unplaced == 0,
            f"{entries:,} entries (seeded {users:,}), {unplaced} without",
        )
    )
    (wrong_cohorts,) = one(
        "SELECT count(*) FROM (SELECT cohort_id, count(*) n, count(DISTINCT placement) d,"  # noqa: S608
        f" min(placement) lo, max(placement) hi {week_rows} GROUP BY cohort_id) s"
        " JOIN leagues_leaguecohort co ON co.id = s.cohort_id"
        " WHERE NOT (s.n = s.d AND s.lo = 1 AND s.hi = s.n AND s.n = co.members)",
        key,
    )
    checks.append(
        (
            "each cohort's placements are 1..n (n = its members)",
            wrong_cohorts == 0,
            f"{wrong_cohorts} cohorts otherwise",
        )
    )
    (out_of_order,) = one(
        "SELECT count(*) FROM (SELECT placement, row_number() OVER (PARTITION BY cohort_id"  # noqa: S608
        f" ORDER BY score DESC, reached_at, user_id) AS rn {week_rows}) s"
        " WHERE s.placement <> s.rn",
        key,
    )
    checks.append(
        (
            "placements follow score, then reached_at, then user",
            out_of_order == 0,
            f"{out_of_order} entries out of order",
        )
    )
    total, unfinished, other_time, still_open = one(
        "SELECT count(*), count(*) FILTER (WHERE finished_at IS NULL),"
        " count(*) FILTER (WHERE finished_at <> %s), count(*) FILTER (WHERE open)"
        " FROM leagues_leaguecohort WHERE league_id = %s AND week_start = %s",
        [week.end, *key],
    )
    checks.append(
        (
            "every cohort finished once (workers' counts add up)",
            total == cohorts == finished and unfinished == other_time == still_open == 0,
            f"{total:,} cohorts, {finished:,} finished by the workers, {unfinished} unfinished,"
            f" {other_time} at another time, {still_open} open",
        )
    )
    due, earned, podium = one(
        "SELECT count(*) FILTER (WHERE rewards_due),"
        " count(*) FILTER (WHERE jsonb_array_length(rewards) > 0),"
        f" count(*) FILTER (WHERE placement <= 3) {week_rows}",
        key,
    )
    want = podium if rewards else 0
    checks.append(
        (
            "rewards earned and due: places 1-3 when configured, else none",
            due == earned == want,
            f"{due:,} due, {earned:,} earned, {want:,} expected",
        )
    )
    return checks


# --- main -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    plan = [
        (rewards, workers)
        for rewards in {"both": (False, True), "none": (False,), "places": (True,)}[args.rewards]
        for workers in args.workers
    ]
    cohorts = math.ceil(args.users / args.cohort_size)
    print(
        f"leagues week end {stamp}: {args.users:,} users in {cohorts:,} cohorts of "
        f"{args.cohort_size}, runs {plan}, database {args.db_name}"
    )
    setup_env(args.db_name)
    database_recreate(args.db_name)
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        from apps.leagues.selectors import league_def

        call_command("migrate", verbosity=0)
        config = configure(args)
        definition = league_def(config["tenant"], config["league"])
        runs = len(plan) + args.profile
        weeks = [definition.week(FIRST_WEEK + dt.timedelta(days=7 * k)) for k in range(runs)]
        seconds = seed(args, config, weeks)
        print(f"seeded {args.users:,} users and {runs} weeks of entries in {seconds:.0f} s")
        connection.close()  # the workers are other processes; this one only configures

        rows = []
        failed = False
        for (rewards, workers), week in zip(plan, weeks, strict=False):
            rewards_set(config, rewards)
            connection.close()
            wall, reports = run_workers(args, workers, week.end)
            finished = sum(r["cohorts"] for r in reports)
            checks = verify(config, week, finished, rewards, args.users, cohorts)
            failed |= not all(ok for _, ok, _ in checks)
            row = {
                "users": args.users,
                "cohorts": cohorts,
                "rewards": "places 1-3" if rewards else "none",
                "workers": workers,
                "wall_s": round(wall, 1),
                "cohorts_per_s": round(cohorts / wall, 1),
                "entries_per_s": round(args.users / wall),
                "per_worker": reports,
                "checks": [{"name": n, "ok": ok, "detail": d} for n, ok, d in checks],
            }
            rows.append(row)
            print(
                f"\n== {workers} worker{'s' * (workers > 1)}, rewards {row['rewards']}: "
                f"{wall:.1f} s, {row['cohorts_per_s']:,} cohorts/s, "
                f"{row['entries_per_s']:,} entries/s"
            )
            for r in reports:
                print(
                    f"   worker {r['pid']}: {r['cohorts']:,} cohorts in {r['seconds']} s, "
                    f"CPU {r['cpu_s']} s, RSS {r['rss_before_mib']} MiB before, "
                    f"peak {r['rss_peak_mib']} MiB"
                )
            for name, ok, detail in checks:
                print(f"   check {'OK  ' if ok else 'FAIL'} {name}: {detail}")
        if args.profile:
            profile_run(args, config, weeks[-1])
        out = RESULTS / f"leagues-week-end-{stamp}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        meta = {
            "date": stamp,
            "command": " ".join([Path(sys.executable).name, *sys.argv]),
            "loadavg": Path("/proc/loadavg").read_text().split()[:3],
            "cpus": os.cpu_count(),
        }
        out.write_text(json.dumps({**meta, "runs": rows}, indent=2, default=str) + "\n")
        print_table(rows)
        print(f"\nwritten {out.relative_to(ROOT)}")
        return 1 if failed else 0
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            psql(f"DROP DATABASE IF EXISTS {args.db_name} WITH (FORCE)")


def profile_run(args: argparse.Namespace, config: dict[str, Any], week: Any) -> None:
    import pstats

    path = RESULTS / "leagues-week-end.prof"
    path.parent.mkdir(parents=True, exist_ok=True)
    rewards_set(config, False)
    from django.db import connection

    connection.close()
    wall, _ = run_workers(args, 1, week.end, profile=str(path))
    print(f"\n== profile: 1 worker under cProfile, {wall:.1f} s ({path.relative_to(ROOT)})")
    stats = pstats.Stats(str(path))
    stats.sort_stats("cumulative").print_stats(25)
    stats.sort_stats("tottime").print_stats(15)


def print_table(rows: list[dict[str, Any]]) -> None:
    print(
        "\n| users | cohorts | rewards | workers | wall s | cohorts/s | peak RSS per worker MiB |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        peaks = " / ".join(f"{w['rss_peak_mib']:g}" for w in r["per_worker"])
        print(
            f"| {r['users']:,} | {r['cohorts']:,} | {r['rewards']} | {r['workers']} | "
            f"{r['wall_s']} | {r['cohorts_per_s']:,} | {peaks} |"
        )


if __name__ == "__main__":
    sys.exit(main())
