"""`make unit`'s second step: when the suite ran on another database (SQLite, the default), run
on PostgreSQL, if it answers, the tests that PostgreSQL would otherwise never see there: those
marked `sql` (the hand-written statements that PostgreSQL runs apart, such as the event's record
and the ledger's write in one statement, read_together's UNION, the rank order's statements)
and those marked `postgres` (real row locks and threads). A targeted subset, not the suite again.

TEST_POSTGRES_URL names the server and database (postgres://postgres@127.0.0.1:5432/test by
default; PostgreSQL's test runner creates test_<name>); empty turns the step off (.ci/run's
SQLite run, which follows a whole run on PostgreSQL). When PostgreSQL does not answer, one line
says so and the step passes.
"""

import os
import subprocess
import sys
from urllib.parse import unquote, urlsplit

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/test"
POSTGRES_SCHEMES = ("postgres", "postgresql", "pgsql")


def _names_postgres(url: str) -> bool:
    return urlsplit(url).scheme in POSTGRES_SCHEMES


def _answers(url: str) -> str:
    """ "" when a server answers at `url`, else why not."""
    import psycopg

    parts = urlsplit(url)
    try:
        # The maintenance database: the test database may not exist yet.
        psycopg.connect(
            host=parts.hostname or "127.0.0.1",
            port=parts.port or 5432,
            user=unquote(parts.username or "postgres"),
            password=unquote(parts.password or "") or None,
            dbname="postgres",
            connect_timeout=2,
        ).close()
    except psycopg.Error as exc:
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ""


def main() -> int:
    if _names_postgres(os.environ.get("DATABASE_URL", "")):
        return 0  # the suite itself ran on PostgreSQL
    url = os.environ.get("TEST_POSTGRES_URL", DEFAULT_URL)
    if not url:
        return 0
    parts = urlsplit(url)
    shown = f"{parts.hostname}:{parts.port or 5432}{parts.path}"  # no password in the log
    problem = "not a PostgreSQL URL" if not _names_postgres(url) else _answers(url)
    if problem:
        sys.stdout.write(
            f"PostgreSQL does not answer at {shown} ({problem}): the tests marked sql ran on "
            "SQLite only, those marked postgres not at all\n"
        )
        return 0
    sys.stdout.write(f"\n== The tests marked sql and postgres, on PostgreSQL ({shown})\n")
    sys.stdout.flush()
    command = [sys.executable, "-m", "pytest", "-n", "0", "-rs", "-m", "sql or postgres"]
    return subprocess.run(
        [*command, *sys.argv[1:]], env={**os.environ, "DATABASE_URL": url}, check=False
    ).returncode


if __name__ == "__main__":
    sys.exit(main())
