"""GET /healthz: liveness and readiness in one, for load balancers and orchestrators."""

from django.conf import settings
from django.db import connection, connections
from django.http import HttpRequest, JsonResponse

from apps.core.cells import cell_alias, cells, cells_configured


def _database_ok(alias: str | None = None) -> bool:
    try:
        with (connections[alias] if alias else connection).cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except Exception:  # any failure means "not ready"; the reason is in the server log
        return False


def _broker_ok() -> bool:
    from gamify.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
        return True
    except Exception:  # unreachable broker, bad URL, timeout
        return False


def healthz(request: HttpRequest) -> JsonResponse:
    checks = {"database": _database_ok()}
    if settings.CELERY_BROKER_URL:
        checks["broker"] = _broker_ok()
    healthy = all(checks.values())
    body: dict[str, object] = {"status": "ok" if healthy else "unavailable", "checks": checks}
    if cells_configured():
        # Each cell's primary, for monitoring: one cell down must not take every web process
        # out of the load balancer (the other cells' organizations are served), so readiness
        # stays the control database's ("database") and the broker's.
        body["cells"] = {cell: _database_ok(cell_alias(cell)) for cell in cells()}
    return JsonResponse(body, status=200 if healthy else 503)
