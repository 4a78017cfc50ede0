"""The award ledger and the totals (read-only: only the pipeline writes them)."""

from decimal import Decimal, InvalidOperation
from typing import Any, cast

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.accounts.admin.base import (
    TENANT_RELATED,
    ReadOnlyAdmin,
    TenantColumnMixin,
    TenantFilter,
)
from apps.points.admin.part_pages import SystemFilter
from apps.points.choices import SystemStatus
from apps.points.models import PointsAward, PointsTotal
from apps.users.end_user_rows import EndUserRowsMixin


class LedgerColumnsMixin(EndUserRowsMixin):
    """Needs "user" and "system" in list_select_related, which the row's page loads too."""

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        related = cast(tuple[str, ...], self.list_select_related)
        return super().get_queryset(request).select_related(*related)

    @admin.display(description="Points system", ordering="system__name")
    def system_key(self, obj: Any) -> str:
        if obj.system.status == SystemStatus.ARCHIVED:
            return f"{obj.system} (archived)"
        return str(obj.system)


def _trigger_type(award: PointsAward) -> str:
    # The snapshot, not the trigger: a deleted trigger's awards keep what it was.
    return str((award.trigger_snapshot or {}).get("type", "-"))


def _multiplier(value: Any) -> str:
    # Multipliers are kept as JSON numbers: 2.0 reads as 2.
    try:
        return format(Decimal(str(value)).normalize(), "f")
    except InvalidOperation:
        return str(value)


def _boosts(award: PointsAward) -> str:
    return (
        ", ".join(f"{b.get('name')} x{_multiplier(b.get('multiplier'))}" for b in award.boosts)
        or "-"
    )


# An award in a few words: the list's columns, and the head of its page.
_AWARD_COLUMNS = (
    "user_link",
    "system_key",
    "awarded",
    "total_after",
    "trigger_type",
    "boosts_column",
)


@admin.register(PointsAward)
class PointsAwardAdmin(LedgerColumnsMixin, TenantColumnMixin, ReadOnlyAdmin):
    list_display = ("created", *_AWARD_COLUMNS, "tenant_column")
    list_select_related = ("user", "system", TENANT_RELATED)
    list_filter = (
        ("system", SystemFilter),
        ("created", admin.DateFieldListFilter),
        ("tenant", TenantFilter),
    )
    fields = (
        "public_id",
        "tenant_column",
        *_AWARD_COLUMNS,
        "created",
        "local_date",
        "dedupe_key",
        "trigger_snapshot",
    )
    readonly_fields = fields

    @admin.display(description="Trigger type")
    def trigger_type(self, obj: PointsAward) -> str:
        return _trigger_type(obj)

    @admin.display(description="Boosts")
    def boosts_column(self, obj: PointsAward) -> str:
        return _boosts(obj)


@admin.register(PointsTotal)
class PointsTotalAdmin(LedgerColumnsMixin, TenantColumnMixin, ReadOnlyAdmin):
    list_display = ("user_link", "system_key", "total", "level_column", "tenant_column")
    # The user column links to the end-user; the total opens the row.
    list_display_links = ("total",)
    list_select_related = ("user", "system", "level", TENANT_RELATED)
    list_filter = (("system", SystemFilter), ("tenant", TenantFilter))
    fields = (
        "tenant_column",
        "user_link",
        "system_key",
        "total",
        "level_column",
        "first_activity_at",
    )
    readonly_fields = fields

    @admin.display(description="Level", ordering="level__points")
    def level_column(self, obj: PointsTotal) -> str:
        return f"{obj.level.key} ({obj.level.name})" if obj.level is not None else "-"
