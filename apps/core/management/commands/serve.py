"""The local development server: the ASGI application under uvicorn (so the live streams,
async views, work as in production) plus an in-process periodic-job scheduler
(docs/architecture.md §1: without a broker, periodic jobs run from the server process)."""

import threading
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import close_old_connections

from apps.core.periodic import periodic_jobs_run_due

TICK_SECONDS = 60


def _scheduler(stop: threading.Event) -> None:
    while not stop.is_set():
        close_old_connections()
        try:
            periodic_jobs_run_due()
        except Exception:  # keep ticking; the job runner already logged the failure
            time.sleep(1)
        stop.wait(TICK_SECONDS)


class Command(BaseCommand):
    help = "Serve on 127.0.0.1 with periodic jobs running in-process when there is no broker."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--port", default="8000")
        parser.add_argument("--host", default="127.0.0.1")

    def handle(self, *args: Any, **options: Any) -> None:
        stop = threading.Event()
        if not settings.CELERY_BROKER_URL:
            threading.Thread(
                target=_scheduler, args=(stop,), daemon=True, name="periodic-jobs"
            ).start()
        try:
            import uvicorn

            uvicorn.run(
                "gamify.asgi:application",
                host=options["host"],
                port=int(options["port"]),
                log_level="info",
                lifespan="off",
            )
        finally:
            stop.set()
