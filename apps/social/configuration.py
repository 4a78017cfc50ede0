"""Writes of the friends settings (PATCH /admin/ext/v1/friends/settings)."""

from apps.accounts.history import recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.declarations import given_values
from apps.social.domain import TenantFriendSettings
from apps.social.models import FriendSettings


@recorded("friend_settings")
def friend_settings_update(tenant: Tenant, changes: TenantFriendSettings) -> FriendSettings:
    """The given settings change, the others are kept (the first update makes the row). The
    lists already written stay as they are: switching to mutual does not add the other
    directions, switching to one-way removes none."""
    settings, _ = FriendSettings.objects.get_or_create(tenant=tenant)
    for name, value in given_values(changes).items():
        setattr(settings, name, value)
    settings.save()
    tenant_config_changed(tenant)
    return settings
