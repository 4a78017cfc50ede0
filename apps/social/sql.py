"""The friends rankings' statement (ARCHITECTURE.md §9): a user and their friends on one run
and group of a board, best first, in one statement, whatever the size of the board: the
friends come from the user's list (its unique index), their entries from the entries' unique
index (board, run, group, user)."""

import datetime as dt
import functools
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from apps.core.db import Table, column_reader, statement
from apps.core.replicas import read_connection
from apps.leaderboards.models import LeaderboardEntry
from apps.leaderboards.sql import rank_order
from apps.social.models import Friendship
from apps.users.models import EndUser

FRIENDS_RANKING = """
SELECT {u[external_id]}, {u[name]}, {t[value]}
FROM {t} t JOIN {u} u ON {u[id]} = {t[user]}
WHERE {t[leaderboard]} = %s AND {t[run_start]} = %s AND {t[group]} = %s
  AND ({t[user]} = %s OR {t[user]} IN (SELECT {f[friend]} FROM {f} f WHERE {f[user]} = %s))
ORDER BY {order}
"""


@functools.cache
def _friends_ranking_sql(vendor: str) -> str:
    t = Table(LeaderboardEntry, "t")
    return statement(
        FRIENDS_RANKING,
        t=t,
        u=Table(EndUser, "u"),
        f=Table(Friendship, "f"),
        order=rank_order(t),
    )


@functools.cache
def _value_reader(vendor: str) -> Callable[[Any], Any]:
    return column_reader(LeaderboardEntry, "value")


def friends_ranking(
    board_pk: int, run_start: dt.date, group: str, user_pk: int
) -> list[tuple[str, str | None, Decimal]]:
    """(user id, name, value) of the user and each of their friends with an entry in the run
    and group, best first (domain.RANK_ORDER, as the board orders them)."""
    reading = read_connection()  # a replica's in a lag-tolerant read (apps/core/replicas.py)
    with reading.cursor() as cursor:
        cursor.execute(
            _friends_ranking_sql(reading.vendor), [board_pk, run_start, group, user_pk, user_pk]
        )
        rows = cursor.fetchall()
    value = _value_reader(reading.vendor)
    return [(external_id, name, value(v)) for external_id, name, v in rows]
