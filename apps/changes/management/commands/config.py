import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from apps.accounts import history
from apps.accounts.models import Tenant
from apps.changes import files, services
from apps.changes.schema import document_schema
from apps.core.api.params import is_uuid
from apps.core.errors import ApplicationError


class Command(BaseCommand):
    help = (
        'A tenant\'s configuration as a file (README "Configuration as code"): `export` writes '
        "it, `apply` makes the tenant's configuration what a file says (--dry-run: print the "
        "plan only), `schema` writes the file's JSON Schema."
    )

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        export = sub.add_parser("export", help="write the tenant's configuration")
        export.add_argument("--tenant", required=True, help="the tenant's id")
        export.add_argument("--format", choices=("yaml", "json"), default="yaml")
        apply = sub.add_parser("apply", help="apply a configuration file ('-': standard input)")
        apply.add_argument("file")
        apply.add_argument("--tenant", required=True, help="the tenant's id")
        apply.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
        sub.add_parser("schema", help="write the configuration file's JSON Schema")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "schema":
            self.stdout.write(files.dumps(document_schema(), "json"), ending="")
            return
        tenant = _tenant(options["tenant"])
        try:
            if action == "export":
                doc = services.config_document(tenant)
                self.stdout.write(files.dumps(doc, options["format"]), ending="")
                return
            doc = files.loads(_read(options["file"]))
            with history.acting(history.Actor("command", "manage.py config apply", "file")):
                applied = services.config_apply(tenant, doc, dry_run=options["dry_run"])
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(files.plan_text(applied.steps), ending="")
        if options["dry_run"]:
            self.stdout.write("Dry run: nothing was written.")
        elif applied.steps:
            self.stdout.write(f"Applied: {len(applied.changes)} objects changed.")


def _tenant(public_id: str) -> Tenant:
    tenant = (
        Tenant.objects.select_related("environment").filter(public_id=public_id).first()
        if is_uuid(public_id)
        else None
    )
    if tenant is None:
        raise CommandError(f"No tenant has the id {public_id!r}")
    return tenant


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise CommandError(f"Cannot read {path}: {exc.strerror}") from exc
