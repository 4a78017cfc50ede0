"""Dashboard pages for email templates: written by the template services, with a preview and a
test send."""

import logging
from typing import Any, ClassVar, cast
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.views.decorators.http import require_POST

from apps.accounts.admin.base import text_rules
from apps.accounts.models import Tenant
from apps.notifications import domain, services
from apps.notifications.admin.forms import TemplateAdminBase, TemplateFormBase, with_field_errors
from apps.notifications.delivery import email_test_send
from apps.notifications.errors import TemplateRenderError
from apps.notifications.models import EmailTemplate
from apps.notifications.previews import template_preview
from apps.users.errors import UserNotFoundError
from apps.users.models import EndUser
from apps.users.selectors import user_get

logger = logging.getLogger("gamify.notifications")


_PARTS = ("subject", "html", "text")
# The variables and syntax templates may use, shown above the content fields.
VARIABLES_HELP = "admin/notifications/emailtemplate/variables.html"
_CODE = {"spellcheck": "false", "style": "font-family: monospace; width: 100%"}


class EmailTemplateForm(TemplateFormBase):
    subject = forms.CharField(
        required=False, widget=forms.TextInput(attrs={**_CODE, "maxlength": 1000})
    )
    html = forms.CharField(
        required=False,
        strip=False,
        label="HTML",
        widget=forms.Textarea(attrs={**_CODE, "rows": 24}),
    )
    text = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={**_CODE, "rows": 10}),
        help_text="Empty: derived from the HTML.",
    )
    arguments: ClassVar[dict[str, str]] = {
        **TemplateFormBase.arguments,
        **{name: name for name in _PARTS},
    }
    wire_names: ClassVar[dict[str, str]] = {
        **{name: name for name in ("type", "name", "status", "priority", *_PARTS)},
        "user_attributes": "userAttributes",
    }
    rules: ClassVar[dict[str, list[Any]]] = {
        **TemplateFormBase.rules,
        "subject": text_rules(domain.MAX_TEMPLATE_SUBJECT),
        "html": text_rules(domain.MAX_TEMPLATE_HTML),
        "text": text_rules(domain.MAX_TEMPLATE_TEXT),
    }
    required_on_edit = ("subject", "html")
    defaulted = _PARTS

    class Meta:
        model = EmailTemplate
        fields = ("tenant",)

    def initial_from(self, obj: EmailTemplate) -> dict[str, Any]:
        return {**super().initial_from(obj), **{name: getattr(obj, name) for name in _PARTS}}


def _part_of(message: str, form: forms.ModelForm) -> str | None:
    part = message.partition(":")[0]
    return part if part in _PARTS else None


@admin.register(EmailTemplate)
class EmailTemplateAdmin(TemplateAdminBase):
    form = EmailTemplateForm
    search_fields = ("name", "subject")
    content_fields = _PARTS
    variables_help = VARIABLES_HELP
    seeded_marker = "defaults_seeded_at"
    seed = staticmethod(services.email_templates_seed)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        # A template is written for its type's variables; another type is another template.
        return () if obj is None else ("tenant_column", "type", "public_id", "created", "updated")

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        # Only the tenant is the row's; the rest is the services' arguments.
        kwargs["fields"] = ("tenant",) if obj is None else ()
        return with_field_errors(super().get_form(request, obj, change, **kwargs), _part_of)

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> EmailTemplate:
        tenant = form.cleaned_data["tenant"]
        # As the admin API does: a tenant's first template never stands in for its defaults.
        services.email_templates_seed(tenant)
        return services.email_template_create(tenant, **cast(EmailTemplateForm, form).kwargs)

    def service_update(
        self, request: HttpRequest, current: EmailTemplate, form: forms.ModelForm
    ) -> None:
        services.email_template_update(current, **cast(EmailTemplateForm, form).kwargs)

    def service_delete(self, request: HttpRequest, obj: EmailTemplate) -> None:
        services.email_template_delete(obj)

    @admin.display(description="preview")
    def preview(self, obj: EmailTemplate) -> SafeString:
        return format_html('<a href="{}">Preview</a>', self._url("preview", obj))

    # --- preview and test send --------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        name = f"{self.opts.app_label}_{self.opts.model_name}"
        wrap = self.admin_site.admin_view
        # Before Django's own: its "<object_id>/" catch-all would swallow these.
        return [
            path("<path:object_id>/preview/", wrap(self.preview_view), name=f"{name}_preview"),
            path(
                "<path:object_id>/preview/send-test/",
                wrap(require_POST(self.test_send_view)),
                name=f"{name}_test_send",
            ),
            *super().get_urls(),
        ]

    def _url(self, view: str, obj: EmailTemplate, user_id: str = "") -> str:
        url = reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_{view}",
            args=[obj.pk],
            current_app=self.admin_site.name,
        )
        return f"{url}?{urlencode({'user': user_id})}" if user_id else url

    def _template(self, request: HttpRequest, object_id: str) -> EmailTemplate:
        template = self.get_object(request, unquote(object_id))
        if template is None:
            raise Http404("No such email template")
        return cast(EmailTemplate, template)

    def _end_user(self, request: HttpRequest, tenant: Tenant, user_id: str) -> EndUser | None:
        if not user_id:
            return None
        try:
            return user_get(tenant, user_id)
        except UserNotFoundError:
            self.message_user(
                request, f"No end-user “{user_id}” in this template's tenant.", messages.ERROR
            )
            return None

    def preview_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        template = self._template(request, object_id)
        if not self.has_view_or_change_permission(request, template):
            raise PermissionDenied
        user_id = request.GET.get("user", "").strip()
        end_user = self._end_user(request, template.tenant, user_id)
        rendered = None
        try:
            rendered = template_preview(template, end_user)
        except TemplateRenderError as exc:
            self.message_user(
                request, f"The template does not render: {exc.message}", messages.ERROR
            )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Preview of {template.name}",
            "original": template,
            "user_id": user_id,
            "end_user": end_user,
            "rendered": rendered,
            "can_send": self.has_change_permission(request, template),
            "staff_email": getattr(request.user, "email", ""),
        }
        return TemplateResponse(request, "admin/notifications/emailtemplate/preview.html", context)

    def test_send_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        template = self._template(request, object_id)
        if not self.has_change_permission(request, template):
            raise PermissionDenied
        user_id = request.POST.get("user", "").strip()
        back = HttpResponseRedirect(self._url("preview", template, user_id))
        to = getattr(request.user, "email", "")
        if not to:
            self.message_user(
                request,
                "Your staff account has no email address: add one to receive test emails.",
                messages.WARNING,
            )
            return back
        end_user = self._end_user(request, template.tenant, user_id)
        if end_user is None:
            if not user_id:
                self.message_user(request, "Choose an end-user to send a test.", messages.ERROR)
            return back
        try:
            email_test_send(template, end_user, to)
        except TemplateRenderError as exc:
            self.message_user(
                request, f"The test email was not sent: {exc.message}", messages.ERROR
            )
        except Exception as exc:  # whatever the configured mail backend raises: shown, not retried
            logger.warning("test email of template=%s failed: %s", template.public_id, exc)
            self.message_user(
                request, f"The test email was not sent: {type(exc).__name__}: {exc}", messages.ERROR
            )
        else:
            self.message_user(request, f"Sent a test email to {to}.", messages.SUCCESS)
        return back
