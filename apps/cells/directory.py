"""Reads and writes of the cell directory (models.py), in the control database.

A request learns its cell from here before it touches one (apps/cells/middleware.py): the
API key's prefix names the organization, the organization's placement names the cell and
whether the organization is read-only for a move. Both answers are kept in the process for
CELL_DIRECTORY_CACHE_SECONDS, so a busy API costs the directory one read per key per process
every few seconds; a move waits that long after marking an organization read-only.

An organization or key the directory does not know is in the cell "default": organizations
made before cells were configured need no entries.
"""

import datetime as dt
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from apps.cells.models import KeyEntry, Placement
from apps.core.cells import DEFAULT_CELL, cells, current_cell


@dataclass(frozen=True)
class Route:
    """Where an organization's requests go, and since when it is read-only (None: writable)."""

    cell: str
    read_only_since: dt.datetime | None = None
    organization: uuid.UUID | None = None


DEFAULT_ROUTE = Route(DEFAULT_CELL)

_cache: dict[object, tuple[float, Route]] = {}
_cache_lock = threading.Lock()


def directory_cache_clear() -> None:
    with _cache_lock:
        _cache.clear()


def _cached(key: object, load: Callable[[], Route]) -> Route:
    ttl = settings.CELL_DIRECTORY_CACHE_SECONDS
    now = time.monotonic()
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None and now - hit[0] < ttl:
        return hit[1]
    route = load()
    if ttl > 0:
        with _cache_lock:
            if len(_cache) > 10_000:
                _cache.clear()
            _cache[key] = (now, route)
    return route


def _placement_route(organization: uuid.UUID) -> Route:
    placement = Placement.objects.filter(organization=organization).first()
    if placement is None:
        return Route(DEFAULT_CELL, organization=organization)
    return Route(placement.cell, placement.read_only_since, organization)


def organization_route(organization: uuid.UUID) -> Route:
    """The cell of the organization with this public id."""
    return _cached(("org", organization), lambda: _placement_route(organization))


def key_route(prefix: str) -> Route:
    """The cell of the organization of the API key with this prefix ("default" when the
    directory does not know the key)."""

    def load() -> Route:
        # One statement: the key's organization with its placement (a subquery each).
        placed = Placement.objects.filter(organization=OuterRef("organization"))
        found = (
            KeyEntry.objects.filter(prefix=prefix)
            .annotate(
                cell=Subquery(placed.values("cell")[:1]),
                read_only_since=Subquery(placed.values("read_only_since")[:1]),
            )
            .values_list("organization", "cell", "read_only_since")
            .first()
        )
        if found is None:
            return DEFAULT_ROUTE
        organization, cell, read_only_since = found
        return Route(cell or DEFAULT_CELL, read_only_since, organization)

    return _cached(("key", prefix), load)


def organization_placed(organization: uuid.UUID, cell: str | None = None) -> None:
    """Record that a new organization lives in `cell` (the current one by default)."""
    Placement.objects.update_or_create(
        organization=organization, defaults={"cell": cell or current_cell()}
    )


def key_indexed(prefix: str, organization: uuid.UUID) -> None:
    """Record a new key. Written before the key's own row commits: an entry whose key never
    came to be opens nothing (authentication still checks the key in the cell)."""
    KeyEntry.objects.update_or_create(prefix=prefix, defaults={"organization": organization})


def key_unindexed(prefix: str) -> None:
    """Forget a deleted key once its deletion commits."""
    transaction.on_commit(lambda: KeyEntry.objects.filter(prefix=prefix).delete())


def organization_cell(organization: uuid.UUID) -> str:
    """The organization's cell, read now (a move's steps must not trust the cache)."""
    return _placement_route(organization).cell


def read_only_set(organization: uuid.UUID, cell: str, *, on: bool) -> None:
    """Mark (or clear) the organization read-only in its cell: API writes answer 503."""
    Placement.objects.update_or_create(
        organization=organization,
        defaults={"cell": cell, "read_only_since": timezone.now() if on else None},
    )


def placement_switch(organization: uuid.UUID, cell: str) -> None:
    """Send the organization's requests to `cell` from now on (still read-only)."""
    if cell not in cells():
        raise ValueError(f"unknown cell {cell!r}")
    Placement.objects.filter(organization=organization).update(cell=cell, moved_at=timezone.now())
