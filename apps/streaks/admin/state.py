"""Users' streaks, periods and pauses as recorded by the pipeline: read-only, changed only by
actions and forms that call the streak services (reset and restore, freezes, pauses)."""

from collections import Counter
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.widgets import AdminDateWidget
from django.db import transaction
from django.db.models import QuerySet, Sum
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from apps.accounts.admin.base import ReadOnlyAdmin
from apps.accounts.admin.config_pages import ConfigAdmin, ConfigForm, Section
from apps.accounts.admin.forms import refusal_text, sentence, text_rules
from apps.accounts.models import Tenant
from apps.core.errors import ApplicationError
from apps.core.wording import counted
from apps.streaks import domain, services
from apps.streaks.choices import PauseStatus
from apps.streaks.models import StreakPause, StreakPeriod, StreakState
from apps.users.end_user_rows import EndUserRowsMixin
from apps.users.models import EndUser
from apps.users.selectors import user_get

RESET_TEMPLATE = "admin/streaks/streakstate/reset_confirmation.html"
# The reset confirmation names the users of this many of the longest selected streaks.
NAMED_LIMIT = 20


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
            refusals[refusal_text(exc)] += 1
    return done, declined, refusals


@admin.register(StreakState)
class StreakStateAdmin(StreakActionsMixin, EndUserRowsMixin, ReadOnlyAdmin):
    list_display = (
        "user_link",
        "length",
        "started",
        "settled_through",
        "freezes",
        "due_at",
        "frequency",
        "enabled",
    )
    list_select_related = ("user",)
    list_filter = ("frequency", "enabled")
    search_help_text = (
        "Search by exact end-user id. Lengths are as stored: a missed period counts once the "
        "freeze job settles it at the due time, or when the user's streak is next read."
    )
    actions = ("reset_streaks", "restore_streaks", "grant_freeze")
    fields = (
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
            self.message_user(request, f"{message} ({counted(count, 'user')})", messages.ERROR)

    @admin.action(description="Reset selected streaks to 0", permissions=["manage"])
    def reset_streaks(
        self, request: HttpRequest, queryset: QuerySet[StreakState]
    ) -> HttpResponse | None:
        if not request.POST.get("post"):
            return self._reset_confirmation(request, queryset)

        def reset(tenant: Tenant, user: EndUser) -> bool:
            services.streak_reset(tenant, user)
            return True

        done, _, refusals = _per_user(queryset, reset)
        self._report(request, f"Reset {counted(done, 'streak')}.", None, refusals)
        return None

    def _reset_confirmation(
        self, request: HttpRequest, queryset: QuerySet[StreakState]
    ) -> TemplateResponse:
        live = queryset.filter(length__gt=0)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Reset streaks?",
            "selected": list(queryset.values_list("pk", flat=True)),
            "live": live.count(),
            "periods": live.aggregate(total=Sum("length"))["total"] or 0,
            "longest": list(live.select_related("user").order_by("-length", "pk")[:NAMED_LIMIT]),
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        context["count"] = len(context["selected"])
        context["unnamed"] = context["live"] - len(context["longest"])
        return TemplateResponse(request, RESET_TEMPLATE, context)

    @admin.action(description="Restore selected streaks", permissions=["manage"])
    def restore_streaks(self, request: HttpRequest, queryset: QuerySet[StreakState]) -> None:
        done, declined, refusals = _per_user(queryset, services.streak_restore)
        self._report(
            request,
            f"Restored {counted(done, 'streak')}.",
            f"{counted(declined, 'streak')} had nothing longer to restore." if declined else None,
            refusals,
        )

    @admin.action(description="Grant one freeze to selected users", permissions=["manage"])
    def grant_freeze(self, request: HttpRequest, queryset: QuerySet[StreakState]) -> None:
        # The service refuses each user while freezes are off, as the admin API does.
        done, declined, refusals = _per_user(queryset, services.streak_freeze_grant)
        self._report(
            request,
            f"Granted a freeze to {counted(done, 'user')}.",
            f"{counted(declined, 'user')} already had the maximum number of freezes."
            if declined
            else None,
            refusals,
        )


# What a settled period records: the list's columns and the fields of its page.
_PERIOD_FACTS = (
    "period_start",
    "period_end",
    "length",
    "extended",
    "used_freeze",
    "used_pause",
    "reset_at",
    "restored_at",
)


@admin.register(StreakPeriod)
class StreakPeriodAdmin(EndUserRowsMixin, ReadOnlyAdmin):
    list_display = ("user_link", *_PERIOD_FACTS, "frequency")
    list_select_related = ("user",)
    list_filter = ("frequency", "extended", "used_freeze", "used_pause")
    fields = ("user", "frequency", *_PERIOD_FACTS)
    readonly_fields = fields


class PauseForm(ConfigForm):
    """One pause, created by streak_pause_create for the end-user named by id."""

    user_id = forms.CharField(
        label="User id",
        help_text="The end-user's id in your application.",
        validators=text_rules(255),
    )
    start = forms.DateField(
        label="Start", widget=AdminDateWidget, help_text="Not before today in the user's zone."
    )
    end = forms.DateField(label="End", widget=AdminDateWidget, help_text="Inclusive.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance is not None:  # a stored pause is never edited: its page only shows it
            self.fields.clear()

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        # The service's rule, told before the user is looked up (as the admin API does), next
        # to the first input it names.
        if not self.errors:
            problem = domain.pause_problem(cleaned["start"], cleaned["end"])
            if problem is not None:
                self.add_error(problem.fields[0], sentence(problem.worded(self._label)))
        return cleaned


@admin.register(StreakPause)
class StreakPauseAdmin(StreakActionsMixin, EndUserRowsMixin, ConfigAdmin):
    config_form = PauseForm
    list_display = ("user_link", "start", "end", "status", "created")
    list_select_related = ("user",)
    list_filter = ("status",)
    actions = ["archive_pauses"]

    def form_sections(self, obj: StreakPause | None) -> list[Section]:
        if obj is None:
            return [(None, ["user_id", ("start", "end")])]
        return [(None, ["public_id", "user_link", "start", "end", "status", "created"])]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # A pause is created or archived, never edited (as in the admin API).
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def page_context(self, request: HttpRequest, obj: StreakPause | None) -> dict[str, Any]:
        return {"continue_label": "Save and view"}  # as Django's, once saved it is only viewed

    def create(self, request: HttpRequest, form: PauseForm) -> StreakPause:
        tenant, cleaned = form.valid_tenant, form.cleaned_data
        user = user_get(tenant, cleaned["user_id"])
        return services.streak_pause_create(
            tenant, user, start=cleaned["start"], end=cleaned["end"]
        )

    @admin.action(description="Archive selected pauses", permissions=["manage"])
    def archive_pauses(self, request: HttpRequest, queryset: QuerySet[StreakPause]) -> None:
        active = queryset.filter(status=PauseStatus.ACTIVE).order_by("pk")
        archived = 0
        for pause in active:
            services.streak_pause_archive(pause)
            archived += 1
        self.message_user(request, f"Archived {counted(archived, 'pause')}.", messages.SUCCESS)
        if skipped := queryset.count() - archived:
            self.message_user(
                request, f"{counted(skipped, 'pause')} already archived.", messages.WARNING
            )
