"""Tenant cells need a second real database: the alias "cell2" of CELL_DATABASE_URLS, which
Django gives a test database of its own (test_<name> on PostgreSQL, in memory on SQLite).
Without it these tests skip:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/gamify \\
    CELL_DATABASE_URLS=cell2=postgres://postgres@127.0.0.1:5432/gamify_cell2 \\
    .venv/bin/pytest tests/cells
    # or on SQLite (the move under load skips there):
    CELL_DATABASE_URLS=cell2=sqlite:////tmp/cell2.sqlite3 .venv/bin/pytest tests/cells

They run with real transactions (each request, task and move commits), on every database."""

from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings

from apps.cells.directory import directory_cache_clear
from apps.cells.move import cell_sequences_set

CELL = "cell2"
DATABASES = ["default", CELL, "control"]

needs_cell2 = [
    pytest.mark.cells,
    pytest.mark.skipif(
        CELL not in settings.DATABASES, reason="needs CELL_DATABASE_URLS=cell2=<database url>"
    ),
    pytest.mark.django_db(transaction=True, databases=DATABASES),
]


@pytest.fixture(autouse=True)
def _cells_fresh(settings: Any) -> Iterator[None]:
    settings.CELL_DIRECTORY_CACHE_SECONDS = 0
    settings.CELL_MOVE_GRACE_SECONDS = 0.2
    directory_cache_clear()
    yield
    directory_cache_clear()


@pytest.fixture
def cell2_ids(django_db_blocker: Any) -> None:
    """cell2 allocates ids from its own range (apps/cells/move.py)."""
    with django_db_blocker.unblock():
        cell_sequences_set(CELL)
