from django.apps import AppConfig


class FairplayConfig(AppConfig):
    name = "apps.fairplay"
    label = "fairplay"
