"""Hand-written statements of the hot path, where the ORM's query building costs more than the
query: single-statement upserts for counters (`INSERT ... ON CONFLICT DO UPDATE ... [RETURNING]`
works on PostgreSQL and SQLite >= 3.35; the ORM would need a read and then an update or an
insert), and aggregates the ORM compiles slowly. The SQL itself lives in each app's `sql.py`.

This module is their one door to the schema: a statement is a template that names tables and
columns through `Table` (`{t}`, `{t[field]}`), casts to a column's own type (`Table.type`) and
prepares values as the column's field does (`Table.prep`), so no table, column, type or
precision is typed by hand, and a misspelt field fails when the statement is built.
"""

import datetime as dt
import functools
import json
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Generic, TypeVar

from django.db import OperationalError, connection
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model

logger = logging.getLogger("gamify.db")
T = TypeVar("T")


class Table:
    """A model's table in a statement template, every name from the model's `_meta`.
    Formatted, `{t}` is the quoted table and `{t[field]}` the quoted column of a field, by
    name or attname (`{t[user]}` and `{t[user_id]}` are both "user_id"), qualified by the
    alias when the table has one (`m."user_id"`)."""

    def __init__(self, model: type[Model], alias: str = "") -> None:
        self.model = model
        self.alias = alias
        self._preparers: dict[str, Callable[[Any], Any]] = {}

    def __format__(self, spec: str) -> str:
        return str(connection.ops.quote_name(self.model._meta.db_table))

    def __getitem__(self, name: str) -> str:
        column = connection.ops.quote_name(str(self.field(name).column))
        return f"{self.alias}.{column}" if self.alias else str(column)

    def field(self, name: str) -> Any:
        return self.model._meta.get_field(name)

    def type(self, name: str) -> str:
        """The column's SQL type on this database (`numeric(24, 6)`, `bigint` for a foreign
        key), for a cast."""
        return str(self.field(name).db_type(connection))

    def quantum(self, name: str) -> Decimal:
        """The smallest step of a decimal column (`Decimal("1E-6")` for 6 places): what a value
        read back without the field's converters is quantized to."""
        return Decimal(1).scaleb(-self.field(name).decimal_places)

    def prep(self, name: str, value: Any) -> Any:
        """`value` (of the field's Python type) as the field hands it to the database driver
        when it saves it: a decimal with the column's digits and places, a date or datetime
        as the backend adapts them."""
        preparer = self._preparers.get(name)
        if preparer is None:
            preparer = self._preparers[name] = self._preparer(name)
        return preparer(value)

    def _preparer(self, name: str) -> Callable[[Any], Any]:
        # What the field's get_db_prep_save does with a value of its type, without its
        # conversions (they cost more than the adaption), on whichever connection runs it.
        field = self.field(name)
        kind = field.get_internal_type()
        if kind == "DecimalField":
            digits, places = field.max_digits, field.decimal_places
            return lambda v: connection.ops.adapt_decimalfield_value(v, digits, places)
        if kind == "DateTimeField":
            return lambda v: connection.ops.adapt_datetimefield_value(v)
        if kind == "DateField":
            return lambda v: connection.ops.adapt_datefield_value(v)
        return lambda v: field.get_db_prep_save(v, connection)


def statement(template: str, **parts: type[Model] | Table | str) -> str:
    """`template` with its tables (`{t}`) and columns (`{t[field]}`) named from the models,
    as `Table` formats them, and its other parts (a string: SQL built the same way) put in:
    build it once per process and vendor (`functools.cache`)."""
    return template.format(
        **{k: v if isinstance(v, Table | str) else Table(v) for k, v in parts.items()}
    )


@functools.cache
def _formatted(sql: str, model: type[Model], vendor: str) -> str:
    return statement(sql, t=model)


def upsert(sql: str, model: type[Model], params: list[Any]) -> tuple[Any, ...] | None:
    """Run the template `sql` with `{t}` the model's table; returns the RETURNING row."""
    return fetch_one(sql, model, params)


def fetch_one(
    sql: str, model: type[Model], params: list[Any], using: BaseDatabaseWrapper | None = None
) -> tuple[Any, ...] | None:
    """Run the template `sql` with `{t}` the model's table (`statement`), parameters adapted as
    the ORM adapts them; returns the first row, if the statement returns rows. `using`: the
    connection of a read that may go to a replica (apps/core/replicas.py), else the primary."""
    with (using or connection).cursor() as cursor:
        cursor.execute(_formatted(sql, model, connection.vendor), _adapted(params))
        return cursor.fetchone() if cursor.description else None


def _adapted(params: list[Any]) -> list[Any]:
    # A parameter of unknown column: the column's own precision applies when it is stored.
    ops = connection.ops
    return [
        ops.adapt_decimalfield_value(p)
        if isinstance(p, Decimal)
        else ops.adapt_datetimefield_value(p)
        if isinstance(p, dt.datetime)
        else ops.adapt_datefield_value(p)
        if isinstance(p, dt.date)
        else p
        for p in params
    ]


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
    converters = [_field_converters(field, alias) for field in fields]
    return columns, [f.attname for f in fields], converters


def _field_converters(field: Any, alias: str) -> list[Converter]:
    col = field.get_col(alias)
    # Bound to their column: some (SQLite's decimals) read the field from it.
    return [
        functools.partial(_convert, convert, col)
        for convert in connection.ops.get_db_converters(col) + col.get_db_converters(connection)
    ]


def column_reader(model: type[Model], name: str) -> Callable[[Any], Any]:
    """What the ORM makes of a value of the field `name` read by a hand-written statement
    (a decimal from SQLite's number, a date from its text): build it once per vendor."""
    converters = _field_converters(model._meta.get_field(name), "")

    def read(value: Any) -> Any:
        for convert in converters:
            value = convert(value, None, connection)
        return value

    return read


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
    """`SELECT <every column of model> FROM <its table> m WHERE <where>`, built once per process
    and database vendor, for hot-path reads whose ORM compilation costs more than the query.
    `where` is a template naming the columns as `{m[field]}` (`statement`), with %s parameters
    (and may end with an ORDER BY); `for_update` locks the row where the database can."""

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
            where = statement(self.where, m=Table(self.model, "m"))
            # Identifiers from the model only; values are parameters.
            sql = f"SELECT {', '.join(columns)} FROM {table} m WHERE {where}"  # noqa: S608
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

    def many(
        self, params: Sequence[Any], limit: int | None = None, lock: bool = False
    ) -> list[Any]:
        if lock and connection.features.has_select_for_update:
            return self._rows(" FOR UPDATE", params)
        if limit is None:
            return self._rows("", params)
        return self._rows(" LIMIT %s", [*params, limit])

    def as_json_member(self, index: int) -> str:
        """This select as one member of read_together's UNION ALL (PostgreSQL): its rows as
        (index, the row as JSON text)."""
        table = connection.ops.quote_name(self.model._meta.db_table)
        where = statement(self.where, m=Table(self.model, "m"))
        # Identifiers from the model, an int: values stay parameters.
        return f"(SELECT {index}, row_to_json(m)::text FROM {table} m WHERE {where})"  # noqa: S608

    def from_json(self, text: str) -> Any:
        """The instance the ORM would have made from a row that row_to_json rendered."""
        names, columns, decoders = _json_decoders(self.model)
        row = json.loads(text, parse_float=Decimal)
        values = [
            None if row[c] is None else decode(row[c])
            for c, decode in zip(columns, decoders, strict=True)
        ]
        return self.model.from_db(connection.alias, names, values)


Read = tuple[CompiledSelect, Sequence[Any]]  # a select and its parameters


def read_together(reads: Sequence[Read]) -> list[list[Any]]:
    """The rows of every read, in order. On PostgreSQL in one statement, one round trip: a
    UNION ALL of each read's rows as JSON (row_to_json), decoded as the ORM would have; the
    order of rows within a read is not kept. Elsewhere (SQLite, development) one statement
    each."""
    if connection.vendor != "postgresql":
        return [select.many(params) for select, params in reads]
    if not reads:
        return []
    sql = " UNION ALL ".join(select.as_json_member(i) for i, (select, _) in enumerate(reads))
    params = [p for _, read_params in reads for p in read_params]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    found: list[list[Any]] = [[] for _ in reads]
    for index, text in rows:
        found[index].append(reads[index][0].from_json(text))
    return found


@dataclass(frozen=True)
class Load(Generic[T]):
    """What one step reads before it computes: its selects, and how it makes its state from
    their rows (one list per select). Steps' loads are read together (load_together)."""

    reads: tuple[Read, ...]
    make: Callable[[list[list[Any]]], T]


def load_together(*loads: Load[Any], nothing_stored: bool = False) -> list[Any]:
    """Each load's state, in order, from one read_together of all their selects; without
    reading when the caller knows there is `nothing_stored` (a row created in this
    transaction has nothing pointing to it yet)."""
    reads = [read for load in loads for read in load.reads]
    rows = [[] for _ in reads] if nothing_stored else read_together(reads)
    made, start = [], 0
    for load in loads:
        end = start + len(load.reads)
        made.append(load.make(rows[start:end]))
        start = end
    return made


def _json_decode_datetime(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value)


def _json_decode_date(value: str) -> dt.date:
    return dt.date.fromisoformat(value)


def _json_decode_decimal(value: Any) -> Decimal:
    return value if isinstance(value, Decimal) else Decimal(value)


def _json_same(value: Any) -> Any:
    return value


def _json_document(value: Any) -> Any:
    """A JSON column's value as psycopg parses it: its numbers with a fraction are floats
    (float(Decimal(s)) is the double nearest s, as float(s) is)."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, list):
        return [_json_document(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_document(v) for k, v in value.items()}
    return value


# How row_to_json writes each kind of column, back to what psycopg would have returned.
# JSON columns arrive parsed, numbers as int or Decimal; a kind not listed is refused.
_JSON_DECODERS: dict[str, Callable[[Any], Any]] = {
    "DateTimeField": _json_decode_datetime,
    "DateField": _json_decode_date,
    "DecimalField": _json_decode_decimal,
    "UUIDField": uuid.UUID,
    "JSONField": _json_document,
    "CharField": _json_same,
    "TextField": _json_same,
    "BooleanField": _json_same,
    "AutoField": _json_same,
    "BigAutoField": _json_same,
    "IntegerField": _json_same,
    "BigIntegerField": _json_same,
    "PositiveIntegerField": _json_same,
    "PositiveSmallIntegerField": _json_same,
    "SmallIntegerField": _json_same,
}


@functools.cache
def _json_decoders(model: type[Model]) -> tuple[list[str], list[str], list[Callable[[Any], Any]]]:
    names, columns, decoders = [], [], []
    for field in model._meta.concrete_fields:
        target = field.target_field if field.is_relation else field  # type: ignore[attr-defined]
        kind = target.get_internal_type()
        if kind not in _JSON_DECODERS:
            raise TypeError(f"read_together cannot decode {model.__name__}.{field.name} ({kind})")
        names.append(field.attname)
        columns.append(str(field.column))
        decoders.append(_JSON_DECODERS[kind])
    return names, columns, decoders


@functools.cache
def _insert_statement(
    model: type[Model], vendor: str, conflict: tuple[str, ...]
) -> tuple[str, list[Any]]:
    quote = connection.ops.quote_name
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    columns = ", ".join(quote(str(f.column)) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    pk = quote(str(model._meta.pk.column))
    table = quote(model._meta.db_table)
    arbiter = ", ".join(Table(model)[name] for name in conflict)
    skip = f" ON CONFLICT ({arbiter}) DO NOTHING" if conflict else ""
    # Identifiers from the model only; values are parameters.
    sql = f"INSERT INTO {table} ({columns}) VALUES ({marks}){skip} RETURNING {pk}"  # noqa: S608
    return sql, fields


def insert(instance: Model, *, unless_conflict: tuple[str, ...] = ()) -> bool:
    """`instance.save(force_insert=True)` for hot paths (no signals: the project has none): the
    statement is built once per model, values prepared as the ORM prepares them.
    `unless_conflict` names the fields of a unique constraint: a row that would break it is
    not inserted (ON CONFLICT DO NOTHING; no error, so no savepoint is needed), and False is
    returned."""
    model = type(instance)
    sql, fields = _insert_statement(model, connection.vendor, unless_conflict)
    params = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return False
    instance.pk = row[0]
    instance._state.adding = False
    instance._state.db = connection.alias
    return True


# Writes of many rows (a batch in bulk, apps/pipeline/bulk.py), PostgreSQL only: one statement
# a table, its rows passed column by column as arrays (`unnest`), so the statement has one
# placeholder a column whatever the number of rows, and is built once per process. Values are
# passed as the model's instances hold them (the array's cast does what the ORM's preparation
# would), JSON as text.


def _bound_cursor() -> Any:
    """A cursor whose parameters PostgreSQL binds (psycopg's own Cursor, not the client-side
    binding Django's backend uses by default): an array goes over the wire in binary, not
    quoted into the statement's text. Wrapped as Django wraps its cursors, so that execute
    wrappers and query logging see its statements."""
    import psycopg

    connection.ensure_connection()
    return connection._prepare_cursor(psycopg.Cursor(connection.connection))  # type: ignore[attr-defined]


def _column_reader(field: Any) -> Callable[[Model], Any]:
    attname = field.attname
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return lambda instance: field.pre_save(instance, True)
    if field.get_internal_type() == "JSONField":
        encoder = field.encoder

        def read_json(instance: Model) -> Any:
            value = getattr(instance, attname)
            return None if value is None else json.dumps(value, cls=encoder)

        return read_json
    return lambda instance: getattr(instance, attname)


@functools.cache
def _array_types(model: type[Model], names: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Each column's array cast and how the unnested column is selected (JSON from text)."""
    t = Table(model)
    casts, selects = [], []
    for n, name in enumerate(names, start=1):
        kind = t.field(name).get_internal_type()
        json_column = kind == "JSONField"
        casts.append("text[]" if json_column else f"{t.type(name)}[]")
        selects.append(f"v.c{n}::jsonb" if json_column else f"v.c{n}")
    return casts, selects


@functools.cache
def _insert_many_statement(
    model: type[Model],
    conflict: tuple[str, ...],
    update: tuple[str, ...],
    add: tuple[str, ...],
    returning: tuple[str, ...],
) -> tuple[str, list[Callable[[Model], Any]]]:
    t = Table(model)
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    casts, selects = _array_types(model, tuple(f.name for f in fields))
    columns = ", ".join(t[f.name] for f in fields)
    arrays = ", ".join(f"%b::{cast}" for cast in casts)
    names = ", ".join(f"c{n}" for n in range(1, len(fields) + 1))
    # Identifiers from the model; values are parameters.
    sql = (
        f"INSERT INTO {t} ({columns}) SELECT {', '.join(selects)} "  # noqa: S608
        f"FROM unnest({arrays}) AS v({names})"
    )
    if conflict:
        arbiter = ", ".join(t[name] for name in conflict)
        sets = [f"{t[n]} = EXCLUDED.{t[n]}" for n in update]
        sets += [f"{t[n]} = {t}.{t[n]} + EXCLUDED.{t[n]}" for n in add]
        action = f"DO UPDATE SET {', '.join(sets)}" if sets else "DO NOTHING"
        sql += f" ON CONFLICT ({arbiter}) {action}"
    if returning:
        sql += f" RETURNING {', '.join(t[name] for name in returning)}"
    return sql, [_column_reader(f) for f in fields]


def insert_many(
    instances: Sequence[Model],
    *,
    conflict: tuple[str, ...] = (),
    update: tuple[str, ...] = (),
    add: tuple[str, ...] = (),
    returning: tuple[str, ...] = (),
) -> list[tuple[Any, ...]]:
    """Insert unsaved instances of one model in one statement (PostgreSQL); the RETURNING
    rows. With `conflict` (the fields of a unique constraint), a row that would break it sets
    the fields `update` to the new row's and adds the new row's `add` to its own, or, with
    neither, is not inserted. The instances keep no primary key: ask `returning` for it. The
    rows must not meet one conflicting row twice (PostgreSQL refuses it)."""
    if not instances:
        return []
    sql, readers = _insert_many_statement(type(instances[0]), conflict, update, add, returning)
    params = [[read(instance) for instance in instances] for read in readers]
    with _bound_cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if returning else []


@functools.cache
def _update_many_statement(model: type[Model], fields: tuple[str, ...]) -> str:
    t = Table(model)
    pk = model._meta.pk.name
    casts, selects = _array_types(model, (pk, *fields))
    sets = ", ".join(f"{t[n]} = {select}" for n, select in zip(fields, selects[1:], strict=True))
    arrays = ", ".join(f"%b::{cast}" for cast in casts)
    names = ", ".join(f"c{n}" for n in range(1, len(fields) + 2))
    # Identifiers from the model; values are parameters.
    return (
        f"UPDATE {t} SET {sets} FROM unnest({arrays}) AS v({names}) "  # noqa: S608
        f"WHERE {t}.{t[pk]} = v.c1 RETURNING {t}.{t[pk]}"
    )


def update_many(
    model: type[Model], fields: tuple[str, ...], rows: Sequence[tuple[Any, ...]]
) -> set[Any]:
    """Set `fields` of the rows (primary key, then the fields' values, as the instances hold
    them) in one statement (PostgreSQL); the primary keys of the rows found."""
    if not rows:
        return set()
    params = [list(column) for column in zip(*rows, strict=True)]
    with _bound_cursor() as cursor:
        cursor.execute(_update_many_statement(model, fields), params)
        return {row[0] for row in cursor.fetchall()}


def values_rows(count: int, types: Sequence[str]) -> str:
    """`(%s, ...), ...`: the rows of a multi-row VALUES list. On PostgreSQL each placeholder is
    cast to its column's type (`Table.type`; `""`: none), as a NULL or a quoted literal has no
    type of its own there; SQLite needs no cast (and would turn a timestamp's text into a
    number)."""
    if connection.vendor == "postgresql":
        marks = [f"CAST(%s AS {t})" if t else "%s" for t in types]
    else:
        marks = ["%s"] * len(types)
    row = f"({', '.join(marks)})"
    return ", ".join([row] * count)


def execute(sql: str, model: type[Model], params: list[Any]) -> int:
    """Run the template of a write with `{t}` the model's table (parameters adapted as in
    fetch_one); the number of rows it changed."""
    with connection.cursor() as cursor:
        cursor.execute(_formatted(sql, model, connection.vendor), _adapted(params))
        return int(cursor.rowcount)


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
