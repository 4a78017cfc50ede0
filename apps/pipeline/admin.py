"""Dashboard page for events queued by the batch endpoint (read-only), and the end-user page's
cards and actions (dashboard_user), which need every feature app."""

import json
from typing import Any

from django.contrib import admin
from django.utils.html import format_html

from apps.accounts.admin.base import TENANT_RELATED, ReadOnlyAdmin, TenantColumnMixin, TenantFilter
from apps.pipeline import dashboard_user
from apps.pipeline.models import QueuedEvent

__all__ = ["QueuedEventAdmin", "dashboard_user"]


@admin.register(QueuedEvent)
class QueuedEventAdmin(TenantColumnMixin, ReadOnlyAdmin):
    """Rows are claimed and marked by the pipeline's batch worker; editing one by hand could
    process an event twice or never, so the dashboard only shows them."""

    list_display = (
        "batch_id",
        "seq",
        "status",
        "tenant_column",
        "accepted_at",
        "processed_at",
        "short_error",
    )
    list_select_related = (TENANT_RELATED,)
    list_filter = (
        "status",
        ("accepted_at", admin.DateFieldListFilter),
        ("tenant", TenantFilter),
    )
    # Newest first along the primary key index; rows are inserted in acceptance order.
    ordering = ("-pk",)
    show_full_result_count = False
    fields = (
        "tenant",
        "batch_id",
        "seq",
        "status",
        "accepted_at",
        "processed_at",
        "error",
        "payload_json",
    )
    readonly_fields = fields

    @admin.display(description="error")
    def short_error(self, obj: QueuedEvent) -> str:
        return obj.error if len(obj.error) <= 80 else f"{obj.error[:79]}…"

    @admin.display(description="payload")
    def payload_json(self, obj: QueuedEvent) -> Any:
        return format_html("<pre>{}</pre>", json.dumps(obj.payload, indent=2, sort_keys=True))
