from typing import Any

from django.core.management.base import BaseCommand
from django.utils import timezone

from apps.core.outbox import MAX_ATTEMPTS, outbox_failed, outbox_retry
from apps.core.wording import counted


class Command(BaseCommand):
    help = (
        f"List the background work set aside after {MAX_ATTEMPTS} failed runs, or (--retry) "
        "send it again."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--retry", action="store_true", help="give every set-aside task a fresh start"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["retry"]:
            retried = outbox_retry(timezone.now())
            self.stdout.write(f"{counted(retried, 'task')} sent again at the next sweep")
            return
        failed = outbox_failed()
        for row in failed:
            error = row.last_error.splitlines()[0] if row.last_error else ""
            self.stdout.write(f"{row.failed_at:%Y-%m-%d %H:%M:%S}\t{row.key}\t{error}")
        self.stdout.write(f"{counted(len(failed), 'task')} set aside")
