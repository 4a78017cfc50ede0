"""PostgreSQL runs with server-side binding and prepared statements unless
DATABASE_PREPARED_STATEMENTS=false or DATABASE_TRANSACTION_POOLING (PgBouncer); replicas
(DATABASE_REPLICA_URLS) are built like the default (gamify/settings.py; README "Settings")."""

import json
from typing import Any

import pytest
from django.db import connection

from tests.concurrency import POSTGRES_ONLY
from tests.settings_process import settings_run

SHOW = (
    "import json, gamify.settings as s;"
    " d = s.DATABASES['default'];"
    " print(json.dumps({'options': d.get('OPTIONS', {}), 'health': d['CONN_HEALTH_CHECKS']}))"
)


def _database_settings(**env: str) -> Any:
    result = settings_run(SHOW, **env)
    assert result.returncode == 0, result.stderr
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


SHOW_ALL = (
    "import json, gamify.settings as s;"
    " print(json.dumps({'databases': s.DATABASES, 'replicas': s.DATABASE_REPLICAS,"
    " 'routers': s.DATABASE_ROUTERS}, default=str))"
)


def _all_settings(**env: str) -> Any:
    result = settings_run(SHOW_ALL, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_transaction_pooling_turns_off_prepared_statements_and_server_side_cursors() -> None:
    shown = _all_settings(
        DATABASE_URL="postgres://u@127.0.0.1:6432/gamify",
        DATABASE_REPLICA_URLS="postgres://u@127.0.0.1:6433/gamify",
        DATABASE_TRANSACTION_POOLING="true",
        REDIS_URL="redis://127.0.0.1:6379/0",
    )
    for alias in ("default", "replica1"):
        database = shown["databases"][alias]
        assert "server_side_binding" not in database.get("OPTIONS", {}), alias
        assert "prepare_threshold" not in database.get("OPTIONS", {}), alias
        assert database["DISABLE_SERVER_SIDE_CURSORS"] is True, alias


def test_prepared_statements_may_be_turned_back_on_behind_a_pooler_that_keeps_them() -> None:
    shown = _all_settings(
        DATABASE_URL="postgres://u@127.0.0.1:6432/gamify",
        DATABASE_TRANSACTION_POOLING="true",
        DATABASE_PREPARED_STATEMENTS="true",
    )
    assert shown["databases"]["default"]["OPTIONS"]["prepare_threshold"] == 5


def test_replica_urls_make_replica_aliases_built_like_the_default() -> None:
    shown = _all_settings(
        DATABASE_URL="postgres://u@db.example:5432/gamify",
        DATABASE_REPLICA_URLS="postgres://u@r1.example:5432/gamify, postgres://u@r2.example/gamify",
        REDIS_URL="redis://127.0.0.1:6379/0",
    )
    assert shown["replicas"] == {"default": ["replica1", "replica2"]}
    assert shown["routers"] == [
        "apps.cells.routers.ControlRouter",
        "apps.core.replicas.ReplicaRouter",
    ]
    default, replica = shown["databases"]["default"], shown["databases"]["replica1"]
    assert replica["HOST"] == "r1.example"
    assert shown["databases"]["replica2"]["HOST"] == "r2.example"
    assert replica["OPTIONS"] == {**default["OPTIONS"], "connect_timeout": 2}
    assert replica["CONN_MAX_AGE"] == default["CONN_MAX_AGE"]
    assert replica["TEST"] == {"MIRROR": "default"}  # the suite needs no database of its own
    assert not replica.get("DISABLE_SERVER_SIDE_CURSORS")


def test_without_replica_urls_there_are_no_replicas() -> None:
    shown = _all_settings(DATABASE_URL="sqlite:///x.sqlite3")
    assert shown["replicas"] == {"default": []}
    assert list(shown["databases"]) == ["default", "control"]


def test_replicas_need_the_shared_cache_of_redis_url() -> None:
    result = settings_run(
        "import gamify.settings",
        DATABASE_URL="postgres://u@db.example:5432/gamify",
        DATABASE_REPLICA_URLS="postgres://u@r1.example:5432/gamify",
    )
    assert result.returncode != 0
    assert "DATABASE_REPLICA_URLS needs REDIS_URL" in result.stderr


def test_the_settings_refuse_a_lag_the_stickiness_window_does_not_cover() -> None:
    result = settings_run(
        "import gamify.settings",
        DATABASE_REPLICA_STICKY_SECONDS="3",
        DATABASE_REPLICA_MAX_LAG_SECONDS="3",
    )
    assert result.returncode != 0
    assert "DATABASE_REPLICA_MAX_LAG_SECONDS must be" in result.stderr
