"""Dashboard pages for push templates, with a preview; written by the push services."""

import json
from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from apps.accounts.admin.declared import own_input
from apps.accounts.admin.forms import ParsedField, text_rules
from apps.notifications import domain
from apps.notifications.admin.forms import CODE_ATTRS, template_form
from apps.notifications.admin.template_pages import TemplateAdminBase
from apps.notifications.context import app_context
from apps.notifications.domain import PushTemplateSettings
from apps.notifications.models import PushTemplate
from apps.notifications.previews import push_template_preview
from apps.notifications.push import configuration

VARIABLES_HELP = "admin/notifications/pushtemplate/variables.html"


class PushDataField(ParsedField, forms.CharField):
    """The custom data of a notification as staff type it: one `key: value` per line, or a JSON
    object for keys with a colon or values over several lines."""

    widget = forms.Textarea(attrs={**CODE_ATTRS, "rows": 4})

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        super().__init__(strip=False, **kwargs)

    def to_python(self, value: Any) -> dict[str, str]:  # type: ignore[override]
        text = str(super().to_python(value)).strip()
        if text.startswith("{"):
            try:
                data = json.loads(text)
            except ValueError as exc:
                raise forms.ValidationError(f"is not valid JSON: {exc}") from exc
            if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
                raise forms.ValidationError("must be a JSON object of strings")
            return data
        data = {}
        for line in text.splitlines():
            if not line.strip():
                continue
            key, sep, item = line.partition(":")
            key = key.strip()
            if not sep or not key:
                raise forms.ValidationError(f"“{line.strip()}”: write each entry as key: value")
            if key in data:
                raise forms.ValidationError(f"“{key}” appears twice")
            data[key] = item.strip()
        return data


def data_text(data: dict[str, str]) -> str:
    """The data as the form shows it, keys sorted (PostgreSQL's jsonb keeps no order): lines
    when they say it exactly, JSON otherwise."""
    if all(":" not in k and "\n" not in k + v and v == v.strip() for k, v in data.items()):
        return "\n".join(f"{key}: {data[key]}" for key in sorted(data))
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True)


def _data_values(data: dict[str, str]) -> None:
    """Each value of the custom data, as long as the admin API allows (its message names the
    key)."""
    rule = text_rules(domain.MAX_TEMPLATE_TEXT)[0]
    problems = []
    for key, value in data.items():
        try:
            rule(value)
        except forms.ValidationError as exc:
            problems += [f"{key}: {message}" for message in exc.messages]
    if problems:
        raise forms.ValidationError(problems)


_Base: Any = template_form(
    PushTemplateSettings,
    PushTemplate,
    {"title": 0, "body": 5},
    widgets={"url": forms.TextInput(attrs=CODE_ATTRS)},
)


class PushTemplateForm(_Base):
    data = own_input(PushTemplateSettings, "data", PushDataField, validators=[_data_values])
    required_on_edit = ("title", "body")

    def initial_from(self, obj: PushTemplate) -> dict[str, Any]:
        return {**super().initial_from(obj), "data": data_text(obj.data)}


# "title: line 1: ...", "data.screen: ...", "data holds at most 20 keys": the part comes first.
@admin.register(PushTemplate)
class PushTemplateAdmin(TemplateAdminBase):
    config_form = PushTemplateForm
    search_fields = ("name", "title")
    content_fields = ("title", "body", "url", "data")
    variables_help = VARIABLES_HELP
    seeded_marker = "push_defaults_seeded_at"
    seed = staticmethod(configuration.push_templates_seed)
    template_create = staticmethod(configuration.push_template_create)
    template_update = staticmethod(configuration.push_template_update)
    template_delete = staticmethod(configuration.push_template_delete)
    render_preview = staticmethod(push_template_preview)

    def preview_context(
        self, request: HttpRequest, template: PushTemplate, rendered: Any
    ) -> dict[str, Any]:
        return {
            # Pairs, not the dict: the template language would read a key named "items" as
            # the dict's method.
            "data_rows": list(rendered.data.items()) if rendered else [],
            "app_name": app_context(template.tenant)["name"],
        }
