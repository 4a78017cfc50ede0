"""The control router: the global tables always live in the control database.

Inside a cell other than "default" the alias "default" is that cell's primary
(apps/core/cells.py), so a model that no cell holds must name the control database itself:
staff users, their groups and permissions, sessions, the dashboard's log, django-axes' records,
content types and the cell directory. Everything else is the cell's: the router says nothing
(None), so the replica router after it, or "default", decides. Every database has the whole
schema (`manage.py cells migrate`); the global tables of a cell stay empty, except the staff
users a move copies there for the foreign keys of the rows it moves (apps/cells/move.py).
"""

from typing import Any

from django.db.models import Model

from apps.core.cells import DEFAULT_CELL, current_cell

CONTROL = "control"
CONTROL_APPS = frozenset({"auth", "sessions", "admin", "axes", "contenttypes", "cells"})


def is_control_model(model: type[Model]) -> bool:
    return model._meta.app_label in CONTROL_APPS


class ControlRouter:
    def _route(self, model: type[Model], hints: dict[str, Any]) -> str | None:
        if current_cell() == DEFAULT_CELL or not is_control_model(model):
            return None  # the cell's (outside any cell, "default" is the control database)
        instance = hints.get("instance")
        if instance is not None and not is_control_model(type(instance)):
            # Reached from a cell's row (an organization's staff): read beside it, where the
            # join table is, from the cell's copy of the staff rows (apps/cells/move.py).
            return None
        return CONTROL

    def db_for_read(self, model: type[Model], **hints: Any) -> str | None:
        return self._route(model, hints)

    def db_for_write(self, model: type[Model], **hints: Any) -> str | None:
        return self._route(model, hints)

    def allow_relation(self, obj1: Model, obj2: Model, **hints: Any) -> bool | None:
        # A cell's row may name a staff user (Organization.staff, ConfigChange.staff).
        return True

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool | None:
        # Every cell has the whole schema; "control" is the default cell's database again.
        return db != CONTROL
