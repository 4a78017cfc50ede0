from django.apps import AppConfig


class UsersConfig(AppConfig):
    name = "apps.users"
    label = "users"

    def ready(self) -> None:
        # Registers the drf-spectacular extensions of the user's fields before any schema is
        # generated; no view needs the module itself.
        from apps.users import (
            openapi,  # noqa: F401
            portable,  # noqa: F401 - its configuration kinds
        )
