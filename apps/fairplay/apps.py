from django.apps import AppConfig


class FairplayConfig(AppConfig):
    name = "apps.fairplay"
    label = "fairplay"
    verbose_name = "Fair play"

    def ready(self) -> None:
        from apps.fairplay import (  # noqa: F401 - its configuration kind, its periodic job
            jobs,
            portable,
        )
