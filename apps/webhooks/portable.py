"""Webhook endpoints in the change history (apps/core/portable.py): not in configuration files
or promotes, since an endpoint's address and signing secret belong to one environment."""

from apps.core.portable import CollectionKind, register
from apps.webhooks.models import WebhookEndpoint
from apps.webhooks.views import WebhookCollection

register(
    CollectionKind(
        "webhook_endpoint",
        "webhook endpoint",
        90,
        WebhookCollection(),
        model=WebhookEndpoint,
        key_of=lambda endpoint: endpoint.url,
        drop=frozenset({"secret"}),
        portable=False,
    )
)
