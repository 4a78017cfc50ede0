"""Pure webhook rules: the settings of an endpoint. No ORM."""

from dataclasses import dataclass

from apps.core import declarations as declare
from apps.core.arguments import Unset
from apps.webhooks.choices import EndpointStatus, EventType


@dataclass(frozen=True, kw_only=True)
class WebhookEndpointSettings:
    """An endpoint's settings (apps/core/declarations.py), as webhook_endpoint_create and
    webhook_endpoint_update take them. Its signing secret is not one: the service makes it."""

    url: str | Unset = declare.url(
        "URL",
        required=True,
        help="https, reaching a public address: deliveries to private networks are refused.",
    )
    description: str | Unset = declare.text("Description", max_length=1000, blank=True)
    status: str | Unset = declare.choice(
        "Status",
        EndpointStatus,
        help="A disabled endpoint receives nothing; gamify disables an endpoint that answers "
        "410 or fails for 5 days.",
    )
    # Event types; none (or None): every type, including types added later.
    events: list[str] | Unset | None = declare.choices(
        "Event types",
        EventType,
        nullable=True,
        max_length=len(EventType),
        help="None checked: every event type, including types added later.",
    )
