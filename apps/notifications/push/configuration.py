"""Writes of push configuration, for the admin API and the dashboard alike: push channels
(their credentials encrypted at rest) and push templates, with the built-in templates seeded
once per tenant. Every change bumps the tenant's configuration version."""

import datetime as dt
from typing import Any

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.api.fields import camel_case, snake_case
from apps.core.arguments import UNSET, Unset, given
from apps.core.errors import ValidationError
from apps.core.wording import listed
from apps.notifications.choices import NotificationType, PushChannelStatus, TemplateStatus
from apps.notifications.configuration import defaults_seed_once
from apps.notifications.models import PushChannel, PushTemplate
from apps.notifications.push.credentials import SECRETS, SETTINGS, credentials_check
from apps.notifications.push.secrets import secrets_decrypt, secrets_encrypt
from apps.notifications.rendering import default_push_template, push_template_check
from apps.users.configuration import attribute_refs_check

MAX_DATA_KEYS = 20


# A channel's settings and secrets are stored as the admin API names them ("teamId"), the
# arguments' names in camelCase; they are checked under the arguments' names.
def _stored(fields: dict[str, Any]) -> dict[str, Any]:
    return {camel_case(name): value for name, value in fields.items()}


def _arguments(stored: dict[str, Any]) -> dict[str, Any]:
    return {snake_case(key): value for key, value in stored.items()}


def _split(kind: str, provided: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The provider fields of a channel, as (non-secret settings, secrets)."""
    unknown = sorted(set(provided) - set(SETTINGS[kind]) - set(SECRETS[kind]))
    if unknown:
        placeholders = listed(["{" + name + "}" for name in unknown], "or")
        raise ValidationError(
            f"{kind} channels take no {placeholders}", fields=unknown, code="not_allowed_for_kind"
        )
    settings = {k: v for k, v in provided.items() if k in SETTINGS[kind]}
    secrets = {k: v for k, v in provided.items() if k in SECRETS[kind]}
    return settings, secrets


def push_channel_create(
    tenant: Tenant,
    *,
    kind: str,
    status: str = PushChannelStatus.ACTIVE,
    # A channel's provider fields: APNs' team, key and bundle ids, sandbox and signing key (the
    # .p8 file's text), FCM's service account (the JSON key file, parsed), Expo's access token.
    # The secrets among them are stored encrypted and never shown.
    team_id: str | Unset = UNSET,
    key_id: str | Unset = UNSET,
    bundle_id: str | Unset = UNSET,
    sandbox: bool | Unset = UNSET,
    signing_key: str | Unset = UNSET,
    service_account: dict[str, Any] | Unset = UNSET,
    access_token: str | Unset | None = UNSET,
) -> PushChannel:
    credentials = given(
        team_id=team_id,
        key_id=key_id,
        bundle_id=bundle_id,
        sandbox=sandbox,
        signing_key=signing_key,
        service_account=service_account,
        access_token=access_token,
    )
    settings, secrets = _split(kind, credentials)
    checked = credentials_check(kind, settings, secrets)
    channel = PushChannel.objects.create(
        tenant=tenant,
        kind=kind,
        status=status,
        settings=_stored(checked),
        credentials=secrets_encrypt(_stored(secrets)) if secrets else "",
    )
    tenant_config_changed(tenant)
    return channel


def push_channel_update(
    channel: PushChannel,
    *,
    status: str | None = None,
    flagged: bool | None = None,
    # A channel's provider fields: APNs' team, key and bundle ids, sandbox and signing key (the
    # .p8 file's text), FCM's service account (the JSON key file, parsed), Expo's access token.
    # The secrets among them are stored encrypted and never shown.
    team_id: str | Unset = UNSET,
    key_id: str | Unset = UNSET,
    bundle_id: str | Unset = UNSET,
    sandbox: bool | Unset = UNSET,
    signing_key: str | Unset = UNSET,
    service_account: dict[str, Any] | Unset = UNSET,
    access_token: str | Unset | None = UNSET,
) -> PushChannel:
    """Change settings and replace the secrets given (others are kept; the kind is fixed).
    `flagged=False` clears the bad-token flag, and pruning resumes."""
    credentials = given(
        team_id=team_id,
        key_id=key_id,
        bundle_id=bundle_id,
        sandbox=sandbox,
        signing_key=signing_key,
        service_account=service_account,
        access_token=access_token,
    )
    settings, secrets = _split(channel.kind, credentials)
    if settings or secrets:
        merged_secrets = {**_arguments(secrets_decrypt(channel.credentials)), **secrets}
        merged_settings = {**_arguments(channel.settings), **settings}
        checked = credentials_check(channel.kind, merged_settings, merged_secrets)
        channel.settings = _stored(checked)
        channel.credentials = secrets_encrypt(_stored(merged_secrets)) if merged_secrets else ""
    if status is not None:
        channel.status = status
    if flagged is False:
        channel.flagged_at, channel.flag_reason = None, ""
    channel.save()
    tenant_config_changed(channel.tenant)
    return channel


def push_channel_delete(channel: PushChannel) -> None:
    tenant = channel.tenant
    channel.delete()
    tenant_config_changed(tenant)


def _check(title: str, body: str, url: str, data: dict[str, str]) -> None:
    if len(data) > MAX_DATA_KEYS:
        raise ValidationError(f"data holds at most {MAX_DATA_KEYS} keys")
    push_template_check(title=title, body=body, url=url, data=data)


def push_templates_seed(tenant: Tenant, now: dt.datetime | None = None) -> None:
    """Give the tenant the built-in push template of each type, inactive, once."""

    def make() -> None:
        PushTemplate.objects.bulk_create(
            [
                PushTemplate(
                    tenant=tenant,
                    type=type,
                    name=default.name,
                    title=default.title,
                    body=default.body,
                )
                for type in NotificationType.values
                for default in [default_push_template(type)]
            ]
        )

    defaults_seed_once(tenant, "push_defaults_seeded_at", make, now)


def push_template_create(
    tenant: Tenant,
    *,
    type: str,
    name: str,
    title: str | None = None,
    body: str | None = None,
    url: str | None = "",
    data: dict[str, str] | None = None,
    status: str = TemplateStatus.INACTIVE,
    user_attributes: list[dict[str, str]] | None = None,
    priority: int = 0,
) -> PushTemplate:
    """A new template; title and body default to the built-in template of the type."""
    default = default_push_template(type)
    url = url or ""
    title = default.title if title is None else title
    body = default.body if body is None else body
    _check(title, body, url, data or {})
    template = PushTemplate.objects.create(
        tenant=tenant,
        type=type,
        name=name,
        title=title,
        body=body,
        url=url,
        data=data or {},
        status=status,
        user_attributes=attribute_refs_check(tenant, user_attributes, "user"),
        priority=priority,
    )
    tenant_config_changed(tenant)
    return template


def push_template_update(
    template: PushTemplate,
    *,
    name: str | Unset = UNSET,
    title: str | Unset = UNSET,
    body: str | Unset = UNSET,
    url: str | Unset | None = UNSET,
    data: dict[str, str] | Unset | None = UNSET,
    status: str | Unset = UNSET,
    priority: int | Unset = UNSET,
    user_attributes: list[dict[str, str]] | None = None,  # None: unchanged
) -> PushTemplate:
    """Change the given fields; the type cannot change. A template that no longer renders is
    refused."""
    fields = given(
        name=name, title=title, body=body, url=url, data=data, status=status, priority=priority
    )
    for field, value in fields.items():
        setattr(template, field, value if value is not None else ("" if field == "url" else {}))
    if user_attributes is not None:
        template.user_attributes = attribute_refs_check(template.tenant, user_attributes, "user")
    if {"title", "body", "url", "data"} & set(fields):
        _check(template.title, template.body, template.url, template.data)
    template.save()
    tenant_config_changed(template.tenant)
    return template


def push_template_delete(template: PushTemplate) -> None:
    tenant = template.tenant
    template.delete()
    tenant_config_changed(tenant)
