"""The webhook endpoint page's own views: the one-time secret page and the actions on an
endpoint, each a page that explains it and confirms it with a POST form."""

import datetime as dt
from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.formats import date_format

from apps.core.errors import ApplicationError
from apps.core.wording import agreeing, counted
from apps.webhooks import services
from apps.webhooks.admin.secret_once import secret_keep, secret_take
from apps.webhooks.choices import DeliveryStatus, EndpointStatus
from apps.webhooks.delivery import deliveries_redeliver_failed
from apps.webhooks.models import WebhookEndpoint

_CONFIRM = "admin/webhooks/confirm.html"


class RedeliverFailedForm(forms.Form):
    since = forms.DateTimeField(
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["since"].label = f"Failed since ({timezone.get_current_timezone_name()})"


class EndpointActions(admin.ModelAdmin):
    """Views of WebhookEndpointAdmin beside Django's own. Writes go through the services, in a
    transaction so that what they enqueue leaves after commit."""

    def get_urls(self) -> list[URLPattern]:
        name = f"{self.opts.app_label}_{self.opts.model_name}"
        wrap = self.admin_site.admin_view
        views = {
            "secret": self.secret_view,
            "rotate_secret": self.rotate_secret_view,
            "send_test": self.send_test_view,
            "redeliver_failed": self.redeliver_failed_view,
            "enable": self.enable_view,
        }
        # Before Django's own: its "<object_id>/" catch-all would swallow these.
        return [
            *(
                path(
                    f"<path:object_id>/{view.replace('_', '-')}/", wrap(func), name=f"{name}_{view}"
                )
                for view, func in views.items()
            ),
            *super().get_urls(),
        ]

    def _url(self, view: str, obj: WebhookEndpoint) -> str:
        return reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_{view}",
            args=[obj.pk],
            current_app=self.admin_site.name,
        )

    def _endpoint(self, request: HttpRequest, object_id: str, *, change: bool) -> WebhookEndpoint:
        endpoint = self.get_object(request, unquote(object_id))
        if endpoint is None:
            raise Http404("No such webhook endpoint")
        if change:
            allowed = self.has_change_permission(request, endpoint)
        else:
            allowed = self.has_view_or_change_permission(request, endpoint)
        if not allowed:
            raise PermissionDenied
        return cast(WebhookEndpoint, endpoint)

    def _page(
        self, request: HttpRequest, endpoint: WebhookEndpoint, template: str, **context: Any
    ) -> TemplateResponse:
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": endpoint,
            "change_url": self._url("change", endpoint),
            **context,
        }
        return TemplateResponse(request, template, context)

    def _back(self, endpoint: WebhookEndpoint) -> HttpResponseRedirect:
        return HttpResponseRedirect(self._url("change", endpoint))

    def _done(
        self,
        request: HttpRequest,
        endpoint: WebhookEndpoint,
        history: str,
        message: str,
        level: int = messages.SUCCESS,
    ) -> HttpResponseRedirect:
        """After an action: its entry in the endpoint's history, what it did, and back to the
        endpoint's page."""
        self.log_change(request, endpoint, history)
        self.message_user(request, message, level)
        return self._back(endpoint)

    def secret_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        endpoint = self._endpoint(request, object_id, change=False)
        # admin_view marks every dashboard page no-store, so the secret stays out of caches.
        return self._page(
            request,
            endpoint,
            "admin/webhooks/webhookendpoint/secret.html",
            title="Signing secret",
            new=secret_take(request, endpoint),
            rotate_url=self._url("rotate_secret", endpoint),
            can_change=self.has_change_permission(request, endpoint),
        )

    def rotate_secret_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        endpoint = self._endpoint(request, object_id, change=True)
        if request.method != "POST":
            return self._page(
                request, endpoint, _CONFIRM, title="Rotate the signing secret?", action="rotate"
            )
        with transaction.atomic():
            secret = services.webhook_endpoint_rotate_secret(endpoint)
            secret_keep(request, endpoint, secret, rotated=True)
        self.log_change(request, endpoint, "Rotated the signing secret.")
        return HttpResponseRedirect(self._url("secret", endpoint))

    def send_test_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        endpoint = self._endpoint(request, object_id, change=True)
        if request.method != "POST":
            return self._page(
                request, endpoint, _CONFIRM, title="Send a test event?", action="test"
            )
        with transaction.atomic():
            event = services.webhook_test_send(endpoint)
        return self._done(
            request,
            endpoint,
            "Sent a test event.",
            f"Queued a test {event.type} event (id {event.public_id}): it goes out in a moment. "
            "Its delivery is listed below.",
        )

    def redeliver_failed_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        endpoint = self._endpoint(request, object_id, change=True)
        if request.method == "POST":
            form = RedeliverFailedForm(request.POST)
        else:
            day_ago = timezone.localtime() - dt.timedelta(days=1)
            form = RedeliverFailedForm(initial={"since": day_ago.replace(second=0, microsecond=0)})
        if request.method != "POST" or not form.is_valid():
            failed = endpoint.deliveries.filter(status=DeliveryStatus.FAILED).count()
            return self._page(
                request,
                endpoint,
                _CONFIRM,
                title="Redeliver failed deliveries?",
                action="redeliver_failed",
                form=form,
                failed=failed,
            )
        since = form.cleaned_data["since"]
        try:
            with transaction.atomic():
                count = deliveries_redeliver_failed(endpoint, since)
        except ApplicationError as refused:
            self.message_user(request, refused.message, messages.ERROR)
            return self._back(endpoint)
        history = f"Redelivered {counted(count, 'failed delivery', 'failed deliveries')}."
        when = date_format(timezone.localtime(since), "DATETIME_FORMAT")
        if not count:
            message = f"No failed deliveries since {when}."
            return self._done(request, endpoint, history, message, messages.INFO)
        return self._done(
            request,
            endpoint,
            history,
            f"{counted(count, 'failed delivery', 'failed deliveries')} since {when} "
            f"{agreeing(count, 'is', 'are')} pending again: the next dispatch "
            "(every minute) sends them, with their original webhook-id.",
        )

    def enable_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        endpoint = self._endpoint(request, object_id, change=True)
        if endpoint.status == EndpointStatus.ACTIVE:
            self.message_user(request, "The endpoint is already active.", messages.INFO)
            return self._back(endpoint)
        if request.method != "POST":
            return self._page(
                request, endpoint, _CONFIRM, title="Re-enable this endpoint?", action="enable"
            )
        try:
            with transaction.atomic():
                services.webhook_endpoint_update(endpoint, status=EndpointStatus.ACTIVE)
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return self._back(endpoint)
        return self._done(
            request,
            endpoint,
            "Re-enabled.",
            "Re-enabled: new events are delivered again. Deliveries that failed meanwhile stay "
            "failed; “Redeliver failed” sends them again.",
        )
