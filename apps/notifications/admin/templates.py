"""Dashboard pages for email templates: written by the template services, with a preview, a
test send to any address and, for templates written with blocks, the block editor
(block_editor.py)."""

import logging
from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import URLPattern, path
from django.views.decorators.http import require_POST

from apps.notifications import configuration
from apps.notifications.admin.block_editor import (
    BlockEditorMixin,
    test_address_problem,
    test_send,
)
from apps.notifications.admin.forms import template_form
from apps.notifications.admin.template_pages import TemplateAdminBase
from apps.notifications.choices import TemplateMode
from apps.notifications.domain import EmailTemplateSettings
from apps.notifications.models import EmailTemplate
from apps.notifications.previews import template_preview

logger = logging.getLogger("gamify.notifications")


_PARTS = ("subject", "html", "text")
# The variables and syntax templates may use, shown above the content fields.
VARIABLES_HELP = "admin/notifications/emailtemplate/variables.html"


_Base: Any = template_form(
    EmailTemplateSettings,
    EmailTemplate,
    {"subject": 0, "html": 24, "text": 10},
    skip=("mode", "blocks"),  # written in the block editor
)


class EmailTemplateForm(_Base):
    required_on_edit = ("subject", "html")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance is not None and self.instance.mode == TemplateMode.BLOCKS:
            # Generated from the blocks: shown, and changed only in the block editor.
            for name in ("html", "text"):
                self.fields[name].disabled = True
                self.fields[name].required = False
                self.fields[name].help_text = (
                    "Generated from the blocks: edit them in the block editor, or switch the "
                    "template to advanced mode there."
                )


@admin.register(EmailTemplate)
class EmailTemplateAdmin(BlockEditorMixin, TemplateAdminBase):
    config_form = EmailTemplateForm
    search_fields = ("name", "subject")
    list_display = ("name", "type", "mode", "status", "priority", "tenant_column", "preview")
    content_fields = _PARTS
    variables_help = VARIABLES_HELP
    seeded_marker = "defaults_seeded_at"
    seed = staticmethod(configuration.email_templates_seed)
    template_create = staticmethod(configuration.email_template_create)
    template_update = staticmethod(configuration.email_template_update)
    template_delete = staticmethod(configuration.email_template_delete)
    render_preview = staticmethod(template_preview)

    def rendered_for(self, request: HttpRequest, template: Any, user: Any) -> Any:
        # Sample images from this very dashboard, whatever PUBLIC_URL says.
        return template_preview(template, user, base_url=request.build_absolute_uri("/"))

    # --- the preview's test send --------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        view = self._wrap(require_POST(self.test_send_view))
        # Before the preview's own: its "<object_id>/" catch-all would swallow it.
        name = f"{self.opts.app_label}_{self.opts.model_name}_test_send"
        return [
            path("<path:object_id>/preview/send-test/", view, name=name),
            *self.editor_urls(),
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
        template = self.object_or_404(request, object_id, change=True)
        user_id = request.POST.get("user", "").strip()
        back = HttpResponseRedirect(self.preview_url(template, user_id))
        to = request.POST.get("to", "").strip()
        problem = test_address_problem(to)
        if problem is not None:
            self.message_user(request, problem, messages.ERROR)
            return back
        end_user = self._end_user(request, template.tenant, user_id)
        if end_user is None and user_id:
            return back  # told why by _end_user
        sent, said = test_send(template, end_user, to)
        self.message_user(request, said, messages.SUCCESS if sent else messages.ERROR)
        return back
