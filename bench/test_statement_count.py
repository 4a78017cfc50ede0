"""The statement count of `run.py --scale`'s server (bench/counting_wsgi.py): every statement
sent through Django's cursors adds one to this process's counter, and the benchmark's reader
(bench/statement_count.py) sums the counters of every process. On SQLite, no server:
`.venv/bin/pytest -n 0 bench/test_statement_count.py`."""

import os
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection
from statement_count import COUNTER, counter_dir, counter_remove, statement_total

pytestmark = pytest.mark.django_db


@pytest.fixture
def counting() -> Iterator[None]:
    import counting_wsgi

    connection.ensure_connection()
    counting_wsgi._install(None, connection)  # the signal fired before the import, if at all
    yield
    connection.execute_wrappers.remove(counting_wsgi._count)
    counter_remove(os.getppid())


def test_each_statement_through_a_cursor_counts_once(counting: None) -> None:
    before = statement_total(os.getppid()) or 0
    with connection.cursor() as cursor:
        for _ in range(3):
            cursor.execute("SELECT 1")
        cursor.execute("CREATE TEMPORARY TABLE counted (x integer)")
        cursor.executemany("INSERT INTO counted VALUES (%s)", [(1,), (2,)])  # one call, one
    assert statement_total(os.getppid()) == before + 5


def test_the_reader_sums_every_process_and_skips_what_it_cannot_read(tmp_path: Path) -> None:
    pid = 2_000_000_000 + os.getpid()  # no such master: a folder of our own
    folder = counter_dir(pid)
    assert statement_total(pid) is None
    folder.mkdir(parents=True)
    try:
        (folder / "101").write_bytes(COUNTER.pack(7))
        (folder / "102").write_bytes(COUNTER.pack(35))
        (folder / "103").write_bytes(b"\x01")  # torn: ignored
        assert statement_total(pid) == 42
        assert struct.calcsize("<Q") == COUNTER.size
    finally:
        counter_remove(pid)
    assert not folder.exists()
