"""GET /healthz: liveness and readiness in one, for load balancers and orchestrators."""

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
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
    return JsonResponse(
        {"status": "ok" if healthy else "unavailable", "checks": checks},
        status=200 if healthy else 503,
    )
