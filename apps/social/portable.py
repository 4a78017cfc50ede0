"""The friends settings as portable configuration (apps/core/portable.py)."""

from apps.core.portable import Context, SingletonKind, State, register, validated_data
from apps.social import configuration, selectors, serializers
from apps.social.domain import TenantFriendSettings


def _read(ctx: Context) -> State:
    return serializers.friend_settings_render(selectors.friends_config(ctx.tenant))


def _write(ctx: Context, changes: State) -> None:
    data = validated_data(serializers.FriendSettingsUpdateSerializer, changes)
    kwargs = serializers.FriendSettingsUpdateSerializer.service_kwargs(data)
    configuration.friend_settings_update(ctx.tenant, TenantFriendSettings(**kwargs))


register(
    SingletonKind(
        "friend_settings", "friends settings", 35, _read, _write, serializers.FriendSettings
    )
)
