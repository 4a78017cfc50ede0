"""The flags page of the dashboard: the users an anomaly rule flagged and nobody has looked at
yet, newest first, with the evidence and a one-click exclude (apps/fairplay/services.py: the
user leaves every ranking, the rule and evidence as the reason) or dismiss."""

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.views.decorators.http import require_POST

from apps.accounts.admin.base import PageRowsChangeList, ReadOnlyAdmin
from apps.accounts.staff import selected_tenant
from apps.core.shown_time import moment_shown
from apps.fairplay.choices import FlagStatus
from apps.fairplay.models import UserFlag
from apps.fairplay.services import flag_resolve
from apps.users.end_user_rows import EndUserRowsMixin

# Excluding a user is an action on end-users (the end-user page's take the same permission).
ACT_PERMISSION = "users.change_enduser"
_ROW = "flag_row"  # (may act, the page to come back to), set on each row of the page


def _amount(value: Any) -> str:
    return format(value.normalize(), "f")


class FlagStatusFilter(admin.SimpleListFilter):
    """Open flags unless asked otherwise: the page is a to-do list."""

    title = "status"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [*FlagStatus.choices, ("all", "All")]

    def value(self) -> str:
        return str(super().value() or FlagStatus.OPEN)

    def queryset(self, request: HttpRequest, queryset: QuerySet[UserFlag]) -> QuerySet[UserFlag]:
        state = self.value()
        return queryset if state == "all" else queryset.filter(status=state)

    def choices(self, changelist: Any) -> Any:
        for lookup, title in self.lookup_choices:
            yield {
                "selected": self.value() == str(lookup),
                "query_string": changelist.get_query_string({self.parameter_name: lookup}),
                "display": title,
            }


@admin.register(UserFlag)
class UserFlagAdmin(EndUserRowsMixin, ReadOnlyAdmin):
    list_display = ("user_link", "rule_column", "window_column", "evidence_column", "act_column")
    list_display_links = None
    list_select_related = ("user", "rule")
    list_filter = (FlagStatusFilter,)
    ordering = ("-flagged_at", "-pk")
    list_per_page = 50
    search_help_text = (
        "Search by exact end-user id. Users an anomaly rule flagged, newest first: exclude "
        "them from every ranking, or dismiss the flag. Open flags unless the status filter "
        "says otherwise."
    )
    actions = None
    fields = (
        "user",
        "rule",
        "window_start",
        "window_end",
        "observed",
        "threshold",
        "flagged_at",
        "status",
        "resolved_at",
        "resolved_by",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[UserFlag]:
        tenant = selected_tenant(request)
        if tenant is None:
            return UserFlag.objects.none()
        return UserFlag.objects.filter(tenant=tenant)

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[PageRowsChangeList]:
        return PageRowsChangeList

    def page_rows_load(self, request: HttpRequest, rows: list[UserFlag]) -> None:
        # On the rows, not the admin: one admin object serves every request at once.
        may_act = request.user.has_perm(ACT_PERMISSION)
        for row in rows:
            setattr(row, _ROW, (may_act, request.get_full_path()))

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        return [
            path(
                "<int:flag_pk>/<str:decision>/",
                wrap(require_POST(self.resolve_view)),
                name="fairplay_userflag_resolve",
            ),
            *super().get_urls(),
        ]

    def resolve_view(self, request: HttpRequest, flag_pk: int, decision: str) -> HttpResponse:
        tenant = selected_tenant(request)
        if decision not in ("exclude", "dismiss") or tenant is None:
            raise Http404("No such flag")
        if not request.user.has_perm(ACT_PERMISSION):
            raise PermissionDenied
        if not self.get_queryset(request).filter(pk=flag_pk).exists():
            raise Http404("No such flag")
        flag = flag_resolve(tenant, flag_pk, exclude=decision == "exclude")
        if decision == "exclude":
            text = f"Excluded {flag.user} from the rankings ({flag.rule.name})."
        else:
            text = f"Dismissed the flag of {flag.user} ({flag.rule.name})."
        messages.success(request, text)
        back = request.POST.get("next") or reverse("admin:fairplay_userflag_changelist")
        if not back.startswith("/dashboard/"):
            back = reverse("admin:fairplay_userflag_changelist")
        return HttpResponseRedirect(back)

    @admin.display(description="Rule", ordering="rule__name")
    def rule_column(self, obj: UserFlag) -> str:
        return obj.rule.name

    @admin.display(description="Window", ordering="window_start")
    def window_column(self, obj: UserFlag) -> str:
        return f"{moment_shown(obj.window_start)} to {moment_shown(obj.window_end)}"

    @admin.display(description="Evidence")
    def evidence_column(self, obj: UserFlag) -> str:
        return (
            f"{_amount(obj.observed)}, more than {_amount(obj.threshold)} "
            f"(flagged {moment_shown(obj.flagged_at)})"
        )

    @admin.display(description="")
    def act_column(self, obj: UserFlag) -> SafeString | str:
        if obj.status != FlagStatus.OPEN:
            return f"{obj.get_status_display().lower()} by {obj.resolved_by}"
        may_act, back = getattr(obj, _ROW, (False, ""))
        if not may_act:
            return "-"
        # The changelist is one form (with its CSRF token): each button posts it.
        return format_html(
            '<button type="submit" class="button flag-exclude" formaction="{}" '
            'formmethod="post" name="next" value="{}">Exclude</button> '
            '<button type="submit" class="button flag-dismiss" formaction="{}" '
            'formmethod="post" name="next" value="{}">Dismiss</button>',
            reverse("admin:fairplay_userflag_resolve", args=[obj.pk, "exclude"]),
            back,
            reverse("admin:fairplay_userflag_resolve", args=[obj.pk, "dismiss"]),
            back,
        )
