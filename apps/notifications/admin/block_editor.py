"""The email block editor: a split page, blocks on the left and a live preview on the right,
which writes a template's blocks through the template services; its preview and test-send
endpoints render the unsaved blocks as the services would (apps/notifications/previews.py).

The page works with or without JavaScript turned on for the form itself (the blocks travel as
JSON in one field); the block forms, the variable picker and the live preview are the small
script static/notifications/block-editor.js."""

import json
import logging
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.views.decorators.http import require_POST

from apps.accounts.models import Tenant
from apps.accounts.staff import selected_tenant
from apps.core.errors import ApplicationError
from apps.leaderboards.selectors import boards_listed
from apps.metrics.selectors import metric_definitions
from apps.notifications import configuration
from apps.notifications.choices import NotificationType, TemplateMode
from apps.notifications.delivery import email_test_send
from apps.notifications.domain import EmailTemplateSettings
from apps.notifications.errors import TemplateRenderError
from apps.notifications.models import EmailTemplate
from apps.notifications.previews import draft_template, template_preview
from apps.notifications.rendering import default_email_template
from apps.notifications.rendering.blocks import (
    BLOCK_TYPES,
    IMAGE_WIDTHS,
    STARTER_SUBJECTS,
    Operator,
    starter_blocks,
    variables_for,
)
from apps.points.selectors import points_config
from apps.users.errors import UserNotFoundError
from apps.users.models import EndUser
from apps.users.selectors import attribute_definitions, user_get

logger = logging.getLogger("gamify.notifications")

MAX_DRAFT_BYTES = 1_000_000  # a preview or test request's body

OPERATOR_LABELS = {
    Operator.IS: "is",
    Operator.IS_NOT: "is not",
    Operator.IS_SET: "is set",
    Operator.IS_NOT_SET: "is not set",
    Operator.AT_LEAST: "is at least",
    Operator.BELOW: "is below",
}


def test_address_problem(to: str) -> str | None:
    """Why `to` cannot receive a test email, or None."""
    if not to:
        return "Give the address to send the test to."
    try:
        validate_email(to)
    except DjangoValidationError:
        return f"“{to}” is not an email address."
    return None


def test_send(template: EmailTemplate, user: EndUser | None, to: str) -> tuple[bool, str]:
    """Send `template` as a test to `to`: (sent, what to tell staff). Images are under
    PUBLIC_URL, which the recipient's mail client can reach."""
    try:
        email_test_send(template, user, to)
    except TemplateRenderError as exc:
        return False, f"The test email was not sent: {exc.message}"
    except Exception as exc:  # whatever the configured mail backend raises: shown, not retried
        logger.warning("test email of template=%s failed: %s", template.public_id, exc)
        return False, f"The test email was not sent: {type(exc).__name__}: {exc}"
    return True, f"Sent a test email to {to}."


def _editor_lists(tenant: Tenant, type: str) -> dict[str, Any]:
    """What the editor's pickers offer: the variables of the type, the tenant's points systems,
    boards and user attributes, the block types and the operators."""
    attributes = sorted(attribute_definitions(tenant).user_keys)
    systems = sorted(points_config(tenant))
    boards = sorted(b.key for b in boards_listed(tenant, include_finished=False))
    return {
        "variables": variables_for(
            type,
            attribute_keys=attributes,
            metric_keys=sorted(metric_definitions(tenant)),
            points_keys=systems,
            board_keys=boards,
        ),
        "attributes": attributes,
        "pointsSystems": systems,
        "leaderboards": boards,
        "blockTypes": BLOCK_TYPES,
        "operators": OPERATOR_LABELS,
        "imageWidths": IMAGE_WIDTHS,
    }


class BlockEditorMixin:
    """The block editor's pages, for EmailTemplateAdmin (a ConfigAdmin)."""

    def editor_urls(self) -> list[URLPattern]:
        admin: Any = self
        prefix = f"{admin.opts.app_label}_{admin.opts.model_name}_"
        routes = [
            ("blocks/new/", admin._wrap(self.blocks_new_view), "blocks_new"),
            (
                "blocks/preview/",
                admin._wrap(require_POST(self.blocks_preview_view)),
                "preview_draft",
            ),
            ("blocks/send-test/", admin._wrap(require_POST(self.blocks_send_view)), "send_draft"),
            ("<path:object_id>/blocks/", admin._wrap(self.blocks_edit_view), "blocks"),
        ]
        return [path(route, view, name=prefix + name) for route, view, name in routes]

    # --- the page ------------------------------------------------------------------------------

    def blocks_new_view(self, request: HttpRequest) -> HttpResponse:
        admin: Any = self
        tenant = selected_tenant(request)
        if tenant is None or not admin.has_add_permission(request):
            raise PermissionDenied
        type = request.GET.get("type") or request.POST.get("type") or ""
        if type not in NotificationType.values:
            type = NotificationType.ACHIEVEMENT_COMPLETED
        default = default_email_template(type)
        draft = {
            "name": default.name,
            "type": type,
            "subject": STARTER_SUBJECTS.get(type, default.subject),
            "blocks": starter_blocks(type),
        }
        return self._editor(request, tenant, None, draft)

    def blocks_edit_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        admin: Any = self
        template = admin.object_or_404(request, object_id, change=request.method == "POST")
        blocks = template.blocks if template.mode == TemplateMode.BLOCKS else None
        draft = {
            "name": template.name,
            "type": template.type,
            "subject": template.subject,
            "blocks": blocks if blocks is not None else starter_blocks(template.type),
        }
        return self._editor(request, template.tenant, template, draft)

    def _editor(
        self,
        request: HttpRequest,
        tenant: Tenant,
        template: EmailTemplate | None,
        draft: dict[str, Any],
    ) -> HttpResponse:
        admin: Any = self
        error = ""
        if request.method == "POST":
            if template is not None and not admin.has_change_permission(request, template):
                raise PermissionDenied
            if template is not None and request.POST.get("action") == "advanced":
                configuration.email_template_update(
                    tenant, template, EmailTemplateSettings(mode=TemplateMode.ADVANCED)
                )
                admin.message_user(
                    request,
                    "The template is in advanced mode: its HTML and text are yours to edit.",
                    messages.SUCCESS,
                )
                return HttpResponseRedirect(admin.url("change", template))
            draft, error = self._posted(request, template, draft)
            if not error:
                saved = self._save_blocks(tenant, template, draft)
                if isinstance(saved, EmailTemplate):
                    verb = "added" if template is None else "saved"
                    admin.message_user(
                        request, f"The email template “{saved.name}” was {verb}.", messages.SUCCESS
                    )
                    return HttpResponseRedirect(admin.url("blocks", saved))
                error = saved
        can_change = (
            admin.has_change_permission(request, template)
            if template is not None
            else admin.has_add_permission(request)
        )
        opts = admin.opts
        editor = {
            **_editor_lists(tenant, draft["type"]),
            "draft": draft,
            "previewUrl": reverse(f"admin:{opts.app_label}_{opts.model_name}_preview_draft"),
            "sendUrl": reverse(f"admin:{opts.app_label}_{opts.model_name}_send_draft"),
            "template": str(template.pk) if template is not None else "",
        }
        context = {
            **admin.admin_site.each_context(request),
            "opts": opts,
            "title": f"Blocks of {template.name}" if template else "New email with blocks",
            "original": template,
            "tenant": tenant,
            "draft": draft,
            "blocks_json": json.dumps(draft["blocks"]),
            "editor": editor,
            "error": error,
            "types": NotificationType.choices,
            "advanced": template is not None and template.mode == TemplateMode.ADVANCED,
            "can_change": can_change,
            "staff_email": getattr(request.user, "email", ""),
        }
        page = f"admin/{opts.app_label}/{opts.model_name}/blocks.html"
        return TemplateResponse(request, page, context)

    @staticmethod
    def _posted(
        request: HttpRequest, template: EmailTemplate | None, draft: dict[str, Any]
    ) -> tuple[dict[str, Any], str]:
        """The posted draft, and what is wrong with its form (not its blocks: the services
        judge those)."""
        posted = {
            "name": request.POST.get("name", "").strip(),
            "type": draft["type"] if template is not None else request.POST.get("type", ""),
            "subject": request.POST.get("subject", "").strip(),
            "blocks": draft["blocks"],
        }
        try:
            posted["blocks"] = json.loads(request.POST.get("blocks", ""))
        except ValueError:
            return posted, "The blocks could not be read: reload the page and try again."
        if posted["type"] not in NotificationType.values:
            return {**posted, "type": draft["type"]}, "Choose the type of the email."
        if not posted["name"]:
            return posted, "Give the template a name."
        if not posted["subject"]:
            return posted, "Give the email a subject."
        return posted, ""

    @staticmethod
    def _save_blocks(
        tenant: Tenant, template: EmailTemplate | None, draft: dict[str, Any]
    ) -> EmailTemplate | str:
        """The saved template, or the services' refusal."""
        try:
            if template is None:
                configuration.email_templates_seed(tenant)  # as the add page does
                return configuration.email_template_create(
                    tenant,
                    EmailTemplateSettings(
                        type=draft["type"],
                        name=draft["name"],
                        subject=draft["subject"],
                        mode=TemplateMode.BLOCKS,
                        blocks=draft["blocks"],
                    ),
                )
            return configuration.email_template_update(
                tenant,
                template,
                EmailTemplateSettings(
                    name=draft["name"],
                    subject=draft["subject"],
                    mode=TemplateMode.BLOCKS,
                    blocks=draft["blocks"],
                ),
            )
        except ApplicationError as exc:
            return exc.message

    # --- the live preview and the test send ------------------------------------------------------

    def _draft_request(
        self, request: HttpRequest, *, change: bool
    ) -> tuple[EmailTemplate, EndUser | None, dict[str, Any]] | JsonResponse:
        """The unsaved template a preview or test request carries (JSON: template or type,
        subject, blocks, user), in the tenant of its template (else the selected one), and the
        end-user to render it for."""
        admin: Any = self
        if len(request.body) > MAX_DRAFT_BYTES:
            return JsonResponse({"error": "The blocks are too large."}, status=413)
        try:
            body = json.loads(request.body)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return JsonResponse({"error": "The request must be a JSON object."}, status=400)
        template_id = str(body.get("template") or "")
        if template_id:
            saved = admin.object_or_404(request, template_id, change=change)
            tenant, type = saved.tenant, saved.type
        else:
            tenant, type = selected_tenant(request), body.get("type")
            allowed = (
                admin.has_add_permission(request)
                if change
                else admin.has_view_or_change_permission(request)
            )
            if tenant is None or not allowed:
                raise PermissionDenied
        if type not in NotificationType.values:
            return JsonResponse({"error": "Choose the type of the email."}, status=422)
        subject = body.get("subject")
        if not isinstance(subject, str) or not subject.strip():
            return JsonResponse({"error": "Give the email a subject."}, status=422)
        try:
            draft = draft_template(tenant, type, subject, body.get("blocks"))
        except ApplicationError as exc:
            return JsonResponse({"error": exc.message}, status=422)
        user = None
        user_id = str(body.get("user") or "").strip()
        if user_id:
            try:
                user = user_get(tenant, user_id)
            except UserNotFoundError:
                return JsonResponse(
                    {"error": f"No end-user “{user_id}” in this tenant."}, status=422
                )
        return draft, user, body

    def blocks_preview_view(self, request: HttpRequest) -> HttpResponse:
        found = self._draft_request(request, change=False)
        if isinstance(found, JsonResponse):
            return found
        draft, user, _ = found
        base_url = request.build_absolute_uri("/")  # sample images from this very dashboard
        try:
            rendered = template_preview(draft, user, base_url=base_url)
        except TemplateRenderError as exc:
            return JsonResponse({"error": f"The email does not render: {exc.message}"}, status=422)
        return JsonResponse(
            {"subject": rendered.subject, "html": rendered.html, "text": rendered.text}
        )

    def blocks_send_view(self, request: HttpRequest) -> HttpResponse:
        found = self._draft_request(request, change=True)
        if isinstance(found, JsonResponse):
            return found
        draft, user, body = found
        to = str(body.get("to") or "").strip()
        problem = test_address_problem(to)
        if problem is not None:
            return JsonResponse({"error": problem}, status=422)
        sent, said = test_send(draft, user, to)
        body = {"message": said} if sent else {"error": said}
        return JsonResponse(body, status=200 if sent else 502)
