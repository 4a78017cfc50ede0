"""Fair play on the end-user page (apps/fairplay): a card saying whether the user is excluded
from the rankings (when, by whom, why), with the actions to exclude them, with a reason, and to
reinstate them. Each is confirmed on its own page (actions.py) and carried out by the service
the admin API's /admin/ext/v1/users/{userId}/exclusion calls."""

import functools
from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest
from django.template.loader import render_to_string

from apps.accounts.staff import selected_tenant
from apps.fairplay import services
from apps.pipeline.dashboard_user.actions import UserAction, action_url, action_urls, may_act
from apps.users.end_user_page import EndUserCard
from apps.users.models import EndUser


class ExclusionForm(forms.Form):
    reason = forms.CharField(
        max_length=services.MAX_REASON,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="Kept on the exclusion, with your name, and sent with the user.excluded webhook.",
    )


class UserExclude(UserAction):
    slug, route = "exclude", "fairplay/exclude/"
    title, button = "Exclude from the rankings", "Exclude the user"
    form_class = ExclusionForm

    def describe(self) -> list[str]:
        return [
            f"{self.user} disappears at once from every leaderboard (every run and breakdown "
            "group), league cohort standings and results, and achievements' rarity of this "
            "tenant; everyone else's ranks are recomputed.",
            "Their events are still accepted and counted (totals, points, streaks, "
            "achievements); their own reads through the API answer as before.",
            "Reinstating them puts them back in place with their values of that moment. This is "
            "what POST /admin/ext/v1/users/{userId}/exclusion does; the user.excluded webhook "
            "is sent.",
        ]

    def blocked(self) -> str | None:
        if self.user.excluded_at is not None:
            return f"{self.user} is already excluded ({self.user.excluded_reason})."
        return None

    def perform(self, data: dict[str, Any]) -> tuple[int, str]:
        done = services.user_exclude(self.tenant, self.user.external_id, data["reason"])
        if not done.changed:
            return messages.WARNING, f"{self.user} was already excluded."
        return messages.SUCCESS, f"Excluded {self.user} from the rankings: {data['reason']}"


class UserReinstate(UserAction):
    slug, route = "reinstate", "fairplay/reinstate/"
    title, button = "Reinstate in the rankings", "Yes, reinstate the user"

    def describe(self) -> list[str]:
        return [
            f"{self.user} returns at once to every leaderboard and league cohort of this tenant, "
            "in place, with the values their events gave them meanwhile, and counts again in "
            "achievements' rarity.",
            "League weeks that ended while they were excluded keep no result. This is what "
            "DELETE /admin/ext/v1/users/{userId}/exclusion does; the user.reinstated webhook is "
            "sent.",
        ]

    def blocked(self) -> str | None:
        if self.user.excluded_at is None:
            return f"{self.user} is not excluded."
        return None

    def perform(self, data: dict[str, Any]) -> tuple[int, str]:
        done = services.user_reinstate(self.tenant, self.user.external_id)
        if not done.changed:
            return messages.WARNING, f"{self.user} was not excluded."
        return messages.SUCCESS, f"Reinstated {self.user} in the rankings."


FAIRPLAY_ACTIONS: tuple[type[UserAction], ...] = (UserExclude, UserReinstate)
fairplay_urls = functools.partial(action_urls, actions=FAIRPLAY_ACTIONS)


def fairplay_card(request: HttpRequest, user: EndUser) -> list[EndUserCard]:
    tenant = selected_tenant(request)
    if tenant is None or tenant.pk != user.tenant_id:  # the page's scoped queryset rules it out
        return []
    context = {
        "end_user": user,
        "can_act": may_act(request),
        "exclude_url": action_url(UserExclude, user),
        "reinstate_url": action_url(UserReinstate, user),
    }
    body = render_to_string("admin/users/enduser/cards/fairplay.html", context, request)
    return [EndUserCard(slug="fairplay", title="Fair play", body=body)]
