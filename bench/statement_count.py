"""Where the scale bench's server (bench/counting_wsgi.py) keeps each gunicorn worker's count
of SQL statements, and their sum: read by bench/run.py without a request and without Django."""

from __future__ import annotations

import struct
from pathlib import Path

COUNTER = struct.Struct("<Q")


def counter_dir(master_pid: int) -> Path:
    return Path(__file__).resolve().parent / "results" / f"statements-{master_pid}"


def statement_total(master_pid: int) -> int | None:
    """Statements counted so far by every worker of this gunicorn (None: no counter)."""
    folder = counter_dir(master_pid)
    if not folder.is_dir():
        return None
    total = 0
    for path in folder.iterdir():
        try:
            total += COUNTER.unpack(path.read_bytes()[: COUNTER.size])[0]
        except (OSError, struct.error):
            continue
    return total


def counter_remove(master_pid: int) -> None:
    folder = counter_dir(master_pid)
    if folder.is_dir():
        for path in folder.iterdir():
            path.unlink(missing_ok=True)
        folder.rmdir()
