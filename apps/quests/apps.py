from django.apps import AppConfig


class QuestsConfig(AppConfig):
    name = "apps.quests"
    label = "quests"

    def ready(self) -> None:
        from apps.quests import guards  # noqa: F401 - registers guard rails
