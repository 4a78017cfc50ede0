"""The webhook endpoint's own pages: the one-time secret page and the actions on an endpoint, each
a page that explains it and confirms it with a POST form. Writes go through the services, in a
transaction so that what they enqueue leaves after commit."""

import datetime as dt
from typing import Any

from django import forms
from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils import timezone

from apps.accounts.admin.config_pages import ConfigAdmin, View
from apps.core.errors import ApplicationError
from apps.core.show_once import once_keep, once_take
from apps.core.shown_time import moment_shown
from apps.core.wording import agreeing, counted
from apps.webhooks import configuration, services
from apps.webhooks.choices import DeliveryStatus, EndpointStatus
from apps.webhooks.delivery import deliveries_redeliver_failed
from apps.webhooks.domain import WebhookEndpointSettings
from apps.webhooks.models import WebhookEndpoint

_CONFIRM = "admin/webhooks/confirm.html"
# A new signing secret, shown once (apps/core/show_once.py).
_SECRET_SLOT = "webhooks.new_secret"  # noqa: S105 - a session slot's name


def secret_keep(
    request: HttpRequest, endpoint: WebhookEndpoint, secret: str, rotated: bool
) -> None:
    payload = {"secret": secret, "rotated": rotated}
    once_keep(request, _SECRET_SLOT, str(endpoint.public_id), payload)


class RedeliverFailedForm(forms.Form):
    since = forms.DateTimeField(
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["since"].label = f"Failed since ({timezone.get_current_timezone_name()})"


class EndpointActions(ConfigAdmin):
    """The pages of WebhookEndpointAdmin besides its form and delete pages."""

    def object_views(self) -> dict[str, View]:
        return {
            "secret": self.secret_view,
            "rotate_secret": self.rotate_secret_view,
            "send_test": self.send_test_view,
            "redeliver_failed": self.redeliver_failed_view,
            "enable": self.enable_view,
        }

    def secret_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        endpoint = self.object_or_404(request, object_id, change=False)
        # admin_view marks every dashboard page no-store, so the secret stays out of caches.
        return self.render_page(
            request,
            endpoint,
            "admin/webhooks/webhookendpoint/secret.html",
            title="Signing secret",
            new=once_take(
                request, _SECRET_SLOT, str(endpoint.public_id)
            ),  # {"secret": ..., "rotated": ...} or None: already shown
            rotate_url=self.url("rotate_secret", endpoint),
        )

    def rotate_secret_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        endpoint = self.object_or_404(request, object_id, change=True)
        if request.method != "POST":
            return self.render_page(
                request, endpoint, _CONFIRM, title="Rotate the signing secret?", action="rotate"
            )
        with transaction.atomic():
            secret = configuration.webhook_endpoint_rotate_secret(endpoint)
            secret_keep(request, endpoint, secret, rotated=True)
        self.log_change(request, endpoint, "Rotated the signing secret.")
        return HttpResponseRedirect(self.url("secret", endpoint))

    def send_test_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        endpoint = self.object_or_404(request, object_id, change=True)
        if request.method != "POST":
            return self.render_page(
                request, endpoint, _CONFIRM, title="Send a test event?", action="test"
            )
        with transaction.atomic():
            event = services.webhook_test_send(endpoint)
        return self.done(
            request,
            endpoint,
            "Sent a test event.",
            f"Queued a test {event.type} event (id {event.public_id}): it goes out in a moment. "
            "Its delivery is listed below.",
        )

    def redeliver_failed_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        endpoint = self.object_or_404(request, object_id, change=True)
        if request.method == "POST":
            form = RedeliverFailedForm(request.POST)
        else:
            day_ago = timezone.localtime() - dt.timedelta(days=1)
            form = RedeliverFailedForm(initial={"since": day_ago.replace(second=0, microsecond=0)})
        if request.method != "POST" or not form.is_valid():
            return self.render_page(
                request,
                endpoint,
                _CONFIRM,
                title="Redeliver failed deliveries?",
                action="redeliver_failed",
                form=form,
                failed=endpoint.deliveries.filter(status=DeliveryStatus.FAILED).count(),
            )
        since = form.cleaned_data["since"]
        try:
            with transaction.atomic():
                count = deliveries_redeliver_failed(endpoint, since)
        except ApplicationError as refused:
            self.message_user(request, refused.message, messages.ERROR)
            return HttpResponseRedirect(self.url("change", endpoint))
        history = f"Redelivered {counted(count, 'failed delivery', 'failed deliveries')}."
        when = moment_shown(since)
        if not count:
            message = f"No failed deliveries since {when}."
            return self.done(request, endpoint, history, message, messages.INFO)
        return self.done(
            request,
            endpoint,
            history,
            f"{counted(count, 'failed delivery', 'failed deliveries')} since {when} "
            f"{agreeing(count, 'is', 'are')} pending again: the next dispatch "
            "(every minute) sends them, with their original webhook-id.",
        )

    def enable_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        endpoint = self.object_or_404(request, object_id, change=True)
        if endpoint.status == EndpointStatus.ACTIVE:
            self.message_user(request, "The endpoint is already active.", messages.INFO)
            return HttpResponseRedirect(self.url("change", endpoint))
        if request.method != "POST":
            return self.render_page(
                request, endpoint, _CONFIRM, title="Re-enable this endpoint?", action="enable"
            )
        try:
            with transaction.atomic():
                configuration.webhook_endpoint_update(
                    endpoint.tenant,
                    endpoint,
                    WebhookEndpointSettings(status=EndpointStatus.ACTIVE),
                )
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return HttpResponseRedirect(self.url("change", endpoint))
        return self.done(
            request,
            endpoint,
            "Re-enabled.",
            "Re-enabled: new events are delivered again. Deliveries that failed meanwhile stay "
            "failed; “Redeliver failed” sends them again.",
        )
