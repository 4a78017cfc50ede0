"""Actions of the end-user page. Each one is a page that says what will happen (GET changes
nothing) and a POST that calls the service the admin or application API calls, then returns
to the user's page with a message. Running them takes the change permission on end-users,
although no field of the user is edited by hand."""

import abc
import datetime as dt
from collections.abc import Callable
from typing import Any, ClassVar

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.widgets import AdminDateWidget
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme

from apps.accounts.admin.forms import refusal_text
from apps.accounts.models import Tenant
from apps.accounts.staff import selected_tenant
from apps.achievements.choices import Status as AchievementStatus
from apps.achievements.choices import Trigger
from apps.achievements.selectors import AchievementDef, achievement_definitions, user_completions
from apps.core.errors import ApplicationError
from apps.core.shown_time import date_shown, moment_shown
from apps.core.wording import counted
from apps.pipeline.services import achievement_complete
from apps.points.choices import TriggerType
from apps.points.selectors import points_config
from apps.streaks import domain as streak_domain
from apps.streaks import services as streaks
from apps.streaks.selectors import (
    StreakView,
    pauses_of,
    streak_restore_length,
    streak_state_get,
    streak_view,
)
from apps.users.domain import local_date
from apps.users.errors import UserNotFoundError
from apps.users.models import EndUser
from apps.users.services import user_lock

CHANGE_PERMISSION = "users.change_enduser"
TEMPLATE = "admin/users/enduser/action_confirm.html"


def may_act(request: HttpRequest) -> bool:
    return request.user.has_perm(CHANGE_PERMISSION)


def _day(day: dt.date) -> str:
    return date_shown(day)


class UserAction(abc.ABC):
    """One action: `describe` says what POST would do, `blocked` why it would do nothing (the
    page then offers no button), `perform` does it through a service and says what it did."""

    slug: ClassVar[str]  # URL name: admin:users_enduser_<slug>
    route: ClassVar[str]  # after "<user_pk>/"
    title: ClassVar[str]
    button: ClassVar[str]
    form_class: ClassVar[type[forms.Form] | None] = None

    def __init__(self, tenant: Tenant, user: EndUser, now: dt.datetime, **params: Any) -> None:
        self.tenant, self.user, self.now = tenant, user, now

    def heading(self) -> str:
        return self.title

    @abc.abstractmethod
    def describe(self) -> list[str]:
        """What POST would do, in sentences."""

    def blocked(self) -> str | None:
        return None

    def initial(self) -> dict[str, Any]:
        return {}

    @abc.abstractmethod
    def perform(self, data: dict[str, Any]) -> tuple[int, str]:
        """(message level, message); raises ApplicationError when the service refuses."""


class StreakAction(UserAction):
    def __init__(self, tenant: Tenant, user: EndUser, now: dt.datetime, **params: Any) -> None:
        super().__init__(tenant, user, now, **params)
        self.view = streak_view(tenant, user, streak_state_get(user), now)

    def streak(self, view: StreakView | None = None) -> str:
        view = view or self.view
        return counted(view.length, streak_domain.unit_of(view.config.frequency))

    def fresh_view(self) -> StreakView:
        return streak_view(self.tenant, self.user, streak_state_get(self.user), self.now)


class StreakReset(StreakAction):
    slug, route = "streak_reset", "streak/reset/"
    title, button = "Reset the streak", "Yes, reset the streak to 0"

    def describe(self) -> list[str]:
        user, view = self.user, self.view
        if view.length:
            started = view.settlement.state.started
            since = f" (since {_day(started)})" if started else ""
            first = f"{user}'s streak of {self.streak(view)}{since} drops to 0 now."
        else:
            first = f"{user} has no streak now (0): the reset is recorded all the same."
        return [
            first,
            "The current period records the reset. “Restore the streak” can bring the length "
            "back while it is inside the restore window.",
            "This is what POST /admin/v1/streaks/reset does; no notification or webhook is sent.",
        ]

    def perform(self, data: dict[str, Any]) -> tuple[int, str]:
        streaks.streak_reset(self.tenant, self.user, self.now)
        return messages.SUCCESS, f"Reset {self.user}'s streak to 0."


class StreakRestore(StreakAction):
    slug, route = "streak_restore", "streak/restore/"
    title, button = "Restore the streak", "Yes, restore the streak"

    def __init__(self, tenant: Tenant, user: EndUser, now: dt.datetime, **params: Any) -> None:
        super().__init__(tenant, user, now, **params)
        self.length = streak_restore_length(user, self.view)

    def describe(self) -> list[str]:
        if self.length is None:
            return [f"{self.user}'s streak is {self.streak()}."]
        return [
            f"{self.user}'s streak goes from {self.streak()} to {self.length}, the longest "
            "length it reached inside the restore window.",
            "If that length was reached in an earlier period, the user extends it again by "
            "acting in the current one.",
            "This is what POST /admin/v1/streaks/restore does; no notification or webhook is sent.",
        ]

    def blocked(self) -> str | None:
        if self.length is None:
            return (
                "Nothing to restore: no period inside the restore window reached a longer "
                "streak than the current one."
            )
        return None

    def perform(self, data: dict[str, Any]) -> tuple[int, str]:
        if not streaks.streak_restore(self.tenant, self.user, self.now):
            return messages.WARNING, f"{self.user}'s streak had nothing longer to restore."
        restored = self.streak(self.fresh_view())
        return messages.SUCCESS, f"Restored {self.user}'s streak to {restored}."


class StreakFreezeGrant(StreakAction):
    slug, route = "streak_freeze", "streak/freeze/"
    title, button = "Grant a streak freeze", "Yes, grant one freeze"

    def describe(self) -> list[str]:
        config = self.view.config
        if not config.freezes_enabled:
            return [f"{self.user}'s streak is {self.streak()}."]
        have, most = self.view.settlement.state.freezes, config.freeze_max_count
        return [
            f"{self.user} has {have} of at most {counted(most, 'freeze')}; granting adds one "
            f"({min(have + 1, most)} of {most}).",
            "A freeze is used up by itself when a period is missed, and keeps the streak alive.",
            "This is what POST /admin/v1/streaks/freezes does.",
        ]

    def blocked(self) -> str | None:
        config = self.view.config
        if not config.freezes_enabled:
            return "Streak freezes are not enabled for this tenant (see the streak settings)."
        if self.view.settlement.state.freezes >= config.freeze_max_count:
            return self._at_most()
        return None

    def _at_most(self) -> str:
        most = self.view.config.freeze_max_count
        return f"{self.user} already has the maximum of {counted(most, 'freeze')}."

    def perform(self, data: dict[str, Any]) -> tuple[int, str]:
        most = self.view.config.freeze_max_count
        if not streaks.streak_freeze_grant(self.tenant, self.user, self.now):
            return messages.WARNING, self._at_most()
        have = self.fresh_view().settlement.state.freezes
        return messages.SUCCESS, f"Granted a streak freeze to {self.user}: {have} of {most}."


class PauseForm(forms.Form):
    start = forms.DateField(widget=AdminDateWidget)
    end = forms.DateField(widget=AdminDateWidget, help_text="The last day of the pause.")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if "start" in data and "end" in data:
            # The service's rule for a pause, told before the service is called.
            problem = streak_domain.pause_problem(data["start"], data["end"])
            if problem is not None:
                raise forms.ValidationError(problem.message)
        return data


class StreakPauseAdd(StreakAction):
    slug, route = "streak_pause", "streak/pause/"
    title, button = "Pause the streak", "Add the pause"
    form_class = PauseForm

    def today(self) -> dt.date:
        return local_date(self.now, self.user.tz)

    def initial(self) -> dict[str, Any]:
        return {"start": self.today(), "end": self.today()}

    def describe(self) -> list[str]:
        lines = [
            f"While paused, {self.user}'s streak ({self.streak()} now) neither grows nor "
            "breaks: every period the pause overlaps keeps it.",
            f"A pause starts today at the earliest, in the user's time zone "
            f"({self.user.tz or 'UTC'}: today is {_day(self.today())}).",
            "This is what POST /admin/v1/streaks/pauses does.",
        ]
        current = pauses_of(self.user, self.today())
        if current:
            spans = "; ".join(f"{_day(p.start)} to {_day(p.end)}" for p in current)
            lines.append(f"Pauses already set: {spans}.")
        return lines

    def perform(self, data: dict[str, Any]) -> tuple[int, str]:
        start, end = data["start"], data["end"]
        streaks.streak_pause_create(self.tenant, self.user, start=start, end=end, now=self.now)
        return messages.SUCCESS, f"Paused {self.user}'s streak from {_day(start)} to {_day(end)}."


class AchievementComplete(UserAction):
    slug, route = "achievement_complete", "achievements/<int:achievement_pk>/complete/"
    title, button = "Complete an achievement", "Yes, complete it"

    def __init__(self, tenant: Tenant, user: EndUser, now: dt.datetime, **params: Any) -> None:
        super().__init__(tenant, user, now, **params)
        definition = achievement_definitions(tenant).get(params["achievement_pk"])
        # As POST /achievements/{key}/complete: only api achievements that are not inactive.
        if definition is None or definition.trigger != Trigger.API:
            raise Http404("No such achievement")
        if definition.status == AchievementStatus.INACTIVE:
            raise Http404("No such achievement")
        self.definition: AchievementDef = definition
        self.completed_at = user_completions(user).get(definition.pk)

    def heading(self) -> str:
        return f"Complete “{self.definition.name}”"

    def points(self) -> list[str]:
        """What its achievement points triggers pay this user (before boosts)."""
        return [
            f"+{trigger.points} {system.name}"
            for system in points_config(self.tenant).values()
            for trigger in system.triggers
            if trigger.type == TriggerType.ACHIEVEMENT
            and trigger.achievement_pk == self.definition.pk
            and trigger.open_to(self.user.attributes)
        ]

    def describe(self) -> list[str]:
        d = self.definition
        lines = [
            f"{self.user} completes “{d.name}” now, as POST /v1/achievements/{d.key}/complete "
            "does.",
            "Its points triggers pay: "
            + (", ".join(self.points()) or "nothing (no points trigger names it)")
            + ", with the boosts running today.",
            "Achievements that require it complete too once all their prerequisites are done. "
            "The completion email or push and webhooks follow as for the API.",
        ]
        return lines

    def blocked(self) -> str | None:
        if self.completed_at is not None:
            return f"{self.user} completed it on {moment_shown(self.completed_at)}."
        if self.definition.status == AchievementStatus.LOCKED:
            return "This achievement is locked: it takes no new completions."
        if not self.definition.open_to(self.user.attributes):
            return "This user does not meet the achievement's user attribute filters."
        return None

    def perform(self, data: dict[str, Any]) -> tuple[int, str]:
        d = self.definition
        with transaction.atomic():
            # The pipeline's one lock point per user: an event of the same user waits.
            user = user_lock(self.tenant, self.user.external_id)
            if user is None:
                raise UserNotFoundError(self.user.external_id)
            result = achievement_complete(self.tenant, user, d, self.now)
        if not result.completion.created:
            when = moment_shown(result.completion.completed_at)
            return messages.WARNING, f"{self.user} had already completed “{d.name}” ({when})."
        paid = ", ".join(
            f"+{system['added']} {system['name']}"
            for system in result.points.values()
            if system.get("added")
        )
        return messages.SUCCESS, f"Completed “{d.name}” for {self.user}" + (
            f": {paid}." if paid else "."
        )


ACTIONS: tuple[type[UserAction], ...] = (
    StreakReset,
    StreakRestore,
    StreakFreezeGrant,
    StreakPauseAdd,
    AchievementComplete,
)


def action_url(action: type[UserAction], user: EndUser, *args: Any) -> str:
    return reverse(f"admin:users_enduser_{action.slug}", args=[user.pk, *args])


def _user(request: HttpRequest, model_admin: admin.ModelAdmin, user_pk: int) -> EndUser:
    """The user, if the selected tenant holds it (the page's queryset is scoped to it): another
    tenant's user is not found, like a missing one."""
    user = model_admin.get_queryset(request).filter(pk=user_pk).first()
    if user is None:
        raise Http404("No such end-user")
    if not may_act(request):
        raise PermissionDenied
    return user


def _run(
    request: HttpRequest,
    model_admin: admin.ModelAdmin,
    action_class: type[UserAction],
    user_pk: int,
    params: dict[str, Any],
) -> HttpResponse:
    user = _user(request, model_admin, user_pk)
    tenant = selected_tenant(request)
    if tenant is None or tenant.pk != user.tenant_id:  # the scoped queryset rules this out
        raise Http404("No such end-user")
    action = action_class(tenant, user, timezone.now(), **params)
    back = reverse("admin:users_enduser_change", args=[user.pk])
    # A page listing many users posts an action in one click and gets the list back
    # (the streaks lost lately, apps/streaks/admin/losses.py).
    after = request.POST.get("next", "")
    if after and url_has_allowed_host_and_scheme(
        after, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = after
    form_class = action.form_class
    form = form_class(request.POST or None, initial=action.initial()) if form_class else None
    if request.method == "POST" and (form is None or form.is_valid()):
        try:
            with transaction.atomic():
                level, text = action.perform(form.cleaned_data if form else {})
        except ApplicationError as exc:
            messages.error(request, refusal_text(exc))
        else:
            messages.add_message(request, level, text)
            if level == messages.SUCCESS:
                model_admin.log_change(request, user, text)
        return HttpResponseRedirect(back)
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "original": user,
        "title": action.heading(),
        "subtitle": str(user),
        "action": action,
        "description": action.describe(),
        "blocked": action.blocked(),
        "form": form,
        "media": model_admin.media + (form.media if form else forms.Media()),
        "change_url": back,
    }
    return TemplateResponse(request, TEMPLATE, context)


def _view(
    model_admin: admin.ModelAdmin, action_class: type[UserAction]
) -> Callable[..., HttpResponse]:
    def view(request: HttpRequest, user_pk: int, **params: Any) -> HttpResponse:
        return _run(request, model_admin, action_class, user_pk, params)

    view.__name__ = f"{action_class.slug}_view"
    return view


def action_urls(
    model_admin: admin.ModelAdmin, actions: tuple[type[UserAction], ...] = ACTIONS
) -> list[URLPattern]:
    wrap = model_admin.admin_site.admin_view
    return [
        path(
            f"<int:user_pk>/{action.route}",
            wrap(_view(model_admin, action)),
            name=f"users_enduser_{action.slug}",
        )
        for action in actions
    ]
