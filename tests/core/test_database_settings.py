"""PostgreSQL runs with server-side binding and prepared statements unless
DATABASE_PREPARED_STATEMENTS=false (gamify/settings.py; README "Settings")."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from tests.concurrency import POSTGRES_ONLY

ROOT = Path(__file__).resolve().parents[2]
SHOW = (
    "import json, gamify.settings as s;"
    " d = s.DATABASES['default'];"
    " print(json.dumps({'options': d.get('OPTIONS', {}), 'health': d['CONN_HEALTH_CHECKS']}))"
)


def _database_settings(**env: str) -> Any:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("DATABASE_")}
    environment.update(DEBUG="false", SECRET_KEY="x" * 60, **env)
    result = subprocess.run(
        [sys.executable, "-c", SHOW],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(result.stdout)


def test_postgresql_prepares_statements_by_default() -> None:
    shown = _database_settings(DATABASE_URL="postgres://u@db.example:5432/gamify")
    assert shown["options"] == {"server_side_binding": True, "prepare_threshold": 5}
    assert shown["health"] is True


def test_prepared_statements_can_be_turned_off_for_a_pooler() -> None:
    shown = _database_settings(
        DATABASE_URL="postgres://u@db.example:5432/gamify", DATABASE_PREPARED_STATEMENTS="false"
    )
    assert "server_side_binding" not in shown["options"]
    assert "prepare_threshold" not in shown["options"]


def test_sqlite_is_left_as_it_was() -> None:
    shown = _database_settings(DATABASE_URL="sqlite:///x.sqlite3")
    assert shown["options"] == {"transaction_mode": "IMMEDIATE", "timeout": 20}


@pytest.mark.sql
@pytest.mark.django_db
@pytest.mark.skipif(*POSTGRES_ONLY[1].args, **POSTGRES_ONLY[1].kwargs)
def test_a_statement_run_five_times_is_prepared_on_postgresql() -> None:
    if not connection.settings_dict["OPTIONS"].get("server_side_binding"):
        pytest.skip("DATABASE_PREPARED_STATEMENTS=false")
    marker = "SELECT %s::int + 1 AS gamify_prepared_probe"
    with connection.cursor() as cursor:
        for n in range(6):
            cursor.execute(marker, [n])
            assert cursor.fetchone() == (n + 1,)
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements"
            " WHERE statement LIKE %s AND statement NOT LIKE %s",
            ["%gamify_prepared_probe%", "%pg_prepared_statements%"],
        )
        assert cursor.fetchone() == (1,)
