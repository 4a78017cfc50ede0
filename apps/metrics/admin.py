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
    TenantColumnMixin,
    TenantFilter,
    admin_links,
    html_table,
)
from apps.accounts.admin.config_pages import ConfigAdmin, Section
from apps.accounts.admin.declared import declared_form
from apps.accounts.admin.dependents import dependents
from apps.accounts.admin.forms import key_field
from apps.core.guards import Impact
from apps.metrics.choices import UnitType
from apps.metrics.configuration import metric_create, metric_delete, metric_update
from apps.metrics.domain import MetricSettings
from apps.metrics.models import Metric, MetricEvent, UndoneEvent
from apps.metrics.selectors import metric_deletion_impact
from apps.users.end_user_page import end_user_section
from apps.users.models import EndUser

# The end-user page shows this many of the user's latest events; the full history is one click
# away in the event list, which paginates.
RECENT_EVENTS = 10
# A one-line input as wide as the admin's own.
TEXT = forms.TextInput(attrs={"class": "vTextField"})


class MetricFilter(ScopedFilter):
    """The selected tenant's metrics; one query."""

    ordering = ("key",)

    def label(self, row: Metric) -> str:
        return f"{row.name} ({row.key})"


_Declared: Any = declared_form(
    MetricSettings,
    model=Metric,
    choices={"unit_type": UnitType.choices},
    widgets={"name": TEXT, "units": TEXT},
)


class MetricForm(_Declared):
    """A metric's settings as staff read them; API calls name a metric by its key, so the key
    is given once, when adding."""

    # The dashboard's wording of the key rule, which staff have always read here.
    key = key_field(100)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A metric always has a unit type (the API's default is a number): no empty choice.
        self.fields["unit_type"].required = True
        if self.instance is not None:
            del self.fields["key"]


@admin.register(Metric)
class MetricAdmin(TenantColumnMixin, ConfigAdmin):
    config_form = MetricForm
    list_display = ("key", "name", "unit_type", "units", "tenant_column", "created")
    list_select_related = (TENANT_RELATED,)
    list_filter = ("unit_type", ("tenant", TenantFilter))
    search_fields = ("key", "name")

    def form_sections(self, obj: Metric | None) -> list[Section]:
        if obj is None:
            return [(None, ["key", "name", "unit_type", "units"])]
        # The key is what API calls name, and events belong to the tenant: shown, not changed.
        return [
            (
                None,
                ["tenant_column", "key", "name", "unit_type", "units", "used_by", "public_id",
                 "created", "updated"],
            )
        ]  # fmt: skip

    def create(self, request: HttpRequest, form: MetricForm) -> Metric:
        return metric_create(form.valid_tenant, form.declared_settings())

    def update(self, request: HttpRequest, obj: Metric, form: MetricForm) -> None:
        metric_update(obj.tenant, obj, form.declared_settings())

    def remove(self, request: HttpRequest, obj: Metric) -> None:
        metric_delete(obj.tenant, obj, confirm=self.typed_key(request, obj))

    def deletion_impact(self, obj: Metric) -> Impact:
        return metric_deletion_impact(obj.tenant, obj)

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


def _undone(event: MetricEvent) -> str:
    """'undone' with the reason, for an event an administrator undid (apps/pipeline/undo.py)."""
    try:
        mark = event.undone
    except UndoneEvent.DoesNotExist:
        return ""
    return f"undone: {mark.reason}"


@end_user_section
@admin.display(description=f"latest {RECENT_EVENTS} events")
def end_user_recent_events(user: EndUser) -> SafeString:
    events = (
        MetricEvent.objects.filter(user=user)
        .select_related("metric", "undone")
        .order_by("-occurred_at", "-pk")[:RECENT_EVENTS]
    )
    table = html_table(
        ("occurred at", "metric", "value", "total after", "local date", "undone"),
        [
            (e.occurred_at, e.metric, e.value, e.total_after, e.local_date, _undone(e))
            for e in events
        ],
    )
    url = reverse("admin:metrics_metricevent_changelist") + "?" + urlencode({"user": user.pk})
    return format_html('{}<p><a href="{}">All events of this user</a></p>', table, url)
