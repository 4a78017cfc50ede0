"""Hand-written statements of the hot path, where the ORM's query building costs more than the
query: single-statement upserts for counters (`INSERT ... ON CONFLICT DO UPDATE ... [RETURNING]`
works on PostgreSQL and SQLite >= 3.35; the ORM would need a read and then an update or an
insert), and aggregates the ORM compiles slowly. The SQL itself lives in each app's `sql.py`.
"""

import datetime as dt
import functools
import logging
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any, TypeVar

from django.db import OperationalError, connection
from django.db.models import Model

logger = logging.getLogger("gamify.db")
T = TypeVar("T")


def upsert(sql: str, model: type[Model], params: list[Any]) -> tuple[Any, ...] | None:
    """Run `sql` with `{t}` replaced by the model's quoted table; returns the RETURNING row."""
    return fetch_one(sql, model, params)


def fetch_one(sql: str, model: type[Model], params: list[Any]) -> tuple[Any, ...] | None:
    """Run `sql` with `{t}` replaced by the model's quoted table, parameters adapted as the ORM
    adapts them; returns the first row, if the statement returns rows."""
    ops = connection.ops
    table = ops.quote_name(model._meta.db_table)
    adapted = [
        ops.adapt_decimalfield_value(p, 24, 6)
        if isinstance(p, Decimal)
        else ops.adapt_datetimefield_value(p)
        if isinstance(p, dt.datetime)
        else ops.adapt_datefield_value(p)
        if isinstance(p, dt.date)
        else p
        for p in params
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql.format(t=table), adapted)
        return cursor.fetchone() if cursor.description else None


Converter = Callable[[Any, Any, Any], Any]


def model_columns(
    model: type[Model], alias: str
) -> tuple[list[str], list[str], list[list[Converter]]]:
    """For a hand-written SELECT of every concrete column of `model` under `alias`: the quoted
    column references, the field attnames and each field's converters (what the ORM applies
    to a row: dates from SQLite's text, JSON from the database's, decimals...)."""
    quote = connection.ops.quote_name
    fields = model._meta.concrete_fields
    columns = [f"{alias}.{quote(str(f.column))}" for f in fields]
    converters: list[list[Converter]] = []
    for field in fields:
        col = field.get_col(alias)
        # Bound to their column: some (SQLite's decimals) read the field from it.
        converters.append(
            [
                functools.partial(_convert, convert, col)
                for convert in connection.ops.get_db_converters(col)
                + col.get_db_converters(connection)
            ]
        )
    return columns, [f.attname for f in fields], converters


def _convert(convert: Converter, col: Any, value: Any, _expression: Any, conn: Any) -> Any:
    return convert(value, col, conn)


def model_from_row(
    model: type[Model], names: list[str], converters: list[list[Converter]], row: Sequence[Any]
) -> Any:
    """The instance the ORM would have made from these column values."""
    values = []
    for value, field_converters in zip(row, converters, strict=True):
        for convert in field_converters:
            value = convert(value, None, connection)
        values.append(value)
    return model.from_db(connection.alias, names, values)


class CompiledSelect:
    """`SELECT <every column of model> FROM <its table> WHERE <where>`, built once per process
    and database vendor, for hot-path reads whose ORM compilation costs more than the query.
    `where` uses %s parameters (and may end with an ORDER BY); `for_update` locks the row
    where the database can."""

    def __init__(self, model: type[Model], where: str, for_update: bool = False) -> None:
        self.model = model
        self.where = where
        self.for_update = for_update
        self._built: dict[str, tuple[str, list[str], list[list[Converter]]]] = {}

    def _build(self) -> tuple[str, list[str], list[list[Converter]]]:
        built = self._built.get(connection.vendor)
        if built is None:
            columns, names, converters = model_columns(self.model, "m")
            table = connection.ops.quote_name(self.model._meta.db_table)
            # Identifiers from the model only; values are parameters.
            sql = f"SELECT {', '.join(columns)} FROM {table} m WHERE {self.where}"  # noqa: S608
            built = self._built[connection.vendor] = (sql, names, converters)
        return built

    def _rows(self, suffix: str, params: Sequence[Any]) -> list[Any]:
        sql, names, converters = self._build()
        with connection.cursor() as cursor:
            cursor.execute(sql + suffix, list(params))
            rows = cursor.fetchall()
        return [model_from_row(self.model, names, converters, row) for row in rows]

    def first(self, params: Sequence[Any]) -> Any:
        lock = self.for_update and connection.features.has_select_for_update
        found = self._rows(" LIMIT 1" + (" FOR UPDATE" if lock else ""), params)
        return found[0] if found else None

    def many(self, params: Sequence[Any], limit: int | None = None) -> list[Any]:
        if limit is None:
            return self._rows("", params)
        return self._rows(" LIMIT %s", [*params, limit])


@functools.cache
def _insert_statement(model: type[Model], vendor: str) -> tuple[str, list[Any]]:
    quote = connection.ops.quote_name
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    columns = ", ".join(quote(str(f.column)) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    pk = quote(str(model._meta.pk.column))
    table = quote(model._meta.db_table)
    # Identifiers from the model only; values are parameters.
    sql = f"INSERT INTO {table} ({columns}) VALUES ({marks}) RETURNING {pk}"  # noqa: S608
    return sql, fields


def insert(instance: Model) -> None:
    """`instance.save(force_insert=True)` for hot paths (no signals: the project has none): the
    statement is built once per model, values prepared as the ORM prepares them."""
    model = type(instance)
    sql, fields = _insert_statement(model, connection.vendor)
    params = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    instance.pk = row[0] if row else None
    instance._state.adding = False
    instance._state.db = connection.alias


def deadlocked(exc: OperationalError) -> bool:
    """Whether PostgreSQL aborted the transaction to break a deadlock (SQLSTATE 40P01)."""
    return getattr(exc.__cause__, "sqlstate", None) == "40P01"


def retrying_deadlocks(run: Callable[[], T], retries: int, what: str) -> T:
    """`run()` (which opens its own transaction, or savepoint) again, at most `retries` times,
    when PostgreSQL aborts it as a deadlock victim: the rollback undid everything it did, and
    released the locks it took."""
    failures = 0
    while True:
        try:
            return run()
        except OperationalError as exc:
            failures += 1
            if failures > retries or not deadlocked(exc):
                raise
            logger.warning("%s deadlocked: run again", what)
