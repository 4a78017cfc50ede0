from django.apps import AppConfig


class LeaguesConfig(AppConfig):
    name = "apps.leagues"
    label = "leagues"

    def ready(self) -> None:
        from apps.leagues import (
            guards,  # noqa: F401 - registers guard rails
            portable,  # noqa: F401 - its configuration kinds
        )
