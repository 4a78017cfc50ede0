"""Every Celery task runs in the cell it was published from.

`before_task_publish` writes the publishing work's cell into the message's headers (`cell`);
`task_prerun` enters it in the worker and `task_postrun` leaves it. A task published outside
any cell, or by a process that predates cells, runs in "default". Eager tasks (no broker: the
test suite, small installs) run in the caller, already in its cell.
"""

from contextvars import Token
from typing import Any

from celery import signals

from apps.core.cells import DEFAULT_CELL, cell_enter, cell_leave, cells, current_cell

CELL_HEADER = "cell"
_entered: dict[str, Token[str]] = {}


def _publish(headers: dict[str, Any] | None = None, **_: Any) -> None:
    if headers is not None:
        headers[CELL_HEADER] = current_cell()


def _message_cell(task: Any) -> str:
    request = getattr(task, "request", None)
    cell = getattr(request, CELL_HEADER, None)
    if cell is None:
        cell = (getattr(request, "headers", None) or {}).get(CELL_HEADER)
    return cell if isinstance(cell, str) and cell in cells() else DEFAULT_CELL


def _prerun(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    if task is None or task_id is None or getattr(task.request, "is_eager", False):
        return
    _entered[task_id] = cell_enter(_message_cell(task))


def _postrun(task_id: str | None = None, **_: Any) -> None:
    token = _entered.pop(task_id or "", None)
    if token is not None:
        cell_leave(token)


def signals_connect() -> None:
    signals.before_task_publish.connect(_publish, weak=False, dispatch_uid="cells-publish")
    signals.task_prerun.connect(_prerun, weak=False, dispatch_uid="cells-prerun")
    signals.task_postrun.connect(_postrun, weak=False, dispatch_uid="cells-postrun")
