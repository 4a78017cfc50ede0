"""Which database a piece of work runs against (issue 32, docs/scaling.md).

An organization's data lives in one cell: a PostgreSQL primary (a database alias), with its
streaming replicas. `current_cell()` names the cell the running request, job or task works in;
"default" (the control database, which is also the first cell) unless a cell was entered.
`replicas_of(cell)` names the replica aliases of a cell (settings.DATABASE_REPLICAS), which the
replica router reads from when a read may lag (apps/core/replicas.py).
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.utils import ConnectionHandler

DEFAULT_CELL = "default"

_cell: ContextVar[str] = ContextVar("gamify_cell", default=DEFAULT_CELL)


def current_cell() -> str:
    """The database alias of the primary of the cell the running work is in."""
    return _cell.get()


def replicas_of(cell: str) -> list[str]:
    """The aliases of the cell's streaming replicas, in the order they were configured."""
    return list(getattr(settings, "DATABASE_REPLICAS", {}).get(cell, ()))


# Entering a cell (tenant cells, docs/architecture.md §8). The code opens transactions with
# `transaction.atomic()` and runs raw SQL through `django.db.connection`, both meaning the alias
# "default", in many places; routing by alias alone would split a request's writes between
# connections and lose their atomicity. So inside a cell the alias "default" *is* the cell's
# primary: `connections["default"]` answers the cell's connection object, read from the
# ContextVar on every lookup, which follows the work into `sync_to_async` threads and copied
# contexts. The ORM (a router that says nothing means "default"), `connection`, `atomic()` and
# `on_commit` then reach the cell without a change to their callers.


def cells() -> list[str]:
    """Every cell's alias: "default" first, then those of CELL_DATABASE_URLS in their order."""
    return [DEFAULT_CELL, *getattr(settings, "CELL_DATABASES", ())]


def cells_configured() -> bool:
    """Whether there is more than one cell (with one there is nothing to route)."""
    return bool(getattr(settings, "CELL_DATABASES", ()))


def cell_alias(cell: str) -> str:
    """The alias that reaches the cell's primary from any cell: "default" means the current
    cell, so the default cell is reached as "control" (the same database)."""
    return "control" if cell == DEFAULT_CELL else cell


class CellSwitchError(RuntimeError):
    """Entering another cell inside an open transaction: its atomic block would end on another
    connection than the one it began on."""


def _in_own_transaction(alias: str) -> bool:
    """Whether the alias's connection (as the running work sees it) is inside an atomic block
    of its own; the blocks a test case opens around each test (`_from_testcase`) do not count."""
    connection = connections[alias]
    return any(not getattr(block, "_from_testcase", False) for block in connection.atomic_blocks)


@contextmanager
def using_cell(cell: str) -> Iterator[str]:
    """Run the block in `cell`: every "default" database access goes to its primary. Refused
    (CellSwitchError) inside a transaction of another cell, and for an unknown cell."""
    if cell not in cells():
        raise CellSwitchError(f"unknown cell {cell!r}")
    if cell == _cell.get():
        yield cell
        return
    if _in_own_transaction(DEFAULT_DB_ALIAS):
        raise CellSwitchError(f"cannot enter cell {cell!r} inside a transaction")
    token = _cell.set(cell)
    try:
        yield cell
    finally:
        _cell.reset(token)


def cell_enter(cell: str) -> Token[str]:
    """Enter `cell` for work that starts here (a Celery task in a worker: task_prerun); leave
    with `cell_leave(token)`. Work inside a block uses `using_cell`."""
    return _cell.set(cell if cell in cells() else DEFAULT_CELL)


def cell_leave(token: Token[str]) -> None:
    _cell.reset(token)


class CellConnectionHandler(ConnectionHandler):
    """`connections` with "default" meaning the current cell's primary."""

    def __getitem__(self, alias: str) -> Any:
        if alias == DEFAULT_DB_ALIAS:
            cell = _cell.get()
            if cell != DEFAULT_CELL:
                alias = cell
        return super().__getitem__(alias)


def cell_connections_install() -> None:
    """Make Django's one `connections` object cell-aware (AppConfig.ready): its class changes,
    its state (settings, open connections) stays."""
    if not isinstance(connections, CellConnectionHandler):
        connections.__class__ = CellConnectionHandler


def cell_queue(queue: str | None) -> str | None:
    """The Celery queue a task published in the current cell goes to: with
    CELERY_QUEUES_PER_CELL, `<queue>.<cell>` outside the default cell, so that each cell's
    workers consume their own (`celery worker -Q celery.cell2,webhooks.cell2,...`)."""
    cell = _cell.get()
    if cell == DEFAULT_CELL or not getattr(settings, "CELERY_QUEUES_PER_CELL", False):
        return queue
    return f"{queue or settings.CELERY_TASK_DEFAULT_QUEUE}.{cell}"
