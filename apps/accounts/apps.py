from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"

    def ready(self) -> None:
        # Registers the OpenAPI extension of ApiKeyAuthentication (X-API-KEY).
        from apps.accounts import (
            openapi,  # noqa: F401
            portable,  # noqa: F401 - its configuration kinds
        )
