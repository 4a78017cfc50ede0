"""Dashboard page for webhook endpoints: written by the endpoint services, its signing secret shown
once on a page of its own, and the endpoint's actions (rotate, test, redeliver, re-enable)."""

from typing import Any, cast
from urllib.parse import urlencode

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator
from django.utils.timesince import timesince

from apps.accounts.admin.base import TENANT_RELATED, ServiceAdmin, TenantColumnMixin, TenantFilter
from apps.webhooks import services
from apps.webhooks.admin.display import (
    EVENT_TYPE_GROUPS,
    events_label,
    short_error,
    status_badge,
    url_label,
)
from apps.webhooks.admin.endpoint_actions import EndpointActions
from apps.webhooks.admin.secret_once import secret_keep
from apps.webhooks.choices import EndpointStatus
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint

# The change page lists this many of the endpoint's latest deliveries; the delivery log has all.
RECENT_DELIVERIES = 50
# The list names up to this many subscribed types; more become "N types" with a tooltip.
EVENTS_COLUMN_TYPES = 3
_EDITABLE = ("url", "description", "status", "events")


class WebhookEndpointForm(forms.ModelForm):
    events = forms.MultipleChoiceField(
        choices=EVENT_TYPE_GROUPS,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Event types",
        help_text="None checked: every event type, including types added later.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = ("tenant", *_EDITABLE)
        widgets = {
            "url": forms.TextInput(
                attrs={
                    "class": "vURLField",
                    "placeholder": "https://example.com/webhooks/gamify",
                    "spellcheck": "false",
                }
            ),
            "description": forms.TextInput(attrs={"class": "vLargeTextField"}),
        }
        labels = {"url": "URL"}
        help_texts = {
            "url": "https, reaching a public address: deliveries to private networks are refused.",
            "status": "A disabled endpoint receives nothing; gamify disables an endpoint that "
            "answers 410 or fails for 5 days.",
        }


def _with_url_errors(form: type[forms.ModelForm]) -> type[forms.ModelForm]:
    """ServiceAdmin shows a refusal above the form; the services name the URL ("url: ...") when
    they refuse it, so that error goes next to the URL input instead."""

    class UrlErrorForm(form):  # type: ignore[valid-type,misc]
        def clean(self) -> dict[str, Any]:
            try:
                return cast(dict[str, Any], super().clean())
            except forms.ValidationError as exc:
                message = exc.messages[0] if len(exc.messages) == 1 else ""
                if not message.startswith("url: ") or "url" not in self.fields:
                    raise
                self.add_error("url", message.removeprefix("url: "))
                return self.cleaned_data

    return UrlErrorForm


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(TenantColumnMixin, EndpointActions, ServiceAdmin):
    form = WebhookEndpointForm
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

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[tuple[Any, Any]]:
        events = ("Events", {"fields": ("events",)})
        if obj is None:
            return [(None, {"fields": ("tenant", "url", "description", "status")}), events]
        # A disabled endpoint's reason is a banner above the form (change_form.html).
        return [
            (None, {"fields": ("tenant_column", "url", "description", "status")}),
            events,
            ("Delivery", {"fields": ("failing_since", "secret_state", "public_id", "created")}),
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        if obj is None:
            return ()
        return ("tenant_column", "failing_since", "secret_state", "public_id", "created")

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        return _with_url_errors(super().get_form(request, obj, change, **kwargs))

    # --- writes --------------------------------------------------------------------------------

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> WebhookEndpoint:
        data = form.cleaned_data
        endpoint, secret = services.webhook_endpoint_create(
            data["tenant"],
            url=data["url"],
            description=data["description"],
            events=data["events"],
            status=data["status"],
        )
        secret_keep(request, endpoint, secret, rotated=False)
        return endpoint

    def service_update(
        self, request: HttpRequest, current: WebhookEndpoint, form: forms.ModelForm
    ) -> None:
        # Only what changed: passing the URL checks it again (a DNS lookup that may now fail),
        # and passing status "active" clears `failing_since`.
        changes = {name: form.cleaned_data[name] for name in _EDITABLE if name in form.changed_data}
        if changes:
            services.webhook_endpoint_update(current, **changes)

    def service_delete(self, request: HttpRequest, obj: WebhookEndpoint) -> None:
        services.webhook_endpoint_delete(obj)

    def deletion_counts(self, objs: list[Any]) -> dict[str, int]:
        deliveries = WebhookDelivery.objects.filter(endpoint__in=objs).count()
        return {str(WebhookDelivery._meta.verbose_name_plural): deliveries}

    def after_add_url(self, obj: Any) -> str:
        return self._url("secret", obj)

    # --- columns and read-only fields ----------------------------------------------------------

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
        since = date_format(timezone.localtime(obj.failing_since), "DATETIME_FORMAT")
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
            overlap = "Until {} the previous secret signs deliveries too.".format(
                date_format(timezone.localtime(expires), "DATETIME_FORMAT")
            )
        return format_html(
            "Shown only once, after the endpoint was created or the secret rotated: if it was "
            "lost, rotate it. {}",
            overlap,
        )

    def form_page_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        if obj is None:
            return {}
        return {
            "deliveries": _recent_deliveries(obj),
            "deliveries_url": _deliveries_url(obj),
            "recent_limit": RECENT_DELIVERIES,
            "action_urls": {
                action: self._url(action, obj)
                for action in ("rotate_secret", "send_test", "redeliver_failed", "enable")
            },
        }


def _recent_deliveries(endpoint: WebhookEndpoint) -> list[dict[str, Any]]:
    # Not selectors.deliveries_list: it loads every attempt and event body, for the API.
    rows = (
        endpoint.deliveries.select_related("event")
        .defer("event__body")
        .order_by("-created", "-id")[:RECENT_DELIVERIES]
    )
    return [
        {
            "delivery": d,
            "url": reverse("admin:webhooks_webhookdelivery_change", args=[d.pk]),
            "badge": status_badge(d.status),
            "error": short_error(d.last_error),
        }
        for d in rows
    ]


def _deliveries_url(endpoint: WebhookEndpoint) -> str:
    query = urlencode({"endpoint__id__exact": endpoint.pk})
    return f"{reverse('admin:webhooks_webhookdelivery_changelist')}?{query}"
