"""Create, once, a demo organization and a dashboard login for local development.

The admin key is stored only as a hash, so the credentials are written to .demo.json (ignored by
git, readable only by its owner) the first time and printed from there on every start.
"""

import json
import os
import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from apps.accounts.models import Organization
from apps.accounts.services import organization_create

DEMO_NAME = "Demo"


class Command(BaseCommand):
    help = "Create the demo organization and dashboard login once, and print the credentials."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--file", default=str(Path(settings.BASE_DIR) / ".demo.json"))

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG:
            raise CommandError("demo_setup is for local development (DEBUG=true) only")
        path = Path(options["file"])
        credentials = json.loads(path.read_text()) if path.exists() else None
        if (
            credentials is None
            or not Organization.objects.filter(public_id=credentials.get("organizationId")).exists()
        ):
            credentials = self._create()
            path.write_text(json.dumps(credentials, indent=2))
            os.chmod(path, 0o600)
        port = os.environ.get("PORT", "8000")
        self.stdout.write(
            "\n"
            f"  Demo organization: {DEMO_NAME}\n"
            f"  Admin API key:     {credentials['apiKey']}\n"
            f"  Dashboard:         http://127.0.0.1:{port}/dashboard/  "
            f"(user {credentials['username']!r}, password {credentials['password']!r})\n"
            f"  Application API:   http://127.0.0.1:{port}/v1   "
            f"Admin API: http://127.0.0.1:{port}/admin/v1\n"
            f"  (credentials kept in {path.name})\n"
        )

    def _create(self) -> dict[str, str]:
        created = organization_create(DEMO_NAME)
        username = "admin"
        password = secrets.token_urlsafe(12)
        user_model = get_user_model()
        user = user_model.objects.filter(username=username).first()
        if user is None:
            user_model.objects.create_superuser(username=username, email="", password=password)
        else:
            user.set_password(password)
            user.save(update_fields=["password"])
        return {
            "organizationId": str(created.organization.public_id),
            "apiKey": created.full_key,
            "username": username,
            "password": password,
        }
