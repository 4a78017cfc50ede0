"""The webhook delivery log: read-only, every attempt and the body sent, and redelivery."""

import json
from typing import Any, cast

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_permission_codename
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from apps.accounts.admin.base import (
    TENANT_RELATED,
    ReadOnlyAdmin,
    ScopedFilter,
    TenantColumnMixin,
    TenantFilter,
    tenant_label,
)
from apps.core.api.params import is_uuid
from apps.core.errors import ApplicationError
from apps.core.shown_time import moment_shown
from apps.webhooks.admin.display import short_error, status_badge, url_label
from apps.webhooks.choices import DeliveryStatus, EventType
from apps.webhooks.delivery import delivery_redeliver
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint


class EventTypeFilter(admin.SimpleListFilter):
    """The 18 types, without Django's default of a DISTINCT over the whole log."""

    title = "event type"
    parameter_name = "event__type"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(t.value, t.value) for t in EventType]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        return queryset.filter(event__type=value) if value else queryset


class EndpointFilter(ScopedFilter):
    """The selected tenant's endpoints, named with their tenant (URLs repeat across tenants)."""

    ordering = ("created", "id")
    related = (TENANT_RELATED,)

    def label(self, row: WebhookEndpoint) -> str:
        return f"{Truncator(row.url).chars(60)} ({tenant_label(row.tenant)})"


def _endpoint_url(obj: WebhookDelivery) -> str:
    return reverse("admin:webhooks_webhookendpoint_change", args=[obj.endpoint_id])


def _pretty_json(body: str) -> str:
    try:
        return json.dumps(json.loads(body), indent=2, ensure_ascii=False)
    except ValueError:
        return body


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(TenantColumnMixin, ReadOnlyAdmin):
    # Few columns, so that the log fits a laptop screen; the detail page has every field. The
    # tenant is the endpoint's (and a filter), not a column.
    list_display = (
        "time_column",
        "event_type",
        "result_column",
        "attempts",
        "error_column",
        "endpoint_column",
    )
    list_display_links = ("time_column",)
    list_select_related = ("event", "endpoint", TENANT_RELATED)
    list_filter = (
        "status",
        EventTypeFilter,
        ("endpoint", EndpointFilter),
        ("tenant", TenantFilter),
    )
    search_fields = ("=public_id",)  # see get_search_results
    search_help_text = "Search by webhook-id (the delivery's id) or event id."
    # The (endpoint, created) index serves one endpoint's log; `created` alone the whole log.
    ordering = ("-created", "-id")
    show_full_result_count = False
    fields = readonly_fields = (
        "webhook_id",
        "endpoint_link",
        "tenant_column",
        "event_type",
        "event_id",
        "status_column",
        "attempts",
        "next_attempt_at",
        "last_status_code",
        "last_error",
        "delivered_at",
        "created",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[WebhookDelivery]:
        # Bodies can be large and only the detail page shows one (loaded there on access).
        return (
            super()
            .get_queryset(request)
            .select_related("event", "endpoint", TENANT_RELATED)
            .defer("event__body")
        )

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        # Ids are UUIDs: anything else matches nothing, instead of a scan with a text cast.
        term = search_term.strip()
        if not term:
            return queryset, False
        if not is_uuid(term):
            return queryset.none(), False
        return queryset.filter(Q(public_id=term) | Q(event__public_id=term)), False

    @admin.display(description="webhook-id")
    def webhook_id(self, obj: WebhookDelivery) -> str:
        return str(obj.public_id)

    @admin.display(description="event type", ordering="event__type")
    def event_type(self, obj: WebhookDelivery) -> str:
        return obj.event.type

    @admin.display(description="event id")
    def event_id(self, obj: WebhookDelivery) -> str:
        return str(obj.event.public_id)

    @admin.display(description="status", ordering="status")
    def status_column(self, obj: WebhookDelivery) -> SafeString:
        return status_badge(obj.status)

    @admin.display(description="status", ordering="status")
    def result_column(self, obj: WebhookDelivery) -> SafeString:
        """The status, then the last HTTP status code."""
        if obj.last_status_code is None:
            return status_badge(obj.status)
        return format_html(
            '<span class="webhook-nowrap">{} <span class="webhook-quiet">{}</span></span>',
            status_badge(obj.status),
            obj.last_status_code,
        )

    @admin.display(description="time", ordering="created")
    def time_column(self, obj: WebhookDelivery) -> SafeString:
        return format_html('<span class="webhook-nowrap">{}</span>', moment_shown(obj.created))

    @admin.display(description="error")
    def error_column(self, obj: WebhookDelivery) -> SafeString | str:
        return short_error(obj.last_error)

    @admin.display(description="endpoint", ordering="endpoint__url")
    def endpoint_column(self, obj: WebhookDelivery) -> SafeString:
        label = url_label(obj.endpoint.url, 50, scheme=False)
        return format_html(
            '<a href="{}" title="{}">{}</a>', _endpoint_url(obj), obj.endpoint.url, label
        )

    @admin.display(description="endpoint")
    def endpoint_link(self, obj: WebhookDelivery) -> SafeString:
        return format_html('<a href="{}">{}</a>', _endpoint_url(obj), obj.endpoint.url)

    def form_page_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        if obj is None:
            return {}
        return {
            "attempts_log": list(obj.log.order_by("created", "id")),
            # The model's str() is made of primary keys; this names the delivery for people.
            "subtitle": f"{obj.event.type} to {obj.endpoint.url}",
            "event_body": _pretty_json(obj.event.body),
            "can_redeliver": self.has_redeliver_permission(request),
            "redeliver_url": self._redeliver_url(obj),
        }

    # --- redelivery ----------------------------------------------------------------------------

    def has_redeliver_permission(self, request: HttpRequest) -> bool:
        """The log is read-only; sending again is managing the endpoint."""
        opts = WebhookEndpoint._meta
        codename = get_permission_codename("change", opts)
        return request.user.has_perm(f"{opts.app_label}.{codename}")

    def get_urls(self) -> list[URLPattern]:
        name = f"{self.opts.app_label}_{self.opts.model_name}"
        view = self.admin_site.admin_view(self.redeliver_view)
        # Before Django's own: its "<object_id>/" catch-all would swallow it.
        return [
            path("<path:object_id>/redeliver/", view, name=f"{name}_redeliver"),
            *super().get_urls(),
        ]

    def _redeliver_url(self, obj: WebhookDelivery) -> str:
        return reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_redeliver",
            args=[obj.pk],
            current_app=self.admin_site.name,
        )

    def redeliver_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        found = self.get_object(request, unquote(object_id))
        if found is None:
            raise Http404("No such webhook delivery")
        obj = cast(WebhookDelivery, found)
        if not (self.has_view_permission(request, obj) and self.has_redeliver_permission(request)):
            raise PermissionDenied
        back = HttpResponseRedirect(reverse("admin:webhooks_webhookdelivery_change", args=[obj.pk]))
        if obj.status == DeliveryStatus.DELIVERING:
            self.message_user(
                request, "This delivery is being sent right now: nothing to do.", messages.INFO
            )
            return back
        if request.method != "POST":
            context = {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "original": obj,
                "change_url": back.url,
                "title": "Redeliver?",
                "action": "redeliver",
            }
            return TemplateResponse(request, "admin/webhooks/confirm.html", context)
        try:
            with transaction.atomic():
                delivery_redeliver(obj)
        except ApplicationError as refused:
            self.message_user(request, refused.message, messages.ERROR)
            return back
        self.message_user(
            request,
            "The delivery is pending again: the next dispatch (every minute) sends it, with the "
            "same webhook-id.",
            messages.SUCCESS,
        )
        return back
