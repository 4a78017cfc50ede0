"""Dashboard pages for email templates: written by the template services, with a preview and a
test send."""

import logging
from typing import Any, ClassVar

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import URLPattern, path
from django.views.decorators.http import require_POST

from apps.accounts.admin.base import text_rules
from apps.notifications import configuration, domain
from apps.notifications.admin.forms import TemplateFormBase, source_line, source_text
from apps.notifications.admin.template_pages import TemplateAdminBase
from apps.notifications.delivery import email_test_send
from apps.notifications.errors import TemplateRenderError
from apps.notifications.models import EmailTemplate
from apps.notifications.previews import template_preview

logger = logging.getLogger("gamify.notifications")


_PARTS = ("subject", "html", "text")
# Content field -> the services' argument and the admin API's name: the same.
_CONTENT = {name: name for name in _PARTS}
# The variables and syntax templates may use, shown above the content fields.
VARIABLES_HELP = "admin/notifications/emailtemplate/variables.html"


class EmailTemplateForm(TemplateFormBase):
    subject = source_line()
    html = source_text(24, label="HTML")
    text = source_text(10, help_text="Empty: derived from the HTML.")
    arguments: ClassVar[dict[str, str]] = {**TemplateFormBase.arguments, **_CONTENT}
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


@admin.register(EmailTemplate)
class EmailTemplateAdmin(TemplateAdminBase):
    form = EmailTemplateForm
    search_fields = ("name", "subject")
    content_fields = _PARTS
    variables_help = VARIABLES_HELP
    seeded_marker = "defaults_seeded_at"
    seed = staticmethod(configuration.email_templates_seed)
    template_create = staticmethod(configuration.email_template_create)
    template_update = staticmethod(configuration.email_template_update)
    template_delete = staticmethod(configuration.email_template_delete)
    render_preview = staticmethod(template_preview)

    # --- the preview's test send --------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view(require_POST(self.test_send_view))
        # Before Django's own: its "<object_id>/" catch-all would swallow it.
        return [
            path("<path:object_id>/preview/send-test/", view, name=self._url_name("test_send")),
            *super().get_urls(),
        ]

    def preview_context(
        self, request: HttpRequest, template: EmailTemplate, rendered: Any
    ) -> dict[str, Any]:
        return {
            "can_send": self.has_change_permission(request, template),
            "staff_email": getattr(request.user, "email", ""),
        }

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
