from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "apps.webhooks"
    label = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from apps.webhooks import (
            jobs,  # noqa: F401 - registers the periodic jobs
            portable,  # noqa: F401 - its configuration kinds
        )
