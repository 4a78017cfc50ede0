"""What deleting objects takes with it: every kind of row that points at them, counted without
loading them (imported through base.py): the base of the dashboard's delete confirmations and
of "used by" lists."""

import dataclasses
from typing import Any

from django.db import models
from django.db.models import ForeignObjectRel


@dataclasses.dataclass(frozen=True)
class Dependent:
    """Rows of one kind that point at the objects being deleted."""

    label: str
    count: int
    effect: str  # "deleted with it", "kept, link removed", "blocks the delete"
    # Configuration rows (with a name or key) are named, so staff see which ones go.
    named: list[Any]


_EFFECTS = {
    models.CASCADE: "deleted with it",
    models.SET_NULL: "kept, link removed",
    models.SET_DEFAULT: "kept, link reset",
    models.PROTECT: "blocks the delete",
    models.RESTRICT: "blocks the delete",
}
# Configuration rows are few; beyond this many the page shows the count only.
NAMED_LIMIT = 20


def dependents(objs: list[models.Model]) -> list[Dependent]:
    """Every kind of row that points at `objs` (foreign keys, including those without a
    reverse accessor), counted without loading them: the base of delete confirmations and of
    "used by" lists."""
    if not objs:
        return []
    found = []
    for relation in objs[0]._meta.get_fields(include_hidden=True):
        if not isinstance(relation, ForeignObjectRel) or relation.many_to_many:
            continue
        model: Any = relation.related_model
        rows = model._base_manager.filter(**{f"{relation.field.name}__in": objs})
        count = rows.count()
        if not count:
            continue
        names = {field.name for field in model._meta.get_fields()}
        named = []
        if names & {"name", "key"} and count <= NAMED_LIMIT:
            named = list(rows)
        found.append(
            Dependent(
                label=str(model._meta.verbose_name_plural),
                count=count,
                effect=_EFFECTS.get(relation.on_delete, "changed"),  # type: ignore[arg-type]
                named=named,
            )
        )
    return found
