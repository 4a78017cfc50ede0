from django.apps import AppConfig


class PointsConfig(AppConfig):
    name = "apps.points"
    label = "points"
