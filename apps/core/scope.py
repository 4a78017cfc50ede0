"""What an authenticated request may touch: one environment, one tenant, one kind of key."""

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from apps.core.errors import PermissionDeniedError

KEY_KIND_ADMIN = "admin"
KEY_KIND_APPLICATION = "application"


@dataclass(frozen=True, slots=True)
class Scope:
    environment: Any  # accounts.Environment (core sits below accounts and cannot import it)
    tenant: Any  # accounts.Tenant
    key_kind: str
    key_id: Any
    # Application keys are bound to one end-user id; admin keys to none.
    bound_user_id: str | None = None

    @property
    def is_admin(self) -> bool:
        return self.key_kind == KEY_KIND_ADMIN

    def ensure_user_fields_allowed(self, fields: dict[str, Any]) -> None:
        """With APPLICATION_KEYS_CHANGE_ATTRIBUTES off, application keys may not set their
        user's attributes (which gate achievements, boosts and leaderboards): only the
        customer's backend, with an admin key, may."""
        if (
            self.bound_user_id is not None
            and fields.get("attributes")
            and not settings.APPLICATION_KEYS_CHANGE_ATTRIBUTES
        ):
            raise PermissionDeniedError(
                "Application API keys may not change user attributes on this server; "
                "send attributes from your backend with an admin key"
            )

    def ensure_user_access(self, user_id: str) -> None:
        """Application keys may only act on their own end-user's data."""
        if self.bound_user_id is not None and user_id != self.bound_user_id:
            raise PermissionDeniedError("This application API key may only access its own user")
