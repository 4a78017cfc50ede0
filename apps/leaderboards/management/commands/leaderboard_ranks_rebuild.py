from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from apps.leaderboards.jobs import ranks_rebuild_active


class Command(BaseCommand):
    help = (
        "Rebuild the Redis copy of every active leaderboard's ranks from PostgreSQL (after "
        "restoring the database, or to fill a new Redis before traffic arrives). Sets are also "
        "rebuilt on their own when missing; this does it now, all at once."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.LEADERBOARD_RANKS_REDIS_URL:
            raise CommandError("LEADERBOARD_RANKS_REDIS_URL (or REDIS_URL) is not set")
        rebuilt = ranks_rebuild_active(timezone.now().date())
        self.stdout.write(f"{rebuilt} rank sets rebuilt")
