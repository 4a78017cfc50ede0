"""The streak settings as portable configuration (apps/core/portable.py)."""

from apps.core.portable import Context, SingletonKind, State, register, validated_data
from apps.streaks import configuration, selectors, serializers
from apps.streaks.domain import TenantStreakSettings


def _read(ctx: Context) -> State:
    return serializers.streak_settings_render(selectors.streak_config(ctx.tenant))


def _write(ctx: Context, changes: State) -> None:
    data = validated_data(serializers.StreakSettingsUpdateSerializer, changes)
    kwargs = serializers.StreakSettingsUpdateSerializer.service_kwargs(data)
    configuration.streak_settings_update(ctx.tenant, TenantStreakSettings(**kwargs))


register(
    SingletonKind(
        "streak_settings", "streak settings", 30, _read, _write, serializers.StreakSettings
    )
)
