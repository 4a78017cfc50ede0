from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "apps.metrics"
    label = "metrics"

    def ready(self) -> None:
        from apps.metrics import portable  # noqa: F401 - its configuration kinds
