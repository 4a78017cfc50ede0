"""Dashboard pages for leaderboards: the boards (edited through leaderboard_save with the admin
API's validation; status changes, such as activating or scheduling, are the same `status` key),
and their entries and daily snapshots (read-only)."""

from typing import Any, cast

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.base import (
    TENANT_RELATED,
    ReadOnlyAdmin,
    ServiceAdmin,
    TenantColumnMixin,
    TenantFilter,
    tenant_label,
)
from apps.accounts.models import Tenant
from apps.leaderboards import services
from apps.leaderboards.choices import RankBy, RunUnit, Status
from apps.leaderboards.models import Leaderboard, LeaderboardEntry, LeaderboardSnapshot
from apps.leaderboards.serializers import (
    LeaderboardCreateSerializer,
    LeaderboardUpdateSerializer,
)
from apps.metrics.models import Metric
from apps.points.admin import AttributeFilterField, ConfigForm, _filters_text
from apps.points.choices import SystemStatus
from apps.points.models import PointsSystem
from apps.users.choices import AttributeType
from apps.users.selectors import attribute_definitions

BOARD_RELATED = f"leaderboard__{TENANT_RELATED}"

# Keys the service refuses to receive once a board is live, even unchanged: sent only when
# they differ from the stored board.
FROZEN_ONCE_LIVE = {"key": "key", "rankBy": "rank_by", "userAttributes": "user_attributes"}


def _board_label(board: Leaderboard) -> str:
    return f"{board.key} ({tenant_label(board.tenant)})"


def _owned_label(obj: Any) -> str:
    return f"{obj.key} ({tenant_label(obj.tenant)})"


class LeaderboardForm(ConfigForm):
    name = forms.CharField()
    key = forms.CharField(strip=False, help_text="Can change only while the board is inactive.")
    rank_by = forms.ChoiceField(choices=RankBy.choices, label="rank by")
    metric = forms.ModelChoiceField(queryset=Metric.objects.none(), required=False)
    points_system = forms.ModelChoiceField(queryset=PointsSystem.objects.none(), required=False)
    status = forms.ChoiceField(
        choices=Status.choices,
        initial=Status.INACTIVE,
        help_text="Active or scheduled: goes live (scheduled until its start date). Finished: "
        "only once the end date has passed. Inactive: back to editing; entries are kept.",
    )
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    max_participants = forms.IntegerField(initial=1000, label="max participants")
    start = forms.DateField(required=False, help_text="Empty: today.")
    end = forms.DateField(required=False, help_text="Inclusive. Empty: no end.")
    start_time = forms.TimeField(required=False, help_text="Daily window, user's local time.")
    end_time = forms.TimeField(required=False)
    run_unit = forms.TypedChoiceField(
        choices=[("", "---------"), *RunUnit.choices], required=False, empty_value=None
    )
    run_interval = forms.IntegerField(required=False, help_text="Empty with no unit: perpetual.")
    breakdown_attributes = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="User attribute keys, one per line: one ranking per combination of values.",
    )
    user_attributes = AttributeFilterField()

    create_serializer = LeaderboardCreateSerializer
    update_serializer = LeaderboardUpdateSerializer
    api_keys = {
        "name": "name",
        "key": "key",
        "rank_by": "rankBy",
        "metric": "metricId",
        "points_system": "pointsSystemId",
        "status": "status",
        "description": "description",
        "max_participants": "maxParticipants",
        "start": "start",
        "end": "end",
        "start_time": "startTime",
        "end_time": "endTime",
        "run_unit": "runUnit",
        "run_interval": "runInterval",
        "breakdown_attributes": "breakdownAttributes",
        "user_attributes": "userAttributes",
    }
    create_only = ()

    class Meta:
        model = Leaderboard
        fields = ("tenant",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        metrics = Metric.objects.select_related(TENANT_RELATED).order_by("tenant_id", "key")
        systems = PointsSystem.objects.filter(status=SystemStatus.ACTIVE).select_related(
            TENANT_RELATED
        )
        if self.instance.pk:
            metrics = metrics.filter(tenant=self.instance.tenant)
            systems = systems.filter(tenant=self.instance.tenant)
        for name, queryset in (("metric", metrics), ("points_system", systems)):
            field: Any = self.fields[name]
            field.queryset = queryset.order_by("tenant_id", "key")
            field.label_from_instance = _owned_label

    def config_tenant(self) -> Tenant | None:
        return self.instance.tenant if self.instance.pk else self.cleaned_data.get("tenant")

    def initial_from(self, obj: Leaderboard) -> dict[str, Any]:
        keys = {
            pid: key for (_, key), pid in attribute_definitions(obj.tenant).ids_by_type_key.items()
        }
        return {
            "name": obj.name,
            "key": obj.key,
            "rank_by": obj.rank_by,
            "metric": obj.metric_id,
            "points_system": obj.points_system_id,
            "status": obj.status,
            "description": obj.description or "",
            "max_participants": obj.max_participants,
            "start": obj.start,
            "end": obj.end,
            "start_time": obj.start_time,
            "end_time": obj.end_time,
            "run_unit": obj.run_unit,
            "run_interval": obj.run_interval,
            "breakdown_attributes": "\n".join(keys.get(a, a) for a in obj.breakdown_attributes),
            "user_attributes": _filters_text(obj.tenant, obj.user_attributes, AttributeType.USER),
        }

    def body(self, cleaned: dict[str, Any], tenant: Tenant) -> dict[str, Any]:
        body = super().body(cleaned, tenant)
        for name in ("metric", "points_system"):
            chosen = cleaned[name]
            if chosen is not None and chosen.tenant_id != tenant.pk:
                self.add_error(name, "belongs to another tenant than the leaderboard")
        for key in ("metricId", "pointsSystemId"):
            body[key] = str(body[key].public_id) if body[key] is not None else None
        body["description"] = body["description"] or None
        if body["start"] is None:
            body.pop("start")  # the service starts a new board today
        ids = attribute_definitions(tenant).ids_by_type_key
        breakdown = [k.strip() for k in cleaned["breakdown_attributes"].splitlines() if k.strip()]
        unknown = [k for k in breakdown if (AttributeType.USER, k) not in ids]
        if unknown:
            self.add_error(
                "breakdown_attributes", f"unknown user attribute keys: {', '.join(unknown)}"
            )
        body["breakdownAttributes"] = [
            ids[(AttributeType.USER, k)] for k in breakdown if k not in unknown
        ]
        body["userAttributes"] = self.attribute_refs("user_attributes", tenant, AttributeType.USER)
        board = self.instance
        if board.pk:
            for key, attr in FROZEN_ONCE_LIVE.items():
                if body[key] == getattr(board, attr):
                    del body[key]
            if body["status"] == board.status:
                # Unchanged: not a transition (an active board past its end is not refused).
                del body["status"]
        return body


class UserLinkMixin:
    """Needs "user" in list_select_related."""

    @admin.display(description="user", ordering="user__external_id")
    def user_link(self, obj: Any) -> SafeString:
        url = reverse("admin:users_enduser_change", args=[obj.user_id])
        return format_html('<a href="{}">{}</a>', url, obj.user.external_id)

    @admin.display(description="leaderboard", ordering="leaderboard__key")
    def board_column(self, obj: Any) -> str:
        return _board_label(obj.leaderboard)


class BoardFilter(admin.RelatedFieldListFilter):
    """Keys repeat across tenants, so each choice names its tenant; one query."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> list:
        boards = Leaderboard.objects.select_related(TENANT_RELATED).order_by("tenant_id", "key")
        return [(b.pk, _board_label(b)) for b in boards]


@admin.register(Leaderboard)
class LeaderboardAdmin(TenantColumnMixin, ServiceAdmin):
    form = LeaderboardForm
    list_display = (
        "key",
        "name",
        "rank_by",
        "ranked_on",
        "status",
        "start",
        "end",
        "runs",
        "tenant_column",
    )
    list_select_related = (TENANT_RELATED, "metric", "points_system")
    list_filter = ("status", "rank_by", ("tenant", TenantFilter))
    search_fields = ("key", "name")
    ordering = ("tenant_id", "key")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Leaderboard]:
        # Replaces list_select_related on the list (Django skips it once a queryset selects).
        return super().get_queryset(request).select_related(*self.list_select_related)

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[tuple[Any, Any]]:
        head = ("tenant",) if obj is None else ("tenant_column", "public_id", "created")
        return [
            (None, {"fields": (*head, "name", "key", "status", "description")}),
            ("Ranking", {"fields": ("rank_by", "metric", "points_system", "max_participants")}),
            ("Dates", {"fields": ("start", "end", "start_time", "end_time")}),
            ("Runs", {"fields": ("run_unit", "run_interval")}),
            ("Participants", {"fields": ("breakdown_attributes", "user_attributes")}),
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return () if obj is None else ("tenant_column", "public_id", "created")

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        # Only the tenant is the row's; the rest is the API body for the service.
        kwargs["fields"] = ("tenant",) if obj is None else ()
        return super().get_form(request, obj, change, **kwargs)

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> Leaderboard:
        return services.leaderboard_save(form.cleaned_data["tenant"], None, _api_data(form))

    def service_update(
        self, request: HttpRequest, current: Leaderboard, form: forms.ModelForm
    ) -> None:
        services.leaderboard_save(current.tenant, current, _api_data(form))

    def service_delete(self, request: HttpRequest, obj: Leaderboard) -> None:
        services.leaderboard_delete(obj.tenant, obj)

    def deletion_counts(self, objs: list[Any]) -> dict[str, int]:
        return {
            "entries": LeaderboardEntry.objects.filter(leaderboard__in=objs).count(),
            "snapshots": LeaderboardSnapshot.objects.filter(leaderboard__in=objs).count(),
        }

    @admin.display(description="ranked on")
    def ranked_on(self, obj: Leaderboard) -> str:
        if obj.rank_by == RankBy.METRIC and obj.metric is not None:
            return f"metric {obj.metric.key}"
        if obj.rank_by == RankBy.POINTS and obj.points_system is not None:
            return f"points {obj.points_system.key}"
        return str(obj.rank_by)

    @admin.display(description="runs")
    def runs(self, obj: Leaderboard) -> str:
        return f"every {obj.run_interval} {obj.run_unit}" if obj.run_unit else "perpetual"


def _api_data(form: forms.ModelForm) -> dict[str, Any]:
    return cast(LeaderboardForm, form).api_data


@admin.register(LeaderboardEntry)
class LeaderboardEntryAdmin(UserLinkMixin, ReadOnlyAdmin):
    tenant_lookup = "leaderboard__tenant"
    list_display = ("board_column", "run_start", "group", "user_link", "value", "reached_at")
    list_display_links = ("value",)
    list_select_related = (BOARD_RELATED, "user")
    list_filter = (("leaderboard", BoardFilter), "run_start")
    search_fields = ("=user__external_id",)
    search_help_text = "Search by exact end-user id."
    # Rank order within each run and group (the rank index).
    ordering = ("leaderboard_id", "-run_start", "group", "-value", "reached_at")
    show_full_result_count = False
    fields = ("board_column", "run_start", "group", "user_link", "value", "reached_at")
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[LeaderboardEntry]:
        return super().get_queryset(request).select_related(BOARD_RELATED, "user")


@admin.register(LeaderboardSnapshot)
class LeaderboardSnapshotAdmin(UserLinkMixin, ReadOnlyAdmin):
    tenant_lookup = "leaderboard__tenant"
    list_display = ("board_column", "run_start", "user_link", "date", "rank", "value")
    list_display_links = ("date",)
    list_select_related = (BOARD_RELATED, "user")
    list_filter = (("leaderboard", BoardFilter), "date")
    search_fields = ("=user__external_id",)
    search_help_text = "Search by exact end-user id."
    ordering = ("-pk",)
    show_full_result_count = False
    fields = ("board_column", "run_start", "user_link", "date", "rank", "value")
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[LeaderboardSnapshot]:
        return super().get_queryset(request).select_related(BOARD_RELATED, "user")
