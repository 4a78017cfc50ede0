"""Dashboard pages for streaks: each tenant's settings (editable through the settings service,
with the admin API's validation), users' streak state, periods and pauses (read-only, with
actions that call the streak services), and the streak section of the end-user page."""

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any, cast
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.forms.models import ModelChoiceField
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.base import (
    TENANT_RELATED,
    ReadOnlyAdmin,
    ServiceAdmin,
    TenantColumnMixin,
    TenantFilter,
)
from apps.accounts.models import Tenant
from apps.core.errors import ApplicationError, ValidationError
from apps.streaks import services
from apps.streaks.choices import EvaluationMode, Frequency, PauseStatus
from apps.streaks.models import (
    StreakCondition,
    StreakPause,
    StreakPeriod,
    StreakSettings,
    StreakState,
)
from apps.streaks.selectors import (
    StreakConfig,
    streak_config,
    streak_history,
    streak_state_get,
    streak_view,
)
from apps.streaks.serializers import StreakSettingsUpdateSerializer
from apps.users.admin import end_user_section, html_table
from apps.users.models import EndUser

# The end-user page shows this many periods; the period list has the rest.
RECENT_PERIODS = 10

DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")

# Form fields named after the settings they edit, and the admin API key each one is sent as.
API_KEYS = {
    "frequency": "frequency",
    "evaluation_mode": "evaluationMode",
    "customization_enabled": "customizationEnabled",
    "days_off": "daysOff",
}
FREEZE_KEYS = {
    "freeze_start_count": "startCount",
    "freeze_max_count": "maxCount",
    "freeze_auto_earn_interval": "autoEarnInterval",
    "freeze_auto_earn_amount": "autoEarnAmount",
}


def _number(value: Decimal) -> str:
    # Thresholds are stored with 6 decimal places and set as whole numbers: 500, not 500.000000.
    return format(value.normalize(), "f")


def _error_paths(detail: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    """DRF's nested error detail as (path, message) pairs: ("freezes", "maxCount"), "..."."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            yield from _error_paths(value, (*path, key))
    elif isinstance(detail, list):
        for index, value in enumerate(detail):
            nested = isinstance(value, dict | list)
            yield from _error_paths(value, (*path, index) if nested else path)
    else:
        yield path, str(detail)


class StreakSettingsForm(forms.ModelForm):
    """The body of PATCH /admin/v1/streaks/settings as a form. Only `tenant` is a model field
    (see StreakSettingsAdmin.get_form): the settings are validated by the API's serializer and
    written by streak_settings_update, never copied onto the row by the form."""

    frequency = forms.ChoiceField(choices=Frequency.choices)
    evaluation_mode = forms.ChoiceField(
        choices=EvaluationMode.choices,
        help_text="AND: every condition must be met in a period; OR: any one of them.",
    )
    customization_enabled = forms.BooleanField(
        required=False, help_text="Users may set their own conditions and days off."
    )
    days_off = forms.TypedMultipleChoiceField(
        choices=list(enumerate(DAY_NAMES)),
        coerce=int,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Daily streaks only: uncheck every day before switching to weekly or monthly.",
    )
    conditions = forms.CharField(
        required=False,
        help_text="Metric keys with the whole-number change required per period, e.g. "
        "“words:500, logins:1”. Empty: no conditions, so nobody extends a streak.",
    )
    freezes_enabled = forms.BooleanField(required=False)
    # Unbounded here: the serializer's limits are the rule, and its messages name them.
    freeze_start_count = forms.IntegerField(required=False, label="Start count")
    freeze_max_count = forms.IntegerField(required=False, label="Max count")
    freeze_auto_earn_interval = forms.IntegerField(
        required=False, label="Auto-earn interval", help_text="Days; empty: no auto-earn."
    )
    freeze_auto_earn_amount = forms.IntegerField(required=False, label="Auto-earn amount")

    class Meta:
        model = StreakSettings
        fields = ("tenant",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Read through the selector so the form shows what the pipeline uses.
        config = streak_config(self.instance.tenant) if self.instance.pk else StreakConfig()
        self.initial = {**self.initial_from(config), **self.initial}
        self.api_data: dict[str, Any] = {}

    @staticmethod
    def initial_from(config: StreakConfig) -> dict[str, Any]:
        conditions = sorted(
            f"{config.metric_keys[pk]}:{_number(threshold)}"
            for pk, threshold in config.thresholds.items()
        )
        return {
            "frequency": config.frequency,
            "evaluation_mode": config.mode,
            "customization_enabled": config.customization_enabled,
            "days_off": sorted(config.days_off),
            "conditions": ", ".join(conditions),
            "freezes_enabled": config.freezes_enabled,
            "freeze_start_count": config.freeze_start_count,
            "freeze_max_count": config.freeze_max_count,
            "freeze_auto_earn_interval": config.freeze_auto_earn_interval,
            "freeze_auto_earn_amount": config.freeze_auto_earn_amount,
        }

    def clean_conditions(self) -> list[dict[str, str]]:
        metrics = []
        for item in self.cleaned_data["conditions"].split(","):
            if not item.strip():
                continue
            key, sep, threshold = item.partition(":")
            if not sep or ":" in threshold:
                raise forms.ValidationError(
                    f"“{item.strip()}”: write each condition as key:threshold"
                )
            metrics.append({"key": key.strip(), "threshold": threshold.strip()})
        return metrics

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if self.errors:
            return cleaned
        # Every key is sent: the form shows the whole configuration, so saving it sets it all.
        body: dict[str, Any] = {key: cleaned[name] for name, key in API_KEYS.items()}
        body["metrics"] = cleaned["conditions"]
        freezes = {key: cleaned[name] for name, key in FREEZE_KEYS.items()}
        # Counts left empty are omitted, so the serializer says which one it requires.
        body["freezes"] = (
            {key: value for key, value in freezes.items() if value is not None}
            if cleaned["freezes_enabled"]
            else None
        )
        serializer = StreakSettingsUpdateSerializer(data=body)
        if serializer.is_valid():
            self.api_data = dict(serializer.validated_data)
        else:
            for path, message in _error_paths(serializer.errors):
                self.add_error(*self._form_error(path, message, body["metrics"]))
        return cleaned

    @staticmethod
    def _form_error(
        path: tuple[Any, ...], message: str, metrics: list[dict[str, str]]
    ) -> tuple[str | None, str]:
        """The form field that shows a serializer error at `path` (None: the whole form)."""
        head: Any = path[0] if path else None
        sub: Any = path[1] if len(path) > 1 else None
        if head == "metrics":
            if isinstance(sub, int):
                return "conditions", f"{metrics[sub]['key']}: {message}"
            return "conditions", message
        if head == "freezes":
            fields = {key: name for name, key in FREEZE_KEYS.items()}
            return fields.get(sub, "freezes_enabled"), message
        fields = {key: name for name, key in API_KEYS.items()}
        return fields.get(head), message


@admin.register(StreakSettings)
class StreakSettingsAdmin(TenantColumnMixin, ServiceAdmin):
    form = StreakSettingsForm
    list_display = (
        "tenant_column",
        "frequency",
        "evaluation_mode",
        "customization_enabled",
        "days_off_column",
        "conditions_column",
        "freezes_column",
        "updated",
    )
    list_select_related = (TENANT_RELATED,)
    list_filter = ("frequency", ("tenant", TenantFilter))

    def get_queryset(self, request: HttpRequest) -> QuerySet[StreakSettings]:
        # The change page's title and tenant label read the tenant's environment too.
        return super().get_queryset(request).select_related(TENANT_RELATED)

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[tuple[Any, Any]]:
        head = ("tenant",) if obj is None else ("tenant_column", "updated")
        return [
            (None, {"fields": head}),
            (
                "Streak",
                {
                    "fields": (
                        "frequency",
                        "evaluation_mode",
                        "customization_enabled",
                        "days_off",
                        "conditions",
                    )
                },
            ),
            ("Freezes", {"fields": ("freezes_enabled", *FREEZE_KEYS)}),
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        # Settings belong to their tenant for good; another tenant gets its own row.
        return () if obj is None else ("tenant_column", "updated")

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        # The admin would make every field of the fieldsets a model field of the form, which
        # then copies them onto the row and checks the row's constraints with the model's
        # messages. Only the tenant is the row's; the rest is the API body for the service.
        kwargs["fields"] = ("tenant",) if obj is None else ()
        return super().get_form(request, obj, change, **kwargs)

    def formfield_for_foreignkey(
        self, db_field: Any, request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField | None:
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if field is not None and field.queryset is not None and db_field.name == "tenant":
            # A tenant has one settings row; a configured tenant is edited, not added again.
            field.queryset = field.queryset.filter(streak_settings__isnull=True)
        return field

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # No service deletes settings: a tenant turns streaks off by clearing the conditions.
        return False

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> StreakSettings:
        tenant = form.cleaned_data["tenant"]
        services.streak_settings_update(tenant, cast(StreakSettingsForm, form).api_data)
        return StreakSettings.objects.get(tenant=tenant)

    def service_update(
        self, request: HttpRequest, current: StreakSettings, form: forms.ModelForm
    ) -> None:
        services.streak_settings_update(current.tenant, cast(StreakSettingsForm, form).api_data)

    def get_changelist_instance(self, request: HttpRequest) -> Any:
        changelist = super().get_changelist_instance(request)
        # Conditions hang off the tenant, not the settings row, so they cannot be prefetched:
        # one query loads those of the whole page.
        rows: list[Any] = list(changelist.result_list)
        conditions = (
            StreakCondition.objects.filter(tenant_id__in=[row.tenant_id for row in rows])
            .select_related("metric")
            .order_by("metric__key")
        )
        by_tenant: dict[int, list[str]] = defaultdict(list)
        for condition in conditions:
            by_tenant[condition.tenant_id].append(
                f"{condition.metric.key}:{_number(condition.threshold)}"
            )
        for row in rows:
            row.condition_labels = by_tenant[row.tenant_id]
        return changelist

    @admin.display(description="conditions")
    def conditions_column(self, obj: Any) -> str:
        return ", ".join(getattr(obj, "condition_labels", ())) or "-"

    @admin.display(description="days off")
    def days_off_column(self, obj: StreakSettings) -> str:
        return ", ".join(DAY_NAMES[day][:3] for day in obj.days_off) or "-"

    @admin.display(description="freezes")
    def freezes_column(self, obj: StreakSettings) -> str:
        if not obj.freezes_enabled:
            return "off"
        label = f"start {obj.freeze_start_count}, max {obj.freeze_max_count}"
        if obj.freeze_auto_earn_interval:
            label += f", +{obj.freeze_auto_earn_amount} every {obj.freeze_auto_earn_interval} d"
        return label


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


class UserLinkMixin:
    """Needs "user" in list_select_related."""

    @admin.display(description="user", ordering="user__external_id")
    def user_link(self, obj: Any) -> str:
        url = reverse("admin:users_enduser_change", args=[obj.user_id])
        return format_html('<a href="{}">{}</a>', url, obj.user.external_id)


class StreakActionsMixin:
    """Actions on read-only pages call the streak services; running them takes the change
    permission of the page's model, although no field is ever edited by hand."""

    opts: Any

    def has_manage_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(f"{self.opts.app_label}.change_{self.opts.model_name}")


def _per_user(
    queryset: QuerySet[StreakState], act: Callable[[Tenant, EndUser], bool]
) -> tuple[int, int, Counter[str]]:
    """Run `act` for each selected streak's user: (done, declined, refusals by message)."""
    done = declined = 0
    refusals: Counter[str] = Counter()
    for state in queryset.select_related("tenant", "user").order_by("pk"):
        try:
            # One transaction per user: the services lock the user's row, which needs one, and
            # a refusal for one user keeps what was done for the others.
            with transaction.atomic():
                if act(state.tenant, state.user):
                    done += 1
                else:
                    declined += 1
        except ApplicationError as exc:
            refusals[exc.message] += 1
    return done, declined, refusals


@admin.register(StreakState)
class StreakStateAdmin(StreakActionsMixin, UserLinkMixin, TenantColumnMixin, ReadOnlyAdmin):
    list_display = (
        "user_link",
        "length",
        "started",
        "settled_through",
        "freezes",
        "due_at",
        "frequency",
        "enabled",
        "tenant_column",
    )
    list_select_related = ("user", TENANT_RELATED)
    list_filter = ("frequency", "enabled", ("tenant", TenantFilter))
    search_fields = ("=user__external_id",)
    search_help_text = (
        "Search by exact end-user id. Lengths are as stored: a missed period counts once the "
        "freeze job settles it at the due time, or when the user's streak is next read."
    )
    ordering = ("-pk",)
    show_full_result_count = False
    actions = ("reset_streaks", "restore_streaks", "grant_freeze")
    fields = (
        "tenant",
        "user",
        "frequency",
        "length",
        "started",
        "settled_through",
        "extended_at",
        "tz",
        "due_at",
        "freezes",
        "freezes_earned_on",
        "enabled",
        "pref_mode",
        "pref_thresholds",
        "pref_days_off",
        "updated",
    )
    readonly_fields = fields

    def _report(
        self, request: HttpRequest, done: str, declined: str | None, refusals: Counter[str]
    ) -> None:
        """`declined`: the message for users the service declined (None when there were none)."""
        self.message_user(request, done, messages.SUCCESS)
        if declined:
            self.message_user(request, declined, messages.WARNING)
        for message, count in sorted(refusals.items()):
            self.message_user(request, f"{message} ({_plural(count, 'user')})", messages.ERROR)

    @admin.action(description="Reset selected streaks to 0", permissions=["manage"])
    def reset_streaks(self, request: HttpRequest, queryset: QuerySet[StreakState]) -> None:
        def reset(tenant: Tenant, user: EndUser) -> bool:
            services.streak_reset(tenant, user)
            return True

        done, _, refusals = _per_user(queryset, reset)
        self._report(request, f"Reset {_plural(done, 'streak')}.", None, refusals)

    @admin.action(description="Restore selected streaks", permissions=["manage"])
    def restore_streaks(self, request: HttpRequest, queryset: QuerySet[StreakState]) -> None:
        done, declined, refusals = _per_user(queryset, services.streak_restore)
        self._report(
            request,
            f"Restored {_plural(done, 'streak')}.",
            f"{_plural(declined, 'streak')} had nothing longer to restore." if declined else None,
            refusals,
        )

    @admin.action(description="Grant one freeze to selected users", permissions=["manage"])
    def grant_freeze(self, request: HttpRequest, queryset: QuerySet[StreakState]) -> None:
        def grant(tenant: Tenant, user: EndUser) -> bool:
            # The admin API's rule (StreakFreezesApi): no grants while freezes are off.
            if not streak_config(tenant).freezes_enabled:
                raise ValidationError("Streak freezes are not enabled for this tenant")
            return services.streak_freeze_grant(tenant, user)

        done, declined, refusals = _per_user(queryset, grant)
        self._report(
            request,
            f"Granted a freeze to {_plural(done, 'user')}.",
            f"{_plural(declined, 'user')} already had the maximum number of freezes."
            if declined
            else None,
            refusals,
        )


@admin.register(StreakPeriod)
class StreakPeriodAdmin(UserLinkMixin, TenantColumnMixin, ReadOnlyAdmin):
    list_display = (
        "user_link",
        "period_start",
        "period_end",
        "length",
        "extended",
        "used_freeze",
        "used_pause",
        "reset_at",
        "frequency",
        "tenant_column",
    )
    list_select_related = ("user", TENANT_RELATED)
    list_filter = ("frequency", "extended", "used_freeze", "used_pause", ("tenant", TenantFilter))
    search_fields = ("=user__external_id",)
    search_help_text = "Search by exact end-user id."
    # Periods are written as they are settled, so the primary key roughly follows time and its
    # index serves the newest-first list without sorting the whole table.
    ordering = ("-pk",)
    show_full_result_count = False
    fields = (
        "tenant",
        "user",
        "frequency",
        "period_start",
        "period_end",
        "length",
        "extended",
        "used_freeze",
        "used_pause",
        "reset_at",
    )
    readonly_fields = fields


@admin.register(StreakPause)
class StreakPauseAdmin(StreakActionsMixin, UserLinkMixin, TenantColumnMixin, ReadOnlyAdmin):
    list_display = ("user_link", "start", "end", "status", "created", "tenant_column")
    list_select_related = ("user", TENANT_RELATED)
    list_filter = ("status", ("tenant", TenantFilter))
    search_fields = ("=user__external_id",)
    search_help_text = "Search by exact end-user id."
    ordering = ("-pk",)
    show_full_result_count = False
    actions = ("archive_pauses",)
    fields = ("public_id", "tenant", "user", "start", "end", "status", "created")
    readonly_fields = fields

    @admin.action(description="Archive selected pauses", permissions=["manage"])
    def archive_pauses(self, request: HttpRequest, queryset: QuerySet[StreakPause]) -> None:
        active = queryset.filter(status=PauseStatus.ACTIVE).order_by("pk")
        archived = 0
        for pause in active:
            services.streak_pause_archive(pause)
            archived += 1
        self.message_user(request, f"Archived {_plural(archived, 'pause')}.", messages.SUCCESS)
        if skipped := queryset.count() - archived:
            self.message_user(
                request, f"{_plural(skipped, 'pause')} already archived.", messages.WARNING
            )


@end_user_section
@admin.display(description="streak")
def end_user_streak(user: EndUser) -> SafeString:
    """The streak as the API shows it now (settled in memory), then its latest periods."""
    tenant = user.tenant
    view = streak_view(tenant, user, streak_state_get(user), timezone.now())
    config = view.config
    freezes = (
        f"{view.settlement.state.freezes} of {config.freeze_max_count}"
        if config.freezes_enabled
        else "off"
    )
    summary = html_table(
        ("length", "started", "expires", "freezes", "frequency"),
        [
            (
                view.length,
                view.settlement.state.started if view.length else None,
                view.expires,
                freezes,
                config.frequency,
            )
        ],
    )
    history = streak_history(user, view, RECENT_PERIODS)
    periods = html_table(
        ("period start", "period end", "length", "freeze used", "pause used", "reset at"),
        [
            (p.period_start, p.period_end, p.length, p.used_freeze, p.used_pause, p.reset_at)
            for p in reversed(history)
        ],
    )
    url = reverse("admin:streaks_streakperiod_changelist") + "?" + urlencode({"user": user.pk})
    return format_html(
        '{}<p>Last {} periods, newest first:</p>{}<p><a href="{}">All periods of this user</a></p>',
        summary,
        RECENT_PERIODS,
        periods,
        url,
    )
