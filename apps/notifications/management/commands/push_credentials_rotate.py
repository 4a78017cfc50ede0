"""Re-encrypt every push channel's credentials under the current ENCRYPTION_KEY (see
apps.notifications.push.secrets for the rotation steps)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from apps.notifications.models import PushChannel
from apps.notifications.push.secrets import CredentialsUnreadableError, secrets_reencrypt


class Command(BaseCommand):
    help = "Re-encrypt push channel credentials under the current ENCRYPTION_KEY."

    def handle(self, *args: Any, **options: Any) -> None:
        done, unreadable = 0, []
        for channel in PushChannel.objects.exclude(credentials="").iterator():
            try:
                rotated = secrets_reencrypt(channel.credentials)
            except CredentialsUnreadableError:
                unreadable.append(str(channel.public_id))
                continue
            PushChannel.objects.filter(pk=channel.pk).update(credentials=rotated)
            done += 1
        self.stdout.write(f"re-encrypted {done} channel(s)")
        if unreadable:
            raise CommandError(
                "no configured key reads these channels (enter their credentials again): "
                + ", ".join(unreadable)
            )
