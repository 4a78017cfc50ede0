from django.apps import AppConfig


class PointsConfig(AppConfig):
    name = "apps.points"
    label = "points"

    def ready(self) -> None:
        from apps.points import (
            guards,  # noqa: F401 - registers guard rails
            portable,  # noqa: F401 - its configuration kinds
        )
