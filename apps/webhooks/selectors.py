"""Reads of webhook configuration and of the delivery log."""

from collections.abc import Sequence

from apps.accounts.models import Tenant
from apps.core.config_cache import tenant_cached
from apps.webhooks.choices import EndpointStatus
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint


def endpoints_active(tenant: Tenant) -> list[WebhookEndpoint]:
    """Cached per configuration version: the event path asks on every event, and most tenants
    have no endpoint."""

    def load() -> list[WebhookEndpoint]:
        return list(
            WebhookEndpoint.objects.filter(tenant=tenant, status=EndpointStatus.ACTIVE).order_by(
                "created", "id"
            )
        )

    return tenant_cached(tenant, "webhooks", load)


def endpoints_list(tenant: Tenant, limit: int, skip: int) -> Sequence[WebhookEndpoint]:
    return list(
        WebhookEndpoint.objects.filter(tenant=tenant).order_by("created", "id")[skip : skip + limit]
    )


def endpoint_get(tenant: Tenant, public_id: str) -> WebhookEndpoint | None:
    return WebhookEndpoint.objects.filter(tenant=tenant, public_id=public_id).first()


def deliveries_list(endpoint: WebhookEndpoint, limit: int, skip: int) -> Sequence[WebhookDelivery]:
    return list(
        WebhookDelivery.objects.filter(endpoint=endpoint)
        .select_related("event")
        .prefetch_related("log")
        .order_by("-created", "-id")[skip : skip + limit]
    )


def tenants_listening(type: str) -> set[int]:
    """Tenants with an active endpoint subscribed to this event type (or to every type)."""
    rows = WebhookEndpoint.objects.filter(status=EndpointStatus.ACTIVE).values_list(
        "tenant_id", "events"
    )
    return {tenant_pk for tenant_pk, events in rows if not events or type in events}
