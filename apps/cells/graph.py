"""Which tables hold an organization's rows, read from the model graph (not listed by hand):
a model belongs to organizations when a chain of foreign keys leads from it to
`accounts.Organization` (a metric: tenant → environment → organization; a leaderboard's entry:
run → board → tenant → ...). Its rows of one organization are those the chain's lookup selects.

Every model is one of three kinds, which tests/cells/test_graph.py holds complete: the
control database's (apps/cells/routers.py), an organization's (moved with it), or the cell's
own (`CELL_OWN`, each with why it is nobody's).
"""

import functools
from collections import deque
from dataclasses import dataclass

from django.apps import apps
from django.db.models import ForeignKey, Model, Q

from apps.cells.routers import is_control_model

ROOT = ("accounts", "Organization")

# Tables of a cell that no organization owns, and why they stay when an organization moves.
CELL_OWN: dict[str, str] = {
    "core.PeriodicJobRun": "the cell's own schedule of periodic jobs",
    "core.OutboxTask": (
        "work the cell's writes handed on, named by ids in its arguments; a move lets the source"
        " cell run what is pending (it finds the rows gone once they are deleted)"
    ),
}


@dataclass(frozen=True)
class OrgTable:
    """A model of organizations' rows and the lookup from it to the organization's pk."""

    model: type[Model]
    lookup: str  # "" for the organization itself

    def of(self, organization_pk: int) -> Q:
        return Q(pk=organization_pk) if not self.lookup else Q(**{self.lookup: organization_pk})

    @property
    def label(self) -> str:
        return self.model._meta.label


def _edges(model: type[Model]) -> list[ForeignKey]:
    return [
        field
        for field in model._meta.concrete_fields
        if isinstance(field, ForeignKey) and not is_control_model(field.related_model)
    ]


def _lookup(model: type[Model], root: type[Model]) -> str | None:
    """The shortest chain of foreign keys from `model` to `root`, preferring chains of
    required keys (a nullable key may leave a row with no owner on that chain)."""
    for allow_null in (False, True):
        seen = {model}
        queue: deque[tuple[type[Model], str]] = deque([(model, "")])
        while queue:
            current, path = queue.popleft()
            if current is root:
                return path
            for field in _edges(current):
                if field.null and not allow_null:
                    continue
                target = field.related_model
                if target in seen or field.remote_field.parent_link:
                    continue
                seen.add(target)
                step = field.name if not path else f"{path}__{field.name}"
                queue.append((target, step))
    return None


@functools.cache
def organization_tables() -> tuple[OrgTable, ...]:
    """Every model holding organizations' rows, the organization first, then in an order where
    each model's required parents come before it."""
    root = apps.get_model(*ROOT)
    found: dict[type[Model], str] = {}
    for model in apps.get_models(include_auto_created=True):
        if model._meta.proxy or not model._meta.managed or is_control_model(model):
            continue
        lookup = "" if model is root else _lookup(model, root)
        if lookup is not None:
            found[model] = lookup
    ordered: list[type[Model]] = []

    def visit(model: type[Model], stack: frozenset[type[Model]]) -> None:
        if model in ordered or model in stack:
            return
        for field in _edges(model):
            # Required parents first; a nullable key may point either way (Environment's
            # default tenant), and the copy's one transaction checks keys at its commit.
            if field.null:
                continue
            if field.related_model in found and field.related_model is not model:
                visit(field.related_model, stack | {model})
        ordered.append(model)

    for model in sorted(found, key=lambda m: m._meta.label):
        visit(model, frozenset())
    return tuple(OrgTable(model, found[model]) for model in ordered)


def cell_own_models() -> list[type[Model]]:
    return [apps.get_model(label) for label in CELL_OWN]
