"""Hand-written SQL of the points ledger's write (apps/core/db.py says when): an event's awards,
the totals and daily changes they make and the trigger marks that moved; and the read of
GET /users/{id}/points/{key} (`user_total_by_external_id`).

On PostgreSQL it is one statement: the awards are inserted with ON CONFLICT DO NOTHING (the
unique dedupe key is the arbiter of exactly-once), and the totals and daily changes add up only
the awards that were inserted, in data-modifying CTEs of the same statement. Elsewhere (SQLite,
development) the same pieces run one after another. Either way the caller learns which awards
were inserted, and sets right what it computed assuming all of them would be.
"""

import datetime as dt
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection

from apps.core.db import Table, statement, values_rows
from apps.core.replicas import read_connection
from apps.points.models import PointsAward, PointsDailyChange, PointsTotal, PointsTriggerMark
from apps.users.models import EndUser

_AWARD_FIELDS = [f for f in PointsAward._meta.concrete_fields if not f.primary_key]
_MARK_FIELDS = ["user", "trigger", "mark", "due_at"]
_AWARDS, _MARKS = Table(PointsAward), Table(PointsTriggerMark)
_TOTALS, _DAILY = Table(PointsTotal), Table(PointsDailyChange)


@dataclass(frozen=True)
class TotalWrite:
    """A system's total after the event, as computed assuming every award is new."""

    system_pk: int
    level_pk: int | None


@dataclass(frozen=True)
class LedgerWrite:
    tenant_pk: int
    user_pk: int
    now: dt.datetime
    day: dt.date
    awards: Sequence[PointsAward]
    totals: Sequence[TotalWrite]
    marks: Sequence[PointsTriggerMark]


# The statements depend on the database and on how many rows they write: each is built once
# per process for each (vendor, count), from the models (apps/core/db.py).


@functools.cache
def _awards_sql(vendor: str, count: int) -> str:
    columns = ", ".join(connection.ops.quote_name(str(f.column)) for f in _AWARD_FIELDS)
    return statement(
        f"INSERT INTO {{t}} ({columns}) "  # noqa: S608 - identifiers from the model
        f"VALUES {values_rows(count, [''] * len(_AWARD_FIELDS))} "
        "ON CONFLICT ({t[system]}, {t[user]}, {t[dedupe_key]}) DO NOTHING "
        "RETURNING {t[system]}, {t[dedupe_key]}, {t[awarded]}",
        t=_AWARDS,
    )


def _awards_insert(awards: Sequence[PointsAward]) -> tuple[str, list[Any]]:
    params = [
        f.get_db_prep_save(f.pre_save(award, True), connection)
        for award in awards
        for f in _AWARD_FIELDS
    ]
    return _awards_sql(connection.vendor, len(awards)), params


@functools.cache
def _marks_sql(vendor: str, count: int) -> str:
    t = _MARKS
    columns = ", ".join(t[name] for name in _MARK_FIELDS)
    # Only the timestamp needs its type: a NULL due_at has none of its own on PostgreSQL.
    types = ["", "", "", t.type("due_at")]
    return statement(
        f"INSERT INTO {{t}} ({columns}) "  # noqa: S608 - identifiers from the model
        f"VALUES {values_rows(count, types)} "
        "ON CONFLICT ({t[user]}, {t[trigger]}) DO UPDATE SET {t[mark]} = EXCLUDED.{t[mark]}",
        t=t,
    )


_MARK_ATTNAMES = [(name, _MARKS.field(name).attname) for name in _MARK_FIELDS]


def _marks_upsert(marks: Sequence[PointsTriggerMark]) -> tuple[str, list[Any]]:
    t = _MARKS
    params = [t.prep(name, getattr(mark, att)) for mark in marks for name, att in _MARK_ATTNAMES]
    return _marks_sql(connection.vendor, len(marks)), params


@functools.cache
def _totals_upsert(vendor: str, source: str) -> str:
    """Totals from `source` (rows of system_id, added, level_id): a new row starts at what
    was added, an existing one adds it."""
    return statement(
        # Identifiers from the model, `source` a statement of ours; values are parameters.
        # WHERE true: SQLite would read ON CONFLICT as a join's ON without it.
        "INSERT INTO {t} ({t[tenant]}, {t[user]}, {t[system]}, {t[total]}, {t[level]}, "  # noqa: S608
        "{t[first_activity_at]}) "
        f"SELECT %s, %s, system_id, added, level_id, %s FROM {source} WHERE true "
        "ON CONFLICT ({t[user]}, {t[system]}) DO UPDATE "
        "SET {t[total]} = {t}.{t[total]} + EXCLUDED.{t[total]}, {t[level]} = EXCLUDED.{t[level]}",
        t=_TOTALS,
    )


@functools.cache
def _daily_upsert(vendor: str, source: str) -> str:
    return statement(
        "INSERT INTO {t} ({t[tenant]}, {t[user]}, {t[system]}, {t[date]}, {t[change]}) "  # noqa: S608
        f"SELECT %s, %s, system_id, %s, added FROM {source} WHERE true "
        "ON CONFLICT ({t[user]}, {t[system]}, {t[date]}) DO UPDATE "
        "SET {t[change]} = {t}.{t[change]} + EXCLUDED.{t[change]}",
        t=_DAILY,
    )


def ledger_write(write: LedgerWrite) -> set[tuple[int, str]]:
    """Write the event's awards, totals, daily changes and marks; the (system pk, dedupe key)
    of the awards inserted (the others were paid before)."""
    if not write.awards:
        if write.marks:
            _run(*_marks_upsert(write.marks))
        return set()
    if connection.vendor == "postgresql":
        return _write_in_one_statement(write)
    return _write_one_by_one(write)


@functools.cache
def _one_statement(vendor: str, awards: int, totals: int, marks: int) -> str:
    a = Table(PointsAward, "a")  # the awards inserted, as RETURNING names them
    levels = values_rows(totals, [_TOTALS.type("system"), _TOTALS.type("level")])
    # Identifiers from the models; values are parameters.
    sql = (
        f"WITH a AS ({_awards_sql(vendor, awards)}), "  # noqa: S608
        f"s AS (SELECT {a['system']} AS system_id, sum({a['awarded']}) AS added, "
        f"v.column2 AS level_id FROM a JOIN (VALUES {levels}) v "
        f"ON v.column1 = {a['system']} GROUP BY {a['system']}, v.column2), "
        f"t AS ({_totals_upsert(vendor, 's')}), "
        f"d AS ({_daily_upsert(vendor, 's')})"
    )
    if marks:
        sql += f", m AS ({_marks_sql(vendor, marks)})"
    return sql + f" SELECT {a['system']}, {a['dedupe_key']} FROM a"  # noqa: S608


def _write_in_one_statement(write: LedgerWrite) -> set[tuple[int, str]]:
    _, awards_params = _awards_insert(write.awards)
    head = [write.tenant_pk, write.user_pk]
    params = [*awards_params]
    for total in write.totals:
        params += [total.system_pk, total.level_pk]
    params += [
        *head,
        _TOTALS.prep("first_activity_at", write.now),
        *head,
        _DAILY.prep("date", write.day),
    ]
    if write.marks:
        params += _marks_upsert(write.marks)[1]
    sql = _one_statement(connection.vendor, len(write.awards), len(write.totals), len(write.marks))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {(int(system_pk), key) for system_pk, key in cursor.fetchall()}


def _write_one_by_one(write: LedgerWrite) -> set[tuple[int, str]]:
    with connection.cursor() as cursor:
        cursor.execute(*_awards_insert(write.awards))
        inserted = cursor.fetchall()
    added: dict[int, int] = {}
    for system_pk, _, awarded in inserted:
        added[int(system_pk)] = added.get(int(system_pk), 0) + int(awarded)
    levels = {total.system_pk: total.level_pk for total in write.totals}
    rows = [(pk, amount, levels.get(pk)) for pk, amount in added.items()]
    if rows:
        source = (  # only placeholders are formatted in
            "(SELECT column1 AS system_id, column2 AS added, column3 AS level_id "  # noqa: S608
            f"FROM (VALUES {values_rows(len(rows), ['', '', ''])}))"
        )
        values = [v for row in rows for v in row]
        head = [write.tenant_pk, write.user_pk]
        vendor = connection.vendor
        now = _TOTALS.prep("first_activity_at", write.now)
        _run(_totals_upsert(vendor, source), [*head, now, *values])
        _run(_daily_upsert(vendor, source), [*head, _DAILY.prep("date", write.day), *values])
    if write.marks:
        _run(*_marks_upsert(write.marks))
    return {(int(system_pk), key) for system_pk, key, _ in inserted}


def _run(sql: str, params: list[Any]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


# The read of GET /users/{id}/points/{key}: the user by the customer's id and their total in one
# system, in one statement. Written with the ORM (a filter and a Subquery annotation) it was
# compiled again on every request, in about three times the query's own time.


@functools.cache
def _user_total_sql(vendor: str) -> str:
    return statement(
        "SELECT {u[id]}, (SELECT {t[total]} FROM {t} t"
        " WHERE {t[user]} = {u[id]} AND {t[system]} = %s LIMIT 1)"
        " FROM {u} u WHERE {u[tenant]} = %s AND {u[external_id]} = %s LIMIT 1",
        u=Table(EndUser, "u"),
        t=Table(PointsTotal, "t"),
    )


def user_total_by_external_id(
    tenant_pk: int, external_id: str, system_pk: int
) -> tuple[int, int | None] | None:
    """(pk, total in the system or None) of the tenant's user with this id, or None."""
    reading = read_connection()  # a replica's in a lag-tolerant read (apps/core/replicas.py)
    with reading.cursor() as cursor:
        cursor.execute(_user_total_sql(reading.vendor), [system_pk, tenant_pk, external_id])
        row = cursor.fetchone()
    return None if row is None else (int(row[0]), row[1])
