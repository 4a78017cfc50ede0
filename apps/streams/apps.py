from django.apps import AppConfig


class StreamsConfig(AppConfig):
    name = "apps.streams"
    label = "streams"
    verbose_name = "Live streams"
