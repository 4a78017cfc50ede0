"""Moving an organization to another cell (`manage.py cells move <org> --to <cell>`).

1. **Copy** while the organization stays writable: every row of every table of
   `organization_tables()` (apps/cells/graph.py) goes to the target, primary keys kept, read
   from the source in one snapshot (REPEATABLE READ on PostgreSQL, so that a child never
   arrives without its parent) and written in one transaction of the target (the foreign keys
   are checked at its commit). The staff users its rows name are copied from the control
   database, with an unusable password (staff log in against the control database only).
2. **Read-only**: the directory marks the organization; API writes answer 503 with
   Retry-After (apps/cells/middleware.py). The move waits for every process's directory cache
   (CELL_DIRECTORY_CACHE_SECONDS) and for the requests already past the check
   (CELL_MOVE_GRACE_SECONDS).
3. **Catch up**: the same comparison again, row by row: rows new or changed since the copy are
   upserted, rows gone are deleted, until a pass finds nothing to do (at most CATCH_UP_PASSES).
4. **Verify**: the row count of every table is the same on both sides.
5. **Switch** the directory to the target; once every process's cache has followed (the same
   wait), lift read-only.
6. **Delete** the source's rows (or keep them with `--keep-source`: the directory no longer
   sends anyone there; a later move back overwrites them).

Nothing is half done: a failure before the switch deletes what the target received, lifts
read-only and leaves the organization in its source, whole and writable. Primary keys stay
unique across cells because each cell allocates ids from a range of its own
(`cell_sequences_set`), so a moved row never collides with one the target made.
"""

import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import connections, transaction
from django.db.models import ForeignKey, Model

from apps.cells.directory import (
    directory_cache_clear,
    organization_cell,
    placement_switch,
    read_only_set,
)
from apps.cells.graph import ROOT, OrgTable, organization_tables
from apps.cells.routers import CONTROL, is_control_model
from apps.core.cells import DEFAULT_CELL, cells, current_cell

logger = logging.getLogger("gamify.cells")

CATCH_UP_PASSES = 5
# Each cell allocates primary keys from [index * ID_RANGE, (index + 1) * ID_RANGE), its index
# being its place in `cells()`: "default" 0, then CELL_DATABASE_URLS in order (append new
# cells at the end; never reorder them).
ID_RANGE = 10**15


class MoveError(Exception):
    pass


@dataclass
class MoveReport:
    organization: uuid.UUID
    source: str
    target: str
    copied: int = 0
    caught_up: list[int] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    deleted: int = 0


def _columns(model: type[Model]) -> list[Any]:
    return list(model._meta.concrete_fields)


def _rows(alias: str, table: OrgTable, organization_pk: int) -> dict[Any, tuple[Any, ...]]:
    names = [f.attname for f in _columns(table.model)]
    rows = (
        table.model._base_manager.using(alias)
        .filter(table.of(organization_pk))
        .values_list(*names)
        .order_by()
    )
    pk_at = names.index(table.model._meta.pk.attname)
    return {row[pk_at]: tuple(row) for row in rows}


def _write(alias: str, model: type[Model], rows: list[tuple[Any, ...]], *, update: bool) -> None:
    """INSERT (with `update`: ... ON CONFLICT (pk) DO UPDATE) the rows as they are, bypassing
    the fields' pre_save (auto_now would change what is copied)."""
    if not rows:
        return
    connection = connections[alias]
    quote = connection.ops.quote_name
    fields = _columns(model)
    pk = model._meta.pk
    assert pk is not None  # noqa: S101 - every concrete model has one
    others = [f for f in fields if f is not pk]
    columns = ", ".join(quote(f.column) for f in fields)
    placeholders = ", ".join(["%s"] * len(fields))
    action = (
        "DO UPDATE SET "
        + ", ".join(f"{quote(f.column)} = EXCLUDED.{quote(f.column)}" for f in others)
        if others
        else "DO NOTHING"
    )
    sql = (
        f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({placeholders})"  # noqa: S608 - names from the model
        + (f" ON CONFLICT ({quote(str(pk.column))}) {action}" if update else "")
    )
    with connection.cursor() as cursor:
        for chunk_start in range(0, len(rows), 500):
            cursor.executemany(
                sql,
                [
                    [
                        f.get_db_prep_save(value, connection)
                        for f, value in zip(fields, row, strict=True)
                    ]
                    for row in rows[chunk_start : chunk_start + 500]
                ],
            )


def _delete_pks(alias: str, model: type[Model], pks: list[Any]) -> None:
    for start in range(0, len(pks), 1000):
        model._base_manager.using(alias).filter(pk__in=pks[start : start + 1000])._raw_delete(alias)


@contextmanager
def _snapshot(alias: str) -> Iterator[None]:
    """One consistent view of the source for a whole pass."""
    with transaction.atomic(using=alias):
        if connections[alias].vendor == "postgresql":
            with connections[alias].cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def _control_references(
    table: OrgTable, rows: dict[Any, tuple[Any, ...]]
) -> dict[type[Model], set[Any]]:
    """The control database's rows (staff users) that these rows name by foreign key."""
    found: dict[type[Model], set[Any]] = {}
    fields = _columns(table.model)
    for at, f in enumerate(fields):
        if isinstance(f, ForeignKey) and is_control_model(f.related_model):
            ids = {row[at] for row in rows.values() if row[at] is not None}
            if ids:
                found.setdefault(f.related_model, set()).update(ids)
    return found


def control_rows_copy(target: str, references: dict[type[Model], set[Any]]) -> None:
    if target == DEFAULT_CELL:
        return  # the default cell's database is the control database: the rows are there
    for model, ids in references.items():
        names = [f.attname for f in _columns(model)]
        rows = list(model._base_manager.using(CONTROL).filter(pk__in=list(ids)).values_list(*names))
        if "password" in names:  # staff authenticate against the control database only
            at = names.index("password")
            unusable = make_password(None)
            rows = [(*row[:at], unusable, *row[at + 1 :]) for row in rows]
        _write(target, model, [tuple(row) for row in rows], update=True)


def staff_mirrored(user_pks: list[Any]) -> None:
    """Copy these staff users' rows into the current cell (not "default", which holds them),
    for the cell's rows that name them: an organization's staff, the change history."""
    cell = current_cell()
    if cell != DEFAULT_CELL and user_pks:
        control_rows_copy(cell, {get_user_model(): set(user_pks)})


def _sync(source: str, target: str, organization_pk: int) -> int:
    """Make the target's rows of the organization equal to the source's; returns how many rows
    it wrote or deleted. Table by table, so that one table's rows at most are in memory; the
    target's foreign keys are checked once, at the commit of its one transaction."""
    changed = 0
    with _snapshot(source), transaction.atomic(using=target):
        references: dict[type[Model], set[Any]] = {}
        for table in organization_tables():
            wanted = _rows(source, table, organization_pk)
            present = _rows(target, table, organization_pk)
            for model, ids in _control_references(table, wanted).items():
                references.setdefault(model, set()).update(ids)
            # Deletions first, so that a unique key a deleted row held is free for the row
            # that now holds it.
            gone = [pk for pk in present if pk not in wanted]
            _delete_pks(target, table.model, gone)
            # A new row is inserted, never upserted: a row of the target with its id (which
            # disjoint id ranges rule out) is another organization's, and the move must fail
            # rather than overwrite it.
            new = [row for pk, row in wanted.items() if pk not in present]
            _write(target, table.model, new, update=False)
            edited = [row for pk, row in wanted.items() if pk in present and present[pk] != row]
            _write(target, table.model, edited, update=True)
            changed += len(gone) + len(new) + len(edited)
        control_rows_copy(target, references)
    return changed


def organization_rows_delete(alias: str, organization_pk: int) -> int:
    """Delete every row of the organization in one cell, in one transaction."""
    deleted = 0
    with transaction.atomic(using=alias):
        for table in reversed(organization_tables()):
            pks = list(
                table.model._base_manager.using(alias)
                .filter(table.of(organization_pk))
                .values_list("pk", flat=True)
            )
            _delete_pks(alias, table.model, pks)
            deleted += len(pks)
    return deleted


def organization_counts(alias: str, organization_pk: int) -> dict[str, int]:
    return {
        table.label: table.model._base_manager.using(alias)
        .filter(table.of(organization_pk))
        .count()
        for table in organization_tables()
    }


def _organization_pk(alias: str, organization: uuid.UUID) -> int:
    from django.apps import apps

    model = apps.get_model(*ROOT)
    pk = (
        model._base_manager.using(alias)
        .filter(public_id=organization)
        .values_list("pk", flat=True)
        .first()
    )
    if pk is None:
        raise MoveError(f"organization {organization} is not in cell {alias!r}")
    return int(pk)


def _settle() -> None:
    directory_cache_clear()
    time.sleep(settings.CELL_DIRECTORY_CACHE_SECONDS + settings.CELL_MOVE_GRACE_SECONDS)


def organization_move(
    organization: uuid.UUID,
    target: str,
    *,
    keep_source: bool = False,
    say: Callable[[str], object] = logger.info,
) -> MoveReport:
    """Move the organization with this public id to the cell `target` (module docstring)."""
    if target not in cells():
        raise MoveError(f"unknown cell {target!r}")
    source = organization_cell(organization)
    if source == target:
        raise MoveError(f"organization {organization} is already in cell {target!r}")
    organization_pk = _organization_pk(source, organization)
    sequences_check(target)
    report = MoveReport(organization, source, target)
    switched = False
    try:
        say(f"copying from {source} to {target}")
        report.copied = _sync(source, target, organization_pk)
        say(f"copied {report.copied} rows; read-only from now")
        read_only_set(organization, source, on=True)
        _settle()
        for _ in range(CATCH_UP_PASSES):
            changes = _sync(source, target, organization_pk)
            report.caught_up.append(changes)
            if changes == 0:
                break
        else:
            raise MoveError("the source kept changing while read-only; nothing was switched")
        say(f"caught up ({report.caught_up}); verifying")
        report.counts = organization_counts(source, organization_pk)
        theirs = organization_counts(target, organization_pk)
        if report.counts != theirs:
            wrong = sorted(k for k in report.counts if report.counts[k] != theirs.get(k))
            raise MoveError(f"counts differ after the copy: {', '.join(wrong)}")
        placement_switch(organization, target)
        switched = True
    finally:
        if not switched:
            say(f"move failed: the organization stays in {source}, writable")
            organization_rows_delete(target, organization_pk)
            read_only_set(organization, source, on=False)
            directory_cache_clear()
    # Every process learns the new cell before the old one is emptied: until then a process
    # that still believes the source reads it there, complete and unchanged (writes answer 503).
    say(f"switched to {target}; waiting for every process to follow")
    _settle()
    read_only_set(organization, target, on=False)
    directory_cache_clear()
    say(f"{target} is writable")
    if not keep_source:
        report.deleted = organization_rows_delete(source, organization_pk)
        say(f"deleted {report.deleted} rows from {source}")
    return report


# Primary-key ranges ---------------------------------------------------------------------------


def cell_id_base(cell: str) -> int:
    return cells().index(cell) * ID_RANGE


def _sequenced_tables(alias: str) -> list[tuple[str, str]]:
    """(table, pk column) of every table whose ids the database allocates."""
    from django.apps import apps
    from django.db.models import AutoField, BigAutoField

    found = []
    for model in apps.get_models(include_auto_created=True):
        pk = model._meta.pk
        if isinstance(pk, BigAutoField) and not is_control_model(model) and model._meta.managed:
            found.append((model._meta.db_table, str(pk.column)))
        elif isinstance(pk, AutoField) and not isinstance(pk, BigAutoField):
            continue  # 32-bit ids: only control tables have them, and they stay in one place
    return found


def cell_sequences_set(cell: str) -> int:
    """Move the cell's id sequences to the start of its range (never back): ids a cell makes
    are then unique across all cells, and a moved row keeps its id. Returns how many moved."""
    base = cell_id_base(cell)
    moved = 0
    with transaction.atomic(using=cell):
        for table, column in _sequenced_tables(cell):
            floor = _next_id_floor(cell, table, column)
            if floor is not None and floor < base:
                _next_id_set(cell, table, column, base)
                moved += 1
    return moved


def _next_id_set(alias: str, table: str, column: str, last: int) -> None:
    """Make the table's next id `last + 1`."""
    connection = connections[alias]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence(%s, %s), %s, true)", [table, column, last]
            )
            return
        cursor.execute("DELETE FROM sqlite_sequence WHERE name = %s", [table])
        cursor.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [table, last])


def _next_id_floor(alias: str, table: str, column: str) -> int | None:
    """The last id the table's sequence handed out (None: the table has none)."""
    connection = connections[alias]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [table, column])
            sequence = cursor.fetchone()[0]
            if sequence is None:
                return None
            cursor.execute(f"SELECT last_value FROM {sequence}")  # noqa: S608 - from the catalogue
            return int(cursor.fetchone()[0])
        cursor.execute("SELECT seq FROM sqlite_sequence WHERE name = %s", [table])
        row = cursor.fetchone()
        return int(row[0]) if row is not None else 0


def sequences_check(cell: str) -> None:
    """Refuse a move into a cell whose ids are not yet in its range."""
    base = cell_id_base(cell)
    if base == 0:
        return
    table, column = _sequenced_tables(cell)[0]
    floor = _next_id_floor(cell, table, column)
    if floor is not None and floor < base:
        raise MoveError(
            f"cell {cell!r} allocates ids below its range: run `manage.py cells migrate`"
        )
