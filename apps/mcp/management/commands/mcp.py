"""`manage.py mcp --key <admin key>`: the MCP server over stdio, for an agent on this machine
(Claude Desktop and other MCP clients start it as a subprocess). The key selects the
environment, as on the admin API; an application key or an unknown one stops the start."""

import os
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError
from mcp.server.stdio import stdio_server

from apps.accounts.choices import ApiKeyKind
from apps.accounts.selectors import api_key_authenticate, tenant_resolve
from apps.core.errors import NotFoundError
from apps.mcp.server import mcp_server

KEY_VARIABLE = "GAMIFY_ADMIN_KEY"


class Command(BaseCommand):
    help = (
        "Serve the MCP tools over stdio with an admin API key (--key, or the environment "
        f"variable {KEY_VARIABLE}, which keeps the key out of the process list)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--key", help=f"an admin API key (default: ${KEY_VARIABLE})")
        parser.add_argument(
            "--tenant", help="the customer id of the tenant a tool acts on when it names none"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        key = options["key"] or os.environ.get(KEY_VARIABLE, "")
        if not key:
            raise CommandError(f"Give an admin API key: --key or {KEY_VARIABLE}")
        api_key = api_key_authenticate(key)
        if api_key is None:
            raise CommandError("Invalid API key")
        if api_key.kind != ApiKeyKind.ADMIN:
            raise CommandError("The MCP server needs an admin API key, not an application key")
        tenant = options["tenant"]
        try:
            tenant_resolve(api_key.environment, tenant)
        except NotFoundError as exc:
            raise CommandError(exc.message) from exc
        server = mcp_server(key, tenant)

        async def serve() -> None:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())

        anyio.run(serve)
