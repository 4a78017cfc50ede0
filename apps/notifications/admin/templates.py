"""Dashboard pages for email templates: written by the template services, with a preview and a
test send."""

import logging
from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import URLPattern, path
from django.views.decorators.http import require_POST

from apps.notifications import configuration
from apps.notifications.admin.forms import template_form
from apps.notifications.admin.template_pages import TemplateAdminBase
from apps.notifications.delivery import email_test_send
from apps.notifications.domain import EmailTemplateSettings
from apps.notifications.errors import TemplateRenderError
from apps.notifications.models import EmailTemplate
from apps.notifications.previews import template_preview

logger = logging.getLogger("gamify.notifications")


_PARTS = ("subject", "html", "text")
# The variables and syntax templates may use, shown above the content fields.
VARIABLES_HELP = "admin/notifications/emailtemplate/variables.html"


_Base: Any = template_form(
    EmailTemplateSettings, EmailTemplate, {"subject": 0, "html": 24, "text": 10}
)


class EmailTemplateForm(_Base):
    required_on_edit = ("subject", "html")


@admin.register(EmailTemplate)
class EmailTemplateAdmin(TemplateAdminBase):
    config_form = EmailTemplateForm
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
        view = self._wrap(require_POST(self.test_send_view))
        # Before the preview's own: its "<object_id>/" catch-all would swallow it.
        name = f"{self.opts.app_label}_{self.opts.model_name}_test_send"
        return [path("<path:object_id>/preview/send-test/", view, name=name), *super().get_urls()]

    def preview_context(
        self, request: HttpRequest, template: EmailTemplate, rendered: Any
    ) -> dict[str, Any]:
        return {
            "can_send": self.has_change_permission(request, template),
            "staff_email": getattr(request.user, "email", ""),
        }

    def test_send_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        template = self.object_or_404(request, object_id, change=True)
        user_id = request.POST.get("user", "").strip()
        back = HttpResponseRedirect(self.preview_url(template, user_id))
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
