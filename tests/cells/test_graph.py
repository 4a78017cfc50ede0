"""The tables a move copies come from the model graph, and no model is left unclassified: a
new model either reaches Organization by foreign keys (moved with it), is global (the control
database), or is named in CELL_OWN with why it is nobody's."""

from django.apps import apps

from apps.cells.graph import CELL_OWN, organization_tables
from apps.cells.routers import is_control_model


def test_every_model_is_an_organizations_the_control_databases_or_the_cells_own():
    moved = {table.model for table in organization_tables()}
    for model in apps.get_models(include_auto_created=True):
        label = model._meta.label
        kinds = [model in moved, is_control_model(model), label in CELL_OWN]
        assert kinds.count(True) == 1, f"{label}: {kinds}"


def test_the_organization_comes_first_and_every_required_parent_before_its_children():
    tables = organization_tables()
    assert tables[0].label == "accounts.Organization"
    order = {table.model: at for at, table in enumerate(tables)}
    for table in tables:
        for field in table.model._meta.concrete_fields:
            parent = getattr(field, "related_model", None)
            if (
                field.is_relation
                and not field.null
                and parent in order
                and parent is not table.model
            ):
                assert order[parent] < order[table.model], (table.label, field.name)


def test_the_tables_of_events_users_and_boards_are_moved_by_their_tenant():
    lookups = {table.label: table.lookup for table in organization_tables()}
    assert lookups["metrics.MetricEvent"] == "tenant__environment__organization"
    assert lookups["leaderboards.LeaderboardEntry"].endswith("tenant__environment__organization")
    assert lookups["accounts.Organization_staff"] == "organization"
