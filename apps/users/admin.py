"""Dashboard pages for end-users (read-only) and custom attribute definitions."""

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.utils import display_for_value
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from apps.accounts.admin.base import (
    TENANT_RELATED,
    ReadOnlyAdmin,
    ServiceAdmin,
    TenantColumnMixin,
    TenantFilter,
    key_field,
)
from apps.users.models import Attribute, EndUser
from apps.users.services import attribute_create, attribute_delete, attribute_update

# Read-only sections of the end-user page contributed by higher apps (metric totals, recent
# events, later streaks and points): users sits below them and cannot import their models, so
# they register a callable taking the EndUser, decorated with @admin.display for its label.
END_USER_SECTIONS: list[Callable[[EndUser], Any]] = []


def end_user_section(section: Callable[[EndUser], Any]) -> Callable[[EndUser], Any]:
    END_USER_SECTIONS.append(section)
    return section


def _cell(value: Any) -> str:
    if isinstance(value, Decimal):
        # Amounts are stored with 6 decimal places; 12.5 reads better than 12.500000.
        return format(value.normalize(), "f")
    return str(display_for_value(value, "-"))


def html_table(headers: tuple[str, ...], rows: list[tuple[Any, ...]]) -> SafeString:
    """A small read-only table for a detail page; every cell is escaped."""
    if not rows:
        return format_html("{}", "-")
    head = format_html_join("", "<th>{}</th>", ((h,) for h in headers))
    cells = "<td>{}</td>" * len(headers)
    body = format_html_join("", f"<tr>{cells}</tr>", ([_cell(v) for v in row] for row in rows))
    return format_html("<table><thead><tr>{}</tr></thead><tbody>{}</tbody></table>", head, body)


@admin.register(EndUser)
class EndUserAdmin(TenantColumnMixin, ReadOnlyAdmin):
    """End-users are written by the API (identification is an upsert in the pipeline), so the
    dashboard only shows them."""

    list_display = ("external_id", "name", "email", "tenant_column", "control", "created")
    list_select_related = (TENANT_RELATED,)
    list_filter = (("tenant", TenantFilter), "control")
    search_fields = ("external_id", "email")
    search_help_text = "Search by end-user id or email."
    # Counting every end-user again for "N total" is a second full scan on large tables.
    show_full_result_count = False
    fields = (
        "tenant",
        "external_id",
        "name",
        "email",
        "tz",
        "sign_up_date",
        "subscribe_to_emails",
        "control",
        "attributes",
        "device_token_count",
        "created",
        "updated",
    )
    readonly_fields = fields

    @admin.display(description="device tokens")
    def device_token_count(self, obj: EndUser) -> int:
        # The tokens address the user's devices; their number is all staff need to see.
        return len(obj.device_tokens)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[Any, ...]:
        return (*self.fields, *END_USER_SECTIONS)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[Any, ...]:
        return (*self.readonly_fields, *END_USER_SECTIONS)


class AttributeForm(forms.ModelForm):
    key = key_field(100)

    class Meta:
        model = Attribute
        fields = ("tenant", "name", "key", "type")


@admin.register(Attribute)
class AttributeAdmin(TenantColumnMixin, ServiceAdmin):
    form = AttributeForm
    list_display = ("key", "name", "type", "tenant_column", "created")
    list_select_related = (TENANT_RELATED,)
    list_filter = ("type", ("tenant", TenantFilter))
    search_fields = ("key", "name")

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        if obj is None:
            return ("tenant", "name", "key", "type")
        return ("tenant", "name", "key", "type", "public_id", "created", "updated")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        # The key and type are what API calls and stored values refer to; only the name changes.
        if obj is None:
            return ()
        return ("tenant", "key", "type", "public_id", "created", "updated")

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> Attribute:
        data = form.cleaned_data
        return attribute_create(
            data["tenant"], name=data["name"], key=data["key"], type=data["type"]
        )

    def service_update(
        self, request: HttpRequest, current: Attribute, form: forms.ModelForm
    ) -> None:
        attribute_update(current, name=form.cleaned_data["name"])

    def service_delete(self, request: HttpRequest, obj: Attribute) -> None:
        attribute_delete(obj)
