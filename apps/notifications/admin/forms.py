"""What the notification pages share: errors next to their input, and the template pages'
list, seeding and layout."""

from collections.abc import Callable
from typing import Any, ClassVar, cast

from django import forms
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from apps.accounts.admin.base import TENANT_RELATED, ServiceAdmin, TenantColumnMixin, TenantFilter
from apps.accounts.choices import TenantStatus
from apps.accounts.models import Tenant


def with_field_errors(
    form: type[forms.ModelForm], field_for: Callable[[str, forms.ModelForm], str | None]
) -> type[forms.ModelForm]:
    """ServiceAdmin shows a service's refusal above the form; when the message names what
    failed ("html: line 3: ...", "signingKey ..."), `field_for` finds the input it belongs to
    and the error goes next to it instead."""

    class FieldErrorForm(form):  # type: ignore[valid-type,misc]
        def clean(self) -> dict[str, Any]:
            try:
                return cast(dict[str, Any], super().clean())
            except forms.ValidationError as exc:
                name = field_for(exc.messages[0], self) if len(exc.messages) == 1 else None
                if name is None or name not in self.fields:
                    raise
                self.add_error(name, exc)
                return self.cleaned_data

    return FieldErrorForm


class TemplateAdminBase(TenantColumnMixin, ServiceAdmin):
    """Email and push template pages: the same list, the tenant's built-in templates given on
    first sight of the list, and the same layout around each kind's content fields."""

    list_display = ("name", "type", "status", "priority", "tenant_column", "preview")
    list_select_related = (TENANT_RELATED,)
    list_filter = ("type", "status", ("tenant", TenantFilter))
    ordering = ("tenant_id", "type", "-priority", "name")
    content_fields: ClassVar[tuple[str, ...]]
    variables_help: ClassVar[str]  # a template listing the variables and the syntax
    seeded_marker: ClassVar[str]  # NotificationSettings' field set once a tenant is seeded
    seed: ClassVar[Callable[..., None]]  # (tenant): give it its built-in templates

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # The change page and the preview read the tenant and its label too.
        return super().get_queryset(request).select_related(TENANT_RELATED)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if self.has_view_or_change_permission(request):
            # As in the admin API's list. One query finds the tenants still without their
            # built-in templates; once every tenant has them, that is all it costs.
            unseeded = Tenant.objects.filter(status=TenantStatus.ACTIVE).filter(
                Q(notification_settings__isnull=True)
                | Q(**{f"notification_settings__{self.seeded_marker}__isnull": True})
            )
            for tenant in unseeded:
                type(self).seed(tenant)
        return super().changelist_view(request, extra_context)

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[tuple[Any, Any]]:
        if obj is None:
            head: tuple[str, ...] = ("tenant", "type")
        else:
            head = ("tenant_column", "type", "public_id", "created", "updated")
        return [
            (None, {"fields": (*head, "name", "status", "priority")}),
            (
                "Content",
                {
                    "fields": self.content_fields,
                    "description": render_to_string(self.variables_help),
                },
            ),
            ("Audience", {"fields": ("user_attributes",)}),
        ]
