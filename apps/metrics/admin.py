"""Dashboard pages for metric definitions (editable) and recorded events (read-only), and the
metric sections of the end-user page."""

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from apps.accounts.admin.base import (
    TENANT_RELATED,
    ReadOnlyAdmin,
    ScopedFilter,
    ServiceAdmin,
    TenantColumnMixin,
    TenantFilter,
    admin_links,
    dependents,
    html_table,
    key_field,
)
from apps.metrics.configuration import metric_create, metric_delete, metric_update
from apps.metrics.models import Metric, MetricEvent
from apps.users.end_user_page import end_user_section
from apps.users.models import EndUser

# The end-user page shows this many of the user's latest events; the full history is one click
# away in the event list, which paginates.
RECENT_EVENTS = 10


class MetricFilter(ScopedFilter):
    """The selected tenant's metrics; one query."""

    ordering = ("key",)

    def label(self, row: Metric) -> str:
        return f"{row.name} ({row.key})"


class MetricForm(forms.ModelForm):
    key = key_field(100)

    class Meta:
        model = Metric
        fields = ("tenant", "key", "name", "unit_type", "units")


@admin.register(Metric)
class MetricAdmin(TenantColumnMixin, ServiceAdmin):
    form = MetricForm
    list_display = ("key", "name", "unit_type", "units", "tenant_column", "created")
    list_select_related = (TENANT_RELATED,)
    list_filter = ("unit_type", ("tenant", TenantFilter))
    search_fields = ("key", "name")

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        if obj is None:
            return MetricForm.Meta.fields
        return (*MetricForm.Meta.fields, "used_by", "public_id", "created", "updated")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        # API calls name a metric by its key, and its events belong to its tenant.
        if obj is None:
            return ()
        return ("tenant", "key", "used_by", "public_id", "created", "updated")

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> Metric:
        data = form.cleaned_data
        return metric_create(
            data["tenant"],
            name=data["name"],
            key=data["key"],
            unit_type=data["unit_type"],
            units=data["units"],
        )

    def service_update(self, request: HttpRequest, current: Metric, form: forms.ModelForm) -> None:
        data = form.cleaned_data
        metric_update(
            current.tenant,
            current,
            name=data["name"],
            unit_type=data["unit_type"],
            units=data["units"],
        )

    def service_delete(self, request: HttpRequest, obj: Metric) -> None:
        metric_delete(obj.tenant, obj)

    @admin.display(description="Used by")
    def used_by(self, obj: Metric) -> SafeString:
        """The configuration that counts this metric: achievements, leaderboards, points
        triggers, streak conditions (deleting the metric deletes them)."""
        rows = [
            format_html("{}: {}", dependent.label.capitalize(), admin_links(dependent.named))
            for dependent in dependents([obj])
            if dependent.named
        ]
        if not rows:
            return format_html("{}", "Nothing yet")
        return format_html_join(mark_safe("<br>"), "{}", ((row,) for row in rows))


@admin.register(MetricEvent)
class MetricEventAdmin(TenantColumnMixin, ReadOnlyAdmin):
    list_display = (
        "occurred_at",
        "user",
        "metric",
        "value",
        "total_after",
        "local_date",
        "tenant_column",
    )
    list_select_related = ("user", "metric", TENANT_RELATED)
    list_filter = (
        ("metric", MetricFilter),
        ("occurred_at", admin.DateFieldListFilter),
        ("tenant", TenantFilter),
    )
    search_fields = ("=user__external_id", "=idempotency_key")
    search_help_text = "Search by exact end-user id or idempotency key."
    # Events are inserted as they are processed, so the primary key follows time and its index
    # serves the newest-first list without sorting the whole table.
    ordering = ("-pk",)
    show_full_result_count = False
    fields = (
        "public_id",
        "tenant",
        "user",
        "metric",
        "value",
        "total_after",
        "occurred_at",
        "local_date",
        "idempotency_key",
        "attributes",
    )
    readonly_fields = fields


@end_user_section
@admin.display(description=f"latest {RECENT_EVENTS} events")
def end_user_recent_events(user: EndUser) -> SafeString:
    events = (
        MetricEvent.objects.filter(user=user)
        .select_related("metric")
        .order_by("-occurred_at", "-pk")[:RECENT_EVENTS]
    )
    table = html_table(
        ("occurred at", "metric", "value", "total after", "local date"),
        [(e.occurred_at, e.metric.key, e.value, e.total_after, e.local_date) for e in events],
    )
    url = reverse("admin:metrics_metricevent_changelist") + "?" + urlencode({"user": user.pk})
    return format_html('{}<p><a href="{}">All events of this user</a></p>', table, url)
