"""Hand-written SQL of the points ledger's write (apps/core/db.py says when): an event's awards,
the totals and daily changes they make and the trigger marks that moved.

On PostgreSQL it is one statement: the awards are inserted with ON CONFLICT DO NOTHING (the
unique dedupe key is the arbiter of exactly-once), and the totals and daily changes add up only
the awards that were inserted, in data-modifying CTEs of the same statement. Elsewhere (SQLite,
development) the same pieces run one after another. Either way the caller learns which awards
were inserted, and sets right what it computed assuming all of them would be.
"""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Model

from apps.core.db import values_rows
from apps.points.models import PointsAward, PointsDailyChange, PointsTotal, PointsTriggerMark

_AWARD_FIELDS = [f for f in PointsAward._meta.concrete_fields if not f.primary_key]
_MARK_FIELDS = ["user_id", "trigger_id", "mark", "due_at"]


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


def _table(model: type[Model]) -> str:
    return str(connection.ops.quote_name(model._meta.db_table))


def _awards_insert(awards: Sequence[PointsAward]) -> tuple[str, list[Any]]:
    columns = ", ".join(connection.ops.quote_name(str(f.column)) for f in _AWARD_FIELDS)
    params = [
        f.get_db_prep_save(f.pre_save(award, True), connection)
        for award in awards
        for f in _AWARD_FIELDS
    ]
    sql = (
        f"INSERT INTO {_table(PointsAward)} ({columns}) "  # noqa: S608 - identifiers from the model
        f"VALUES {values_rows(len(awards), [''] * len(_AWARD_FIELDS))} "
        "ON CONFLICT (system_id, user_id, dedupe_key) DO NOTHING "
        "RETURNING system_id, dedupe_key, awarded"
    )
    return sql, params


def _marks_upsert(marks: Sequence[PointsTriggerMark]) -> tuple[str, list[Any]]:
    ops = connection.ops
    params: list[Any] = []
    for mark in marks:
        params += [
            mark.user_id,
            mark.trigger_id,
            mark.mark,
            ops.adapt_datetimefield_value(mark.due_at),
        ]
    sql = (
        f"INSERT INTO {_table(PointsTriggerMark)} ({', '.join(_MARK_FIELDS)}) "  # noqa: S608
        f"VALUES {values_rows(len(marks), ['', '', '', 'timestamptz'])} "
        "ON CONFLICT (user_id, trigger_id) DO UPDATE SET mark = EXCLUDED.mark"
    )
    return sql, params


def _totals_upsert(source: str) -> str:
    """Totals from `source` (rows of system_id, added, level_id): a new row starts at what
    was added, an existing one adds it."""
    t = _table(PointsTotal)
    return (
        f"INSERT INTO {t} (tenant_id, user_id, system_id, total, level_id, first_activity_at) "  # noqa: S608
        # WHERE true: SQLite would read ON CONFLICT as a join's ON without it.
        f"SELECT %s, %s, system_id, added, level_id, %s FROM {source} WHERE true "
        f"ON CONFLICT (user_id, system_id) DO UPDATE SET total = {t}.total + EXCLUDED.total, "
        "level_id = EXCLUDED.level_id"
    )


def _daily_upsert(source: str) -> str:
    t = _table(PointsDailyChange)
    return (
        f"INSERT INTO {t} (tenant_id, user_id, system_id, date, change) "  # noqa: S608
        f"SELECT %s, %s, system_id, %s, added FROM {source} WHERE true "
        f"ON CONFLICT (user_id, system_id, date) DO UPDATE SET change = {t}.change + "
        "EXCLUDED.change"
    )


def _levels(totals: Sequence[TotalWrite]) -> tuple[str, list[Any]]:
    params: list[Any] = []
    for total in totals:
        params += [total.system_pk, total.level_pk]
    return values_rows(len(totals), ["bigint", "bigint"]), params


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


def _write_in_one_statement(write: LedgerWrite) -> set[tuple[int, str]]:
    ops = connection.ops
    awards_sql, awards_params = _awards_insert(write.awards)
    levels_sql, levels_params = _levels(write.totals)
    head = [write.tenant_pk, write.user_pk]
    # Identifiers from the models; values are parameters.
    sql = (
        f"WITH a AS ({awards_sql}), "  # noqa: S608
        "s AS (SELECT a.system_id, sum(a.awarded) AS added, v.column2 AS level_id FROM a "
        f"JOIN (VALUES {levels_sql}) v ON v.column1 = a.system_id "
        "GROUP BY a.system_id, v.column2), "
        f"t AS ({_totals_upsert('s')}), "
        f"d AS ({_daily_upsert('s')})"
    )
    params = [
        *awards_params,
        *levels_params,
        *head,
        ops.adapt_datetimefield_value(write.now),
        *head,
        ops.adapt_datefield_value(write.day),
    ]
    if write.marks:
        marks_sql, marks_params = _marks_upsert(write.marks)
        sql += f", m AS ({marks_sql})"
        params += marks_params
    sql += " SELECT system_id, dedupe_key FROM a"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {(int(system_pk), key) for system_pk, key in cursor.fetchall()}


def _write_one_by_one(write: LedgerWrite) -> set[tuple[int, str]]:
    ops = connection.ops
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
        _run(_totals_upsert(source), [*head, ops.adapt_datetimefield_value(write.now), *values])
        _run(_daily_upsert(source), [*head, ops.adapt_datefield_value(write.day), *values])
    if write.marks:
        _run(*_marks_upsert(write.marks))
    return {(int(system_pk), key) for system_pk, key, _ in inserted}


def _run(sql: str, params: list[Any]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
