"""What an authenticated request may touch: one environment, one tenant, one kind of key."""

from dataclasses import dataclass
from typing import Any

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

    def ensure_user_access(self, user_id: str) -> None:
        """Application keys may only act on their own end-user's data."""
        if self.bound_user_id is not None and user_id != self.bound_user_id:
            raise PermissionDeniedError("This application API key may only access its own user")
