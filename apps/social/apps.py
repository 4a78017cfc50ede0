from django.apps import AppConfig


class SocialConfig(AppConfig):
    name = "apps.social"
    label = "social"

    def ready(self) -> None:
        from apps.social import portable  # noqa: F401 - its configuration kinds
