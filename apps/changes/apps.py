from django.apps import AppConfig


class ChangesConfig(AppConfig):
    name = "apps.changes"
    label = "changes"
    verbose_name = "Configuration changes"

    def ready(self) -> None:
        from apps.accounts.admin.base import CONFIGURATION_MODELS
        from apps.changes.dashboard import MODEL_KINDS

        CONFIGURATION_MODELS.update(MODEL_KINDS)
