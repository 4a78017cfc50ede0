"""The tenant's settings as portable configuration (apps/core/portable.py): the admin API's
settings (branding, experimentation, aggregation period) and the reporting time zone."""

from apps.accounts import serializers, services
from apps.core.portable import Context, SingletonKind, State, register, validated_data


def _read(ctx: Context) -> State:
    return {**serializers.admin_settings_render(ctx.tenant), "reportingTz": ctx.tenant.reporting_tz}


def _write(ctx: Context, changes: State) -> None:
    zone = changes.pop("reportingTz", None)
    data = validated_data(serializers.SettingsUpdateSerializer, changes)
    kwargs = serializers.SettingsUpdateSerializer.service_kwargs(data)
    services.settings_update(ctx.tenant, reporting_tz=zone, **kwargs)


register(
    SingletonKind(
        "settings",
        "tenant settings",
        5,
        _read,
        _write,
        serializers.AdminSettings,
        more={"reportingTz": {"type": "string", "description": "An IANA time zone."}},
    )
)
