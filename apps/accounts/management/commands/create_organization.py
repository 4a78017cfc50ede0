import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.accounts.services import organization_create
from apps.core.cells import CellSwitchError
from apps.core.errors import ApplicationError


class Command(BaseCommand):
    help = (
        "Create an organization with a production environment, its default tenant and one "
        "admin API key. The key is printed once; only its hash is stored."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--cell",
            default=None,
            help="the cell to place it in (default: settings.CELL_FOR_NEW_ORGANIZATIONS)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            created = organization_create(
                options["name"], cell=options["cell"] or settings.CELL_FOR_NEW_ORGANIZATIONS
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        except CellSwitchError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "organization": {
                            "id": str(created.organization.public_id),
                            "name": created.organization.name,
                        },
                        "environment": {
                            "id": str(created.environment.public_id),
                            "key": created.environment.key,
                            "name": created.environment.name,
                        },
                        "tenant": {"id": str(created.tenant.public_id)},
                        "apiKey": created.full_key,
                    }
                )
            )
            return
        self.stdout.write(
            f"Organization: {created.organization.name} ({created.organization.public_id})"
        )
        self.stdout.write(f"Environment:  {created.environment.key}")
        self.stdout.write(f"Admin API key (shown once, store it now): {created.full_key}")
