"""Writes of push configuration, for the admin API and the dashboard alike: push channels
(their credentials encrypted at rest) and push templates, with the built-in templates seeded
once per tenant. Every change bumps the tenant's configuration version."""

import datetime as dt
from collections.abc import Callable
from typing import Any

from apps.accounts.history import recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.api.fields import camel_case, snake_case
from apps.core.declarations import given_values, required_check
from apps.core.errors import ValidationError
from apps.core.wording import listed
from apps.leagues.selectors import leagues_config
from apps.notifications import domain
from apps.notifications.choices import (
    LEAGUE_TYPES,
    QUEST_TYPES,
    TROPHY_TYPES,
    PushChannelStatus,
    TemplateStatus,
)
from apps.notifications.configuration import defaults_seed_once
from apps.notifications.domain import PushChannelSettings, PushTemplateSettings
from apps.notifications.models import PushChannel, PushTemplate
from apps.notifications.push.credentials import SECRETS, SETTINGS, credentials_check
from apps.notifications.push.secrets import secrets_decrypt, secrets_encrypt
from apps.notifications.rendering import default_push_template, push_template_check
from apps.quests.selectors import quests_config
from apps.users.configuration import attribute_refs_check

MAX_DATA_KEYS = 20


# A channel's settings and secrets are stored as the admin API names them ("teamId"), the
# declaration's names in camelCase; they are checked under the declaration's names.
def _stored(fields: dict[str, Any]) -> dict[str, Any]:
    return {camel_case(name): value for name, value in fields.items()}


def _declared(stored: dict[str, Any]) -> dict[str, Any]:
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


def _credentials(values: dict[str, Any]) -> dict[str, Any]:
    """The provider fields among the given settings."""
    return {k: v for k, v in values.items() if k not in ("kind", "status", "flagged")}


@recorded("push_channel")
def push_channel_create(tenant: Tenant, settings: PushChannelSettings) -> PushChannel:
    """A new channel, active unless `status` says otherwise; it must be able to sign its
    requests."""
    required_check(settings)
    values = given_values(settings)
    if "flagged" in values:
        raise ValidationError(
            "{flagged} is for a channel's update: a new one is not flagged",
            fields="flagged",
            code="not_allowed",
        )
    kind = values["kind"]
    provider, secrets = _split(kind, _credentials(values))
    checked = credentials_check(kind, provider, secrets)
    channel = PushChannel.objects.create(
        tenant=tenant,
        kind=kind,
        status=values.get("status", PushChannelStatus.ACTIVE),
        settings=_stored(checked),
        credentials=secrets_encrypt(_stored(secrets)) if secrets else "",
    )
    tenant_config_changed(tenant)
    return channel


@recorded("push_channel")
def push_channel_update(
    tenant: Tenant, channel: PushChannel, changes: PushChannelSettings
) -> PushChannel:
    """Change settings and replace the secrets given (others are kept; the kind is fixed).
    `flagged=False` clears the bad-token flag, and pruning resumes."""
    values = given_values(changes)
    if values.pop("kind", channel.kind) != channel.kind:
        raise domain.set_for_good_problem("kind")
    provider, secrets = _split(channel.kind, _credentials(values))
    if provider or secrets:
        merged_secrets = {**_declared(secrets_decrypt(channel.credentials)), **secrets}
        merged_settings = {**_declared(channel.settings), **provider}
        checked = credentials_check(channel.kind, merged_settings, merged_secrets)
        channel.settings = _stored(checked)
        channel.credentials = secrets_encrypt(_stored(merged_secrets)) if merged_secrets else ""
    if "status" in values:
        channel.status = values["status"]
    if values.get("flagged") is False:
        channel.flagged_at, channel.flag_reason = None, ""
    channel.save()
    tenant_config_changed(tenant)
    return channel


@recorded("push_channel")
def push_channel_delete(channel: PushChannel) -> None:
    tenant = channel.tenant
    channel.delete()
    tenant_config_changed(tenant)


def _check(title: str, body: str, url: str, data: dict[str, str]) -> None:
    if len(data) > MAX_DATA_KEYS:
        raise ValidationError(f"data holds at most {MAX_DATA_KEYS} keys")
    push_template_check(title=title, body=body, url=url, data=data)


def push_templates_seed(tenant: Tenant, now: dt.datetime | None = None) -> None:
    """Give the tenant the built-in push template of each type, inactive, once (the league
    types, once the tenant has a league)."""

    def make(types: tuple[str, ...]) -> Callable[[], None]:
        def seed() -> None:
            # Not for a type the tenant already has a template of (one a configuration file
            # or a promote made before the tenant's first league, say).
            present = set(
                PushTemplate.objects.filter(tenant=tenant, type__in=types).values_list(
                    "type", flat=True
                )
            )
            PushTemplate.objects.bulk_create(
                [
                    PushTemplate(
                        tenant=tenant,
                        type=type,
                        name=default.name,
                        title=default.title,
                        body=default.body,
                    )
                    for type in types
                    if type not in present
                    for default in [default_push_template(type)]
                ]
            )

        return seed

    defaults_seed_once(
        tenant, "push_defaults_seeded_at", make(TROPHY_TYPES), now, kind="push_template"
    )
    if leagues_config(tenant):  # the league types' once the tenant has a league
        defaults_seed_once(
            tenant, "league_push_defaults_seeded_at", make(LEAGUE_TYPES), now, kind="push_template"
        )
    if quests_config(tenant).quests:  # the quest types' once the tenant has a quest
        defaults_seed_once(
            tenant, "quest_push_defaults_seeded_at", make(QUEST_TYPES), now, kind="push_template"
        )


@recorded("push_template")
def push_template_create(tenant: Tenant, settings: PushTemplateSettings) -> PushTemplate:
    """A new template; title and body default to the built-in template of the type."""
    required_check(settings)
    values = given_values(settings)
    type = values["type"]
    default = default_push_template(type)
    url = values.get("url") or ""
    data = values.get("data") or {}
    title = values.get("title", default.title)
    body = values.get("body", default.body)
    _check(title, body, url, data)
    template = PushTemplate.objects.create(
        tenant=tenant,
        type=type,
        name=values["name"],
        title=title,
        body=body,
        url=url,
        data=data,
        status=values.get("status", TemplateStatus.INACTIVE),
        user_attributes=attribute_refs_check(tenant, values.get("user_attributes"), "user"),
        priority=values.get("priority", 0),
    )
    tenant_config_changed(tenant)
    return template


@recorded("push_template")
def push_template_update(
    tenant: Tenant, template: PushTemplate, changes: PushTemplateSettings
) -> PushTemplate:
    """Change the given settings; the type cannot change. A template that no longer renders is
    refused. A None url or data clears it; None user attributes keep theirs."""
    values = given_values(changes)
    if values.pop("type", template.type) != template.type:
        raise domain.set_for_good_problem("type")
    user_attributes = values.pop("user_attributes", None)
    for field, value in values.items():
        setattr(template, field, value if value is not None else ("" if field == "url" else {}))
    if user_attributes is not None:
        template.user_attributes = attribute_refs_check(tenant, user_attributes, "user")
    if {"title", "body", "url", "data"} & set(values):
        _check(template.title, template.body, template.url, template.data)
    template.save()
    tenant_config_changed(tenant)
    return template


@recorded("push_template")
def push_template_delete(template: PushTemplate) -> None:
    tenant = template.tenant
    template.delete()
    tenant_config_changed(tenant)
