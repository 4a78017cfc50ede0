from django.apps import AppConfig


class FairplayConfig(AppConfig):
    name = "apps.fairplay"
    label = "fairplay"

    def ready(self) -> None:
        from apps.fairplay import portable  # noqa: F401 - its configuration kind
