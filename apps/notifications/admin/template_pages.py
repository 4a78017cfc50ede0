"""What the email and push template pages share: the list, the tenant's built-in templates given
on first sight of it, the layout around each kind's content fields, the writes through each
kind's services, and the preview for an end-user."""

from collections.abc import Callable
from typing import Any, ClassVar, cast
from urllib.parse import urlencode

from django.contrib import admin, messages
from django.db.models import Model, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.base import TENANT_RELATED, TenantColumnMixin, TenantFilter
from apps.accounts.admin.config_pages import ConfigAdmin, Heading, Section, View
from apps.accounts.choices import TenantStatus
from apps.accounts.models import Tenant
from apps.accounts.staff import selected_tenant
from apps.notifications.admin.forms import TemplateFormBase
from apps.notifications.errors import TemplateRenderError
from apps.users.errors import UserNotFoundError
from apps.users.models import EndUser
from apps.users.selectors import user_get

# A saved template's head: what it is for is set for good, so it is shown, not edited.
_SAVED_HEAD = ("tenant_column", "type", "public_id", "created", "updated")


class TemplateAdminBase(TenantColumnMixin, ConfigAdmin):
    """Email and push template pages. Each kind names its content fields, its services and its
    preview; the pages around them are the same."""

    config_form: type[TemplateFormBase]
    list_display: tuple[str, ...] = (
        "name",
        "type",
        "status",
        "priority",
        "tenant_column",
        "preview",
    )
    list_select_related = (TENANT_RELATED,)
    list_filter = ("type", "status", ("tenant", TenantFilter))
    ordering = ("tenant_id", "type", "-priority", "name")
    content_fields: ClassVar[tuple[str, ...]]
    variables_help: ClassVar[str]  # a template listing the variables and the syntax
    seeded_marker: ClassVar[str]  # NotificationSettings' field set once a tenant is seeded
    seed: ClassVar[Callable[..., None]]  # (tenant): give it its built-in templates
    # The kind's services: template_create(tenant, settings), template_update(tenant,
    # template, changes), template_delete(template).
    template_create: ClassVar[Callable[..., Any]]
    template_update: ClassVar[Callable[..., Any]]
    template_delete: ClassVar[Callable[..., Any]]
    # (template, end-user or None): the rendered template the preview page shows.
    render_preview: ClassVar[Callable[..., Any]]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # The change page and the preview read the tenant and its label too.
        return super().get_queryset(request).select_related(TENANT_RELATED)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        tenant = selected_tenant(request)
        if tenant is not None and self.has_view_or_change_permission(request):
            # As in the admin API's list, for the one tenant the page lists (never another
            # organization's). One query finds whether it still lacks its built-in templates;
            # once it has them, that is all it costs.
            unseeded = Tenant.objects.filter(pk=tenant.pk, status=TenantStatus.ACTIVE).filter(
                Q(notification_settings__isnull=True)
                | Q(**{f"notification_settings__{self.seeded_marker}__isnull": True})
            )
            if unseeded.exists():
                type(self).seed(tenant)
        return super().changelist_view(request, extra_context)

    def form_sections(self, obj: Any) -> list[Section]:
        # A template is written for its type's variables; another type is another template.
        head = ("type",) if obj is None else _SAVED_HEAD
        content = Heading("Content", description=render_to_string(self.variables_help))
        return [
            (None, (*head, "name", "status", "priority")),
            (content, self.content_fields),
            ("Audience", ("user_attributes",)),
        ]

    # --- writes ------------------------------------------------------------------------------

    def create(self, request: HttpRequest, form: TemplateFormBase) -> Model:
        tenant = form.valid_tenant
        # As the admin API does: a tenant's first template never stands in for its defaults.
        type(self).seed(tenant)
        return cast(Model, type(self).template_create(tenant, form.valid_settings))

    def update(self, request: HttpRequest, obj: Any, form: TemplateFormBase) -> None:
        type(self).template_update(obj.tenant, obj, form.valid_settings)

    def remove(self, request: HttpRequest, obj: Any) -> None:
        type(self).template_delete(obj)

    # --- the preview -------------------------------------------------------------------------

    @admin.display(description="preview")
    def preview(self, obj: Any) -> SafeString:
        return format_html('<a href="{}">Preview</a>', self.url("preview", obj))

    def object_views(self) -> dict[str, View]:
        return {"preview": self.preview_view}

    def preview_url(self, obj: Any, user_id: str = "") -> str:
        url = self.url("preview", obj)
        return f"{url}?{urlencode({'user': user_id})}" if user_id else url

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
        template = self.object_or_404(request, object_id, change=False)
        user_id = request.GET.get("user", "").strip()
        end_user = self._end_user(request, template.tenant, user_id)
        rendered = None
        try:
            rendered = self.rendered_for(request, template, end_user)
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
            **self.preview_context(request, template, rendered),
        }
        page = f"admin/{self.opts.app_label}/{self.opts.model_name}/preview.html"
        return TemplateResponse(request, page, context)

    def rendered_for(self, request: HttpRequest, template: Any, user: EndUser | None) -> Any:
        """The template rendered for the preview page (`user` None: sample data)."""
        return type(self).render_preview(template, user)

    def preview_context(self, request: HttpRequest, template: Any, rendered: Any) -> dict[str, Any]:
        """What the kind's preview page shows besides the rendered template (None when it does
        not render)."""
        return {}
