"""Dashboard pages for webhook endpoints (apps/accounts/admin/config_pages.py): the list, and the
form, delete and action pages, written by the endpoint services; the signing secret is shown once
on a page of its own (endpoint_actions.py)."""

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator
from django.utils.timesince import timesince

from apps.accounts.admin.base import TENANT_RELATED, TenantColumnMixin, TenantFilter
from apps.accounts.admin.config_pages import Section
from apps.accounts.admin.declared import declared_form, own_input
from apps.core.shown_time import moment_shown
from apps.webhooks import configuration
from apps.webhooks.admin.display import (
    EVENT_TYPE_GROUPS,
    events_label,
    short_error,
    status_badge,
    url_label,
)
from apps.webhooks.admin.endpoint_actions import EndpointActions, secret_keep
from apps.webhooks.choices import EndpointStatus
from apps.webhooks.domain import WebhookEndpointSettings
from apps.webhooks.models import WebhookEndpoint
from apps.webhooks.transport import check_url

# The change page lists this many of the endpoint's latest deliveries; the delivery log has all.
RECENT_DELIVERIES = 50
# The list names up to this many subscribed types; more become "N types" with a tooltip.
EVENTS_COLUMN_TYPES = 3


# The event types in groups, by their prefix (Django's grouped choices).
_CHOICES: dict[str, Any] = {"status": EndpointStatus.choices, "events": EVENT_TYPE_GROUPS}
_Declared: Any = declared_form(
    WebhookEndpointSettings,
    model=WebhookEndpoint,
    skip=("url",),
    choices=_CHOICES,
    widgets={"description": forms.TextInput(attrs={"class": "vLargeTextField"})},
)


class EndpointForm(_Declared):
    """An endpoint's settings as staff read them; `declared_settings` makes the declaration the
    service is given."""

    # Not the URL input a declaration derives: the service's own check (clean_url) words what
    # is wrong with a URL, as the API does.
    url = own_input(
        WebhookEndpointSettings,
        "url",
        forms.CharField,
        max_length=2000,
        widget=forms.TextInput(
            attrs={
                "class": "vURLField",
                "placeholder": "https://example.com/webhooks/gamify",
                "spellcheck": "false",
            }
        ),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # An endpoint is always active or disabled (the API's default is active).
        self.fields["status"].required = True

    def declared_settings(self, **own: Any) -> WebhookEndpointSettings:
        """A change gives only what changed: status "active" clears the record of failures,
        and a URL given is checked again."""
        return super().declared_settings(changed_only=True, **own)

    def clean_url(self) -> str:
        # The service's own check, so that its refusal shows next to the input; an unchanged
        # URL is not checked again (a DNS lookup that may fail now), as the update skips it.
        url: str = self.cleaned_data["url"]
        if self.instance is None or url != self.instance.url:
            allowed = settings.WEBHOOK_ALLOWED_NETWORKS
            reason = check_url(
                url, allow_http=settings.WEBHOOK_ALLOW_HTTP, allowed_networks=allowed
            )
            if reason is not None:
                raise forms.ValidationError(reason)
        return url


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(TenantColumnMixin, EndpointActions):
    config_form = EndpointForm
    list_display = (
        "endpoint_column",
        "status_column",
        "events_column",
        "failing_column",
        "tenant_column",
    )
    list_select_related = (TENANT_RELATED,)
    list_filter = ("status", ("tenant", TenantFilter))
    search_fields = ("url", "description")
    ordering = ("tenant_id", "created", "id")

    def get_queryset(self, request: HttpRequest) -> QuerySet[WebhookEndpoint]:
        # The change page, its actions and the services read the tenant and its label too.
        return super().get_queryset(request).select_related(TENANT_RELATED)

    def form_sections(self, obj: WebhookEndpoint | None) -> list[Section]:
        events = ("Events", ["events"])
        if obj is None:
            return [(None, ["url", "description", "status"]), events]
        # A disabled endpoint's reason is a banner above the form (change_form.html).
        return [
            (None, ["tenant_column", "url", "description", "status"]),
            events,
            ("Delivery", ["failing_since", "secret_state", "public_id", "created"]),
        ]

    # --- writes --------------------------------------------------------------------------------

    def create(self, request: HttpRequest, form: EndpointForm) -> WebhookEndpoint:
        endpoint, secret = configuration.webhook_endpoint_create(
            form.valid_tenant, form.declared_settings()
        )
        secret_keep(request, endpoint, secret, rotated=False)
        return endpoint

    def update(self, request: HttpRequest, obj: WebhookEndpoint, form: EndpointForm) -> None:
        configuration.webhook_endpoint_update(obj.tenant, obj, form.declared_settings())

    def remove(self, request: HttpRequest, obj: WebhookEndpoint) -> None:
        configuration.webhook_endpoint_delete(obj)

    def after_add_url(self, obj: WebhookEndpoint) -> str:
        return self.url("secret", obj)

    # --- columns and read-only rows ------------------------------------------------------------

    @admin.display(description="URL and description", ordering="url")
    def endpoint_column(self, obj: WebhookEndpoint) -> SafeString:
        # One column for both keeps the list within a laptop screen.
        url = url_label(obj.url)
        if not obj.description:
            return url
        return format_html(
            '{}<div class="webhook-quiet">{}</div>', url, Truncator(obj.description).chars(80)
        )

    @admin.display(description="status", ordering="status")
    def status_column(self, obj: WebhookEndpoint) -> SafeString:
        if obj.status != EndpointStatus.DISABLED or not obj.disabled_reason:
            return status_badge(obj.status)
        return format_html(
            '{}<div class="webhook-reason">{}</div>', status_badge(obj.status), obj.disabled_reason
        )

    @admin.display(description="failing since", ordering="failing_since")
    def failing_column(self, obj: WebhookEndpoint) -> SafeString | str:
        if obj.failing_since is None:
            return "-"
        since = moment_shown(obj.failing_since)
        return format_html('<span title="{}">{} ago</span>', since, timesince(obj.failing_since))

    @admin.display(description="events")
    def events_column(self, obj: WebhookEndpoint) -> SafeString | str:
        if len(obj.events) <= EVENTS_COLUMN_TYPES:
            return events_label(obj.events)
        return format_html(
            '<span title="{}">{} types</span>', events_label(obj.events), len(obj.events)
        )

    @admin.display(description="signing secret")
    def secret_state(self, obj: WebhookEndpoint) -> SafeString:
        """Never the secret itself: it is shown once, on the page after creation or rotation."""
        expires = obj.previous_secret_expires_at
        overlap = ""
        if obj.previous_secret and expires is not None and expires > timezone.now():
            overlap = f"Until {moment_shown(expires)} the previous secret signs deliveries too."
        return format_html(
            "Shown only once, after the endpoint was created or the secret rotated: if it was "
            "lost, rotate it. {}",
            overlap,
        )

    def page_context(self, request: HttpRequest, obj: WebhookEndpoint | None) -> dict[str, Any]:
        if obj is None:
            return {}
        # Not selectors.deliveries_list: it loads every attempt and event body, for the API.
        rows = (
            obj.deliveries.select_related("event")
            .defer("event__body")
            .order_by("-created", "-id")[:RECENT_DELIVERIES]
        )
        deliveries = [
            {
                "delivery": d,
                "url": reverse("admin:webhooks_webhookdelivery_change", args=[d.pk]),
                "badge": status_badge(d.status),
                "error": short_error(d.last_error),
            }
            for d in rows
        ]
        query = urlencode({"endpoint__id__exact": obj.pk})
        return {
            "deliveries": deliveries,
            "deliveries_url": f"{reverse('admin:webhooks_webhookdelivery_changelist')}?{query}",
            "recent_limit": RECENT_DELIVERIES,
            "action_urls": {action: self.url(action, obj) for action in self.object_views()},
        }
