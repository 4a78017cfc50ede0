from django.apps import AppConfig


class PointsConfig(AppConfig):
    name = "apps.points"
    label = "points"

    def ready(self) -> None:
        from apps.points import jobs  # noqa: F401 - registers periodic jobs
