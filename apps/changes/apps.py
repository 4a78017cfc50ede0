from django.apps import AppConfig


class ChangesConfig(AppConfig):
    name = "apps.changes"
    label = "changes"
    verbose_name = "Configuration changes"
