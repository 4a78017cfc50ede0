from django.apps import AppConfig


class StreaksConfig(AppConfig):
    name = "apps.streaks"
    label = "streaks"

    def ready(self) -> None:
        from apps.streaks import (  # noqa: F401 - registers periodic jobs and guard rails
            guards,
            jobs,
            portable,
        )
