from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "apps.notifications"
    label = "notifications"
    verbose_name = "Notifications"

    def ready(self) -> None:
        from apps.notifications import (
            jobs,  # noqa: F401 - registers the periodic jobs
            portable,  # noqa: F401 - its configuration kinds
        )
