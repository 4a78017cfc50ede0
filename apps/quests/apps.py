from django.apps import AppConfig


class QuestsConfig(AppConfig):
    name = "apps.quests"
    label = "quests"

    def ready(self) -> None:
        from apps.quests import (  # noqa: F401 - guard rails, its configuration kinds
            guards,
            portable,
        )
