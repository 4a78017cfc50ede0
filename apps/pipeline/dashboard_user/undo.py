"""Undoing events from the end-user page: a card with the events undone so far (who, when, why)
and the page that undoes the user's selected recent events with a reason, through the service
the admin API calls (apps/pipeline/undo.py)."""

import datetime as dt
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import URLPattern, path

from apps.accounts.models import Tenant
from apps.accounts.staff import selected_tenant
from apps.core.shown_time import moment_shown
from apps.core.wording import counted
from apps.metrics.models import MetricEvent, UndoneEvent
from apps.pipeline.dashboard_user import actions
from apps.pipeline.undo import events_undo
from apps.users.end_user_page import EndUserCard
from apps.users.models import EndUser

SELECTABLE = 50  # the latest events the page offers
UNDONE_SHOWN = 10
EVENT_CHOICES = "event_choices"  # the initial data that carries the form's choices


def _label(event: MetricEvent) -> str:
    key = f" · key {event.idempotency_key}" if event.idempotency_key else ""
    value = f"{event.value.normalize():f}"
    return f"{moment_shown(event.occurred_at)} · {event.metric.name} · {value}{key}"


class EventsUndoForm(forms.Form):
    events = forms.MultipleChoiceField(
        label="Events", widget=forms.CheckboxSelectMultiple, help_text="The user's latest events."
    )
    reason = forms.CharField(
        label="Reason", max_length=500, help_text="Recorded with the undo, with your name."
    )
    revoke_achievements = forms.BooleanField(
        label="Revoke achievements",
        required=False,
        help_text="Metric achievements the remaining events no longer reach lose their "
        "completion and its points; unticked, they are kept.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The user's events, handed in by the action as the form's initial data.
        choices = self.initial.get(EVENT_CHOICES, [])
        self.fields["events"].choices = choices  # type: ignore[attr-defined]


class EventsUndo(actions.UserAction):
    slug, route = "events_undo", "events/undo/"
    title, button = "Undo events", "Undo the selected events"
    form_class = EventsUndoForm

    def __init__(self, tenant: Tenant, user: EndUser, now: dt.datetime, **params: Any) -> None:
        super().__init__(tenant, user, now, **params)
        self.events = list(
            MetricEvent.objects.filter(user=user, undone__isnull=True)
            .select_related("metric")
            .order_by("-occurred_at", "-pk")[:SELECTABLE]
        )

    def initial(self) -> dict[str, Any]:
        return {EVENT_CHOICES: [(str(e.public_id), _label(e)) for e in self.events]}

    def describe(self) -> list[str]:
        return [
            f"The selected events of {self.user} are taken back, as POST "
            "/admin/ext/v1/events/undo does: their metric totals and daily rollups, the points "
            "their metric triggers paid (by reversing awards), the levels, the current streak, "
            "the current runs of metric and points leaderboards and this week's leagues.",
            "The events stay, marked undone with your name and the reason: undoing them again "
            "does nothing, and a retry of one of them with its idempotency key counts nothing.",
            "Time-triggered points, finished runs and league weeks, and notifications already "
            "sent are left as they are. Webhooks hear the points and rank changes.",
        ]

    def blocked(self) -> str | None:
        return None if self.events else f"{self.user} has no event left to undo."

    def perform(self, data: dict[str, Any]) -> tuple[int, str]:
        chosen = set(data["events"])
        events = [e for e in self.events if str(e.public_id) in chosen]
        done = events_undo(
            self.tenant,
            events,
            reason=data["reason"],
            revoke_achievements=data["revoke_achievements"],
            now=self.now,
        )
        undone = sum(len(u.events) for u in done)
        if not undone:
            return messages.WARNING, "Nothing to undo: those events were undone already."
        text = f"Undid {counted(undone, 'event')} of {self.user}"
        revoked = sum(len(u.revoked) for u in done)
        if revoked:
            text += f", revoking {counted(revoked, 'achievement')}"
        return messages.SUCCESS, text + "."


def undo_urls(model_admin: admin.ModelAdmin) -> list[URLPattern]:
    wrap = model_admin.admin_site.admin_view
    return [
        path(
            f"<int:user_pk>/{EventsUndo.route}",
            wrap(actions._view(model_admin, EventsUndo)),
            name=f"users_enduser_{EventsUndo.slug}",
        )
    ]


def undo_cards(request: HttpRequest, user: EndUser) -> list[EndUserCard]:
    """The events undone so far, newest first, and the button that undoes more."""
    tenant = selected_tenant(request)
    if tenant is None or tenant.pk != user.tenant_id:
        return []
    undone = list(
        UndoneEvent.objects.filter(user=user)
        .select_related("event__metric")
        .order_by("-undone_at", "-pk")[:UNDONE_SHOWN]
    )
    context = {
        "end_user": user,
        "can_act": actions.may_act(request),
        "undone": undone,
        "total": UndoneEvent.objects.filter(user=user).count() if undone else 0,
        "url": actions.action_url(EventsUndo, user),
    }
    body = render_to_string("admin/users/enduser/cards/undone.html", context, request)
    return [EndUserCard(slug="undone", title="Undone events", body=body)]
