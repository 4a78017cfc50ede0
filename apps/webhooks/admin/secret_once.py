"""A new signing secret, shown once on the endpoint's secret page (apps/core/show_once.py)."""

from dataclasses import dataclass

from django.http import HttpRequest

from apps.core.show_once import once_keep, once_take
from apps.webhooks.models import WebhookEndpoint

_SLOT = "webhooks.new_secret"


@dataclass(frozen=True)
class NewSecret:
    secret: str
    rotated: bool


def secret_keep(
    request: HttpRequest, endpoint: WebhookEndpoint, secret: str, rotated: bool
) -> None:
    once_keep(request, _SLOT, str(endpoint.public_id), {"secret": secret, "rotated": rotated})


def secret_take(request: HttpRequest, endpoint: WebhookEndpoint) -> NewSecret | None:
    """The endpoint's new secret, removed from the session: shown once."""
    payload = once_take(request, _SLOT, str(endpoint.public_id))
    if payload is None:
        return None
    return NewSecret(secret=payload["secret"], rotated=payload["rotated"])
