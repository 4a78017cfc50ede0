"""`manage.py cells`: the cells and their organizations, schema and id ranges, and moves.

    manage.py cells list
    manage.py cells migrate                 # migrate every cell, then set its id range
                                            # (not `migrate --database cell2`: data migrations
                                            # that name no database would run on "default")
    manage.py cells move <org> --to cell2 [--keep-source]
    manage.py cells writable <org>          # lift a read-only a killed move left behind

<org> is an organization's public id, or its exact name.
"""

import uuid
from typing import Any

from django.apps import apps
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from apps.cells.directory import directory_cache_clear, organization_cell, read_only_set
from apps.cells.models import Placement
from apps.cells.move import MoveError, cell_sequences_set, organization_move
from apps.core.cells import cells, using_cell


def _organization(given: str) -> uuid.UUID:
    try:
        return uuid.UUID(given)
    except ValueError:
        pass
    organization = apps.get_model("accounts", "Organization")
    found = [
        public_id
        for cell in cells()
        for public_id in organization._base_manager.using(cell)
        .filter(name=given)
        .values_list("public_id", flat=True)
        if organization_cell(public_id) == cell
    ]
    if len(found) != 1:
        raise CommandError(f"{len(found)} organizations are named {given!r}; give the public id")
    return found[0]


class Command(BaseCommand):
    help = "Tenant cells: list them, migrate them, move an organization between them."

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("list", help="every cell and how many organizations it holds")
        sub.add_parser("migrate", help="migrate every cell and set its range of ids")
        move = sub.add_parser("move", help="move an organization to another cell")
        move.add_argument("organization", help="public id or exact name")
        move.add_argument("--to", required=True, dest="target")
        move.add_argument(
            "--keep-source",
            action="store_true",
            help="keep the source cell's rows (unreachable; a later move back overwrites them)",
        )
        writable = sub.add_parser("writable", help="lift an organization's read-only")
        writable.add_argument("organization")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "list":
            organization = apps.get_model("accounts", "Organization")
            for cell in cells():
                held = organization._base_manager.using(cell).count()
                placed = Placement.objects.filter(cell=cell).count()
                self.stdout.write(f"{cell}: {held} organizations ({placed} in the directory)")
        elif action == "migrate":
            for cell in cells():
                self.stdout.write(f"migrating {cell}")
                # Inside the cell: a data migration's `Model.objects` (which names no
                # database) must read and write the cell being migrated, not "default".
                with using_cell(cell):
                    call_command("migrate", database=cell, interactive=False, verbosity=0)
                moved = cell_sequences_set(cell)
                self.stdout.write(f"{cell}: {moved} id sequences moved into its range")
        elif action == "move":
            try:
                report = organization_move(
                    _organization(options["organization"]),
                    options["target"],
                    keep_source=options["keep_source"],
                    say=self.stdout.write,
                )
            except MoveError as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(
                f"moved {report.organization} from {report.source} to {report.target}: "
                f"{sum(report.counts.values())} rows in {len(report.counts)} tables"
            )
        elif action == "writable":
            public_id = _organization(options["organization"])
            read_only_set(public_id, organization_cell(public_id), on=False)
            directory_cache_clear()
            self.stdout.write(f"{public_id} is writable")
