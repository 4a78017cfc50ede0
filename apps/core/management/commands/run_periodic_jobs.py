from typing import Any

from django.core.management.base import BaseCommand

from apps.core.background import background_inline
from apps.core.periodic import periodic_jobs_registered, periodic_jobs_run_due
from apps.core.wording import counted


class Command(BaseCommand):
    help = "Run every periodic job that is due, once, and exit (for cron instead of Celery beat)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--all", action="store_true", help="run every job, due or not")
        parser.add_argument("--list", action="store_true", help="list the registered jobs")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list"]:
            for job in periodic_jobs_registered():
                self.stdout.write(f"{job.name}\tevery {job.every}")
            return
        # Work the jobs hand on (the outbox sweep's, without a broker) runs here, before exit:
        # a background thread would die with this command, its work half done.
        with background_inline():
            ran = periodic_jobs_run_due(force=options["all"])
        self.stdout.write(f"ran {counted(len(ran), 'job')}: {', '.join(ran) or '-'}")
