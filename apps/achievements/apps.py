from django.apps import AppConfig


class AchievementsConfig(AppConfig):
    name = "apps.achievements"
    label = "achievements"

    def ready(self) -> None:
        from apps.achievements import (  # noqa: F401 - registers periodic jobs and guard rails
            guards,
            jobs,
            portable,
        )
