"""Which database a piece of work runs against (issue 32, docs/scaling.md).

An organization's data lives in one cell: a PostgreSQL primary (a database alias), with its
streaming replicas. `current_cell()` names the cell the running request, job or task works in;
"default" (the control database, which is also the first cell) unless a cell was entered.
`replicas_of(cell)` names the replica aliases of a cell (settings.DATABASE_REPLICAS), which the
replica router reads from when a read may lag (apps/core/replicas.py).
"""

from contextvars import ContextVar

from django.conf import settings

DEFAULT_CELL = "default"

_cell: ContextVar[str] = ContextVar("gamify_cell", default=DEFAULT_CELL)


def current_cell() -> str:
    """The database alias of the primary of the cell the running work is in."""
    return _cell.get()


def replicas_of(cell: str) -> list[str]:
    """The aliases of the cell's streaming replicas, in the order they were configured."""
    return list(getattr(settings, "DATABASE_REPLICAS", {}).get(cell, ()))
