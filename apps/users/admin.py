"""Dashboard pages for end-users (read-only, with actions contributed by higher apps) and custom
attribute definitions."""

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.timesince import timesince

from apps.accounts.admin.base import (
    TENANT_RELATED,
    PageRowsChangeList,
    ReadOnlyAdmin,
    TenantColumnMixin,
    TenantFilter,
)
from apps.accounts.admin.config_pages import ConfigAdmin, Section
from apps.accounts.admin.declared import declared_form
from apps.accounts.admin.forms import key_field
from apps.accounts.staff import selected_tenant
from apps.core.shown_time import moment_shown
from apps.users.choices import AttributeType
from apps.users.configuration import attribute_create, attribute_delete, attribute_update
from apps.users.domain import AttributeSettings
from apps.users.end_user_page import (
    END_USER_CARDS,
    END_USER_COLUMNS,
    END_USER_SECTIONS,
    END_USER_URLS,
    EndUserCard,
    EndUserColumn,
    last_active_of,
)
from apps.users.models import Attribute, EndUser


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


# What page_rows_load leaves on each row of the list: the cells of END_USER_COLUMNS by title,
# and the latest event's moment.
_CELLS, _LAST_ACTIVE = "list_cells", "list_last_active"


def _column(column: EndUserColumn) -> Callable[[EndUser], str]:
    @admin.display(description=column.title)
    def cell(obj: EndUser) -> str:
        return str(getattr(obj, _CELLS, {}).get(column.title, "-"))

    cell.__name__ = f"column_{column.title.lower()}"
    return cell


def last_active_text(moment: Any) -> SafeString | str:
    """When the user's latest event was, and how long ago."""
    if moment is None:
        return "never"
    return format_html(
        '<span class="user-moment">{}</span> <span class="user-quiet">({} ago)</span>',
        moment_shown(moment),
        timesince(moment),
    )


@admin.register(EndUser)
class EndUserAdmin(TenantColumnMixin, ReadOnlyAdmin):
    """End-users are written by the API (identification is an upsert in the pipeline), so the
    dashboard only shows them: their page is a set of cards (END_USER_CARDS), whose actions
    call the same services as the admin API, each after a confirmation page. The list shows
    each user's level and streak (END_USER_COLUMNS) and latest event, read for the whole page
    at once."""

    change_form_template = "admin/users/enduser/change_form.html"
    list_display = (
        "external_id",
        "name",
        "email",
        "tenant_column",
        "last_active",
        "control",
        "created",
    )
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

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[PageRowsChangeList]:
        return PageRowsChangeList

    def get_list_display(self, request: HttpRequest) -> Any:
        columns = list(super().get_list_display(request))
        at = columns.index("last_active")
        return [*columns[:at], *(_column(c) for c in END_USER_COLUMNS), *columns[at:]]

    def page_rows_load(self, request: HttpRequest, rows: list[EndUser]) -> None:
        tenant, now = selected_tenant(request), timezone.now()
        loaded = [(c.title, c.load(tenant, rows, now)) for c in END_USER_COLUMNS if tenant]
        latest = last_active_of(rows)
        for row in rows:
            setattr(row, _CELLS, {title: cells.get(row.pk, "-") for title, cells in loaded})
            setattr(row, _LAST_ACTIVE, latest.get(row.pk))

    @admin.display(description="Last active")
    def last_active(self, obj: EndUser) -> SafeString | str:
        return last_active_text(getattr(obj, _LAST_ACTIVE, None))

    @admin.display(description="device tokens")
    def device_token_count(self, obj: EndUser) -> int:
        # The tokens address the user's devices; their number is all staff need to see.
        return len(obj.device_tokens)

    class Media:
        css = {"all": ("users/user-page.css",)}

    def get_urls(self) -> list[Any]:
        extra = [pattern for provider in END_USER_URLS for pattern in provider(self)]
        return [*extra, *super().get_urls()]

    def form_page_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        if obj is None:
            return {}
        return {
            "cards": [card for provider in END_USER_CARDS for card in provider(request, obj)],
            "section_cards": section_cards(obj),
            "last_active": last_active_text(last_active_of([obj])[obj.pk]),
            "attribute_items": sorted(obj.attributes.items()),
            "preference_items": sorted(obj.notification_preferences.items()),
        }


_Declared: Any = declared_form(
    AttributeSettings,
    # Staff choose the type: a wrong one is not undone.
    choices={"type": [("", "---------"), *AttributeType.choices]},
    widgets={"name": forms.TextInput(attrs={"class": "vTextField"})},
)


class AttributeForm(_Declared):
    """An attribute definition's settings as staff read them: the key and type are what API
    calls and stored values refer to, so they are given once, when adding; only the name
    changes."""

    # The dashboard's wording of the key rule, which staff have always read here.
    key = key_field(100)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance is not None:
            del self.fields["key"], self.fields["type"]


@admin.register(Attribute)
class AttributeAdmin(TenantColumnMixin, ConfigAdmin):
    config_form = AttributeForm
    list_display = ("key", "name", "type", "tenant_column", "created")
    list_select_related = (TENANT_RELATED,)
    list_filter = ("type", ("tenant", TenantFilter))
    search_fields = ("key", "name")

    def form_sections(self, obj: Attribute | None) -> list[Section]:
        if obj is None:
            return [(None, ["name", "key", "type"])]
        fields = ["tenant_column", "name", "key", "type", "public_id", "created", "updated"]
        return [(None, fields)]

    def create(self, request: HttpRequest, form: AttributeForm) -> Attribute:
        return attribute_create(form.valid_tenant, form.declared_settings())

    def update(self, request: HttpRequest, obj: Attribute, form: AttributeForm) -> None:
        attribute_update(obj.tenant, obj, form.declared_settings())

    def remove(self, request: HttpRequest, obj: Attribute) -> None:
        attribute_delete(obj)
