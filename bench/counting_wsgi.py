"""gamify's WSGI application, counting the SQL statements each gunicorn worker sends (the
server of `bench/run.py --scale`: statements per event beside the CPU per event).

Every statement that goes through Django's cursors (each request's, authentication's
included; savepoints too; not the `BEGIN`/`COMMIT` that psycopg sends itself nor Django's
connection health check) adds one to the worker's counter: 8 bytes in a file of its own,
`bench/results/statements-<gunicorn master pid>/<worker pid>`, memory-mapped, so that
the benchmark reads every worker's count without a request (bench/statement_count.py). Cost:
a lock and an 8-byte write per statement, about a microsecond.
"""

from __future__ import annotations

import mmap
import os
import threading
from typing import Any

from django.db.backends.signals import connection_created
from statement_count import COUNTER, counter_dir

from gamify.wsgi import application

__all__ = ["application"]

_lock = threading.Lock()
_state: dict[str, Any] = {"pid": None, "map": None, "count": 0}


def _counter() -> mmap.mmap:
    pid = os.getpid()
    if _state["pid"] != pid:  # first statement of this process (or after a fork)
        folder = counter_dir(os.getppid())
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / str(pid)
        path.write_bytes(COUNTER.pack(0))
        with path.open("r+b") as file:
            _state["map"] = mmap.mmap(file.fileno(), COUNTER.size)
        _state["pid"], _state["count"] = pid, 0
    return _state["map"]


def _count(execute: Any, sql: Any, params: Any, many: bool, context: Any) -> Any:
    with _lock:
        counter = _counter()
        _state["count"] += 1
        counter[: COUNTER.size] = COUNTER.pack(_state["count"])
    return execute(sql, params, many, context)


def _install(sender: Any, connection: Any, **kwargs: Any) -> None:
    # First in the list: a block of the application's own `execute_wrapper()` pops the last.
    if _count not in connection.execute_wrappers:
        connection.execute_wrappers.insert(0, _count)


connection_created.connect(_install)
