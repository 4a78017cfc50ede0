"""Writes of webhook endpoints, for the admin API and the dashboard alike: creating, changing,
deleting, rotating the signing secret, and disabling (by staff, or by delivery after a 410 or
days of failures)."""

import datetime as dt

from django.conf import settings
from django.utils import timezone

from apps.accounts.history import recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.declarations import given_values, required_check
from apps.core.errors import ValidationError
from apps.core.secrets import encrypt_json
from apps.webhooks.choices import EndpointStatus
from apps.webhooks.domain import WebhookEndpointSettings
from apps.webhooks.models import (
    WebhookEndpoint,
)
from apps.webhooks.services import SECRET_PURPOSE
from apps.webhooks.signing import new_secret
from apps.webhooks.transport import check_url

ROTATION_OVERLAP = dt.timedelta(hours=24)


def url_check(url: str) -> None:
    reason = check_url(
        url,
        allow_http=settings.WEBHOOK_ALLOW_HTTP,
        allowed_networks=settings.WEBHOOK_ALLOWED_NETWORKS,
    )
    if reason is not None:
        raise ValidationError(f"url: {reason}")


@recorded("webhook_endpoint")
def webhook_endpoint_create(
    tenant: Tenant, settings: WebhookEndpointSettings
) -> tuple[WebhookEndpoint, str]:
    """The endpoint and its signing secret, in clear: shown once, in the creation response. It
    is active and receives every event type unless `status` and `events` say otherwise."""
    required_check(settings)
    values = given_values(settings)
    url_check(values["url"])
    values["events"] = sorted(set(values.get("events") or []))
    secret = new_secret()
    endpoint = WebhookEndpoint.objects.create(
        tenant=tenant, **values, secret=encrypt_json(secret, SECRET_PURPOSE)
    )
    tenant_config_changed(tenant)
    return endpoint, secret


@recorded("webhook_endpoint")
def webhook_endpoint_update(
    tenant: Tenant, endpoint: WebhookEndpoint, changes: WebhookEndpointSettings
) -> WebhookEndpoint:
    """Change the given settings; the others are kept. Status "active", even unchanged,
    clears the record of failures."""
    values = given_values(changes)
    if "url" in values:
        url_check(values["url"])
    if "events" in values:
        values["events"] = sorted(set(values["events"] or []))
    status = values.get("status")
    if status == EndpointStatus.ACTIVE:
        endpoint.disabled_reason, endpoint.failing_since = "", None
    elif status is not None and endpoint.status != status:
        endpoint.disabled_reason = "Disabled through the API or the dashboard"
    for name, value in values.items():
        setattr(endpoint, name, value)
    endpoint.save()
    tenant_config_changed(tenant)
    return endpoint


@recorded("webhook_endpoint")
def webhook_endpoint_delete(endpoint: WebhookEndpoint) -> None:
    tenant = endpoint.tenant
    endpoint.delete()
    tenant_config_changed(tenant)


@recorded("webhook_endpoint")
def webhook_endpoint_rotate_secret(
    endpoint: WebhookEndpoint, now: dt.datetime | None = None
) -> str:
    """A new secret (returned in clear, once); the old one keeps signing for 24 hours."""
    now = now or timezone.now()
    secret = new_secret()
    endpoint.previous_secret = endpoint.secret
    endpoint.previous_secret_expires_at = now + ROTATION_OVERLAP
    endpoint.secret = encrypt_json(secret, SECRET_PURPOSE)
    endpoint.save()
    return secret


@recorded("webhook_endpoint")
def webhook_endpoint_disable(endpoint: WebhookEndpoint, reason: str) -> None:
    WebhookEndpoint.objects.filter(pk=endpoint.pk, status=EndpointStatus.ACTIVE).update(
        status=EndpointStatus.DISABLED, disabled_reason=reason
    )
    tenant_config_changed(endpoint.tenant)
