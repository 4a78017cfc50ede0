"""Dashboard pages for end-users (read-only, with actions contributed by higher apps) and custom
attribute definitions."""

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.utils import display_for_value
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern
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


@dataclass(frozen=True)
class EndUserCard:
    """One card of the end-user page, rendered by the app that contributes it."""

    slug: str  # the card's anchor on the page: #user-<slug>
    title: str
    body: SafeString
    wide: bool = False  # spans the page's two columns


# The end-user page as higher apps compose it (apps/pipeline/dashboard_user: streak calendar,
# points, achievements, leaderboards, notifications, with their actions). Each provider takes
# the request (for permissions and the selected tenant) and the user, and returns its cards.
END_USER_CARDS: list[Callable[[HttpRequest, EndUser], list[EndUserCard]]] = []
# Views beside the page (the actions' confirmation pages): each provider takes EndUserAdmin and
# returns URL patterns, included before Django's own so its "<object_id>/" catch-all does not
# swallow them.
END_USER_URLS: list[Callable[[admin.ModelAdmin], list[URLPattern]]] = []


def section_cards(user: EndUser) -> list[EndUserCard]:
    """END_USER_SECTIONS as wide cards after the others."""
    cards = []
    for section in END_USER_SECTIONS:
        name = getattr(section, "__name__", "")
        title = str(getattr(section, "short_description", name.replace("_", " ")))
        cards.append(
            EndUserCard(slug=name.replace("_", "-"), title=title, body=section(user), wide=True)
        )
    return cards


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
    dashboard only shows them: their page is a set of cards (END_USER_CARDS), whose actions
    call the same services as the admin API, each after a confirmation page."""

    change_form_template = "admin/users/enduser/change_form.html"
    list_display = ("external_id", "name", "email", "tenant_column", "control", "created")
    list_select_related = (TENANT_RELATED,)
    list_filter = (("tenant", TenantFilter), "control")
    search_fields = ("external_id", "name", "email")
    search_help_text = "Search by end-user id, name or email."
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

    class Media:
        css = {"all": ("users/user-page.css",)}

    def get_urls(self) -> list[Any]:
        extra = [pattern for provider in END_USER_URLS for pattern in provider(self)]
        return [*extra, *super().get_urls()]

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Any = None,
    ) -> HttpResponse:
        if obj is not None:
            context.update(
                cards=[card for provider in END_USER_CARDS for card in provider(request, obj)],
                section_cards=section_cards(obj),
                attribute_items=sorted(obj.attributes.items()),
                preference_items=sorted(obj.notification_preferences.items()),
            )
        return super().render_change_form(request, context, add, change, form_url, obj)


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
