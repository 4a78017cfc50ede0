"""The cell directory, in the control database (apps/cells/routers.py): which cell each
organization's data lives in, and which organization each API key opens, so that a request
finds its cell before it touches one. Organizations and keys live in their cell, so these rows
name them by their public id and prefix, never by a foreign key."""

from django.db import models


class Placement(models.Model):
    """The cell of one organization. An organization without a row is in the cell "default"
    (every organization made before cells were configured)."""

    organization = models.UUIDField(unique=True)  # Organization.public_id
    cell = models.CharField(max_length=64)
    # Set while a move switches the organization to another cell: API writes answer 503.
    read_only_since = models.DateTimeField(null=True, blank=True)
    moved_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.organization} in {self.cell}"


class KeyEntry(models.Model):
    """The organization of one API key, by the key's public prefix (its secret stays in the
    cell, checked there by authentication)."""

    prefix = models.CharField(max_length=32, unique=True)
    organization = models.UUIDField(db_index=True)

    def __str__(self) -> str:
        return self.prefix
