"""Dashboard pages for push templates, with a preview; written by the push services."""

import json
import re
from typing import Any, ClassVar, cast
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.base import text_rules
from apps.accounts.models import Tenant
from apps.notifications import domain
from apps.notifications.admin.forms import TemplateAdminBase, TemplateFormBase, with_field_errors
from apps.notifications.context import app_context
from apps.notifications.errors import TemplateRenderError
from apps.notifications.models import PushTemplate
from apps.notifications.previews import push_template_preview
from apps.notifications.push import services
from apps.users.errors import UserNotFoundError
from apps.users.models import EndUser
from apps.users.selectors import user_get

_CODE = {"spellcheck": "false", "style": "font-family: monospace; width: 100%"}
_SECRET = {**_CODE, "autocomplete": "off", "rows": 6}


# Template part (as the API and render errors name it) -> form field.
_PARTS = {"title": "title", "body": "body_text", "url": "url", "data": "data"}
VARIABLES_HELP = "admin/notifications/pushtemplate/variables.html"


class PushDataField(forms.CharField):
    """The custom data of a notification as staff type it: one `key: value` per line, or a JSON
    object for keys with a colon or values over several lines."""

    widget = forms.Textarea(attrs={**_CODE, "rows": 4})

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, strip=False, **kwargs)

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

    def has_changed(self, initial: Any, data: Any) -> bool:
        try:
            return bool(self.to_python(initial) != self.to_python(data))
        except forms.ValidationError:
            return True


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


class PushTemplateForm(TemplateFormBase):
    title = forms.CharField(
        required=False, widget=forms.TextInput(attrs={**_CODE, "maxlength": 1000})
    )
    # Not "body", the name of the service's argument: a form has no field of that name.
    body_text = forms.CharField(
        required=False,
        strip=False,
        label="Body",
        widget=forms.Textarea(attrs={**_CODE, "rows": 5}),
    )
    url = forms.CharField(
        required=False,
        label="URL",
        widget=forms.TextInput(attrs=_CODE),
        help_text="A link the app opens when the notification is tapped, e.g. "
        "“myapp://achievements/{{ achievement.key }}”. Empty: none.",
    )
    data = PushDataField(  # type: ignore[assignment]  # a field, moved by the form's metaclass
        help_text="Custom data for the app, one entry per line as key: value, e.g. "
        "“screen: streak”; values are templates. Keys with a colon or values over several "
        "lines: write a JSON object instead. Empty: none.",
    )
    arguments: ClassVar[dict[str, str]] = {
        **TemplateFormBase.arguments,
        **{field: part for part, field in _PARTS.items()},
    }
    wire_names: ClassVar[dict[str, str]] = {
        **{name: name for name in ("type", "name", "status", "priority")},
        **{field: part for part, field in _PARTS.items()},
        "user_attributes": "userAttributes",
    }
    rules: ClassVar[dict[str, list[Any]]] = {
        **TemplateFormBase.rules,
        "title": text_rules(domain.MAX_TEMPLATE_SUBJECT),
        "body_text": text_rules(domain.MAX_TEMPLATE_TEXT),
        "url": text_rules(domain.MAX_TEMPLATE_URL),
        "data": [_data_values],
    }
    required_on_edit = ("title", "body_text")
    defaulted = ("title", "body")

    class Meta:
        model = PushTemplate
        fields = ("tenant",)

    def initial_from(self, obj: PushTemplate) -> dict[str, Any]:
        return {
            **super().initial_from(obj),
            **{name: getattr(obj, name) for name in ("title", "url")},
            "body_text": obj.body,
            "data": data_text(obj.data),
        }


# "title: line 1: ...", "data.screen: ...", "data holds at most 20 keys": the part comes first.
_PART = re.compile(r"(title|body|url|data)\b")


def _part_field(message: str, form: forms.ModelForm) -> str | None:
    match = _PART.match(message)
    return _PARTS[match.group(1)] if match else None


@admin.register(PushTemplate)
class PushTemplateAdmin(TemplateAdminBase):
    form = PushTemplateForm
    search_fields = ("name", "title")
    content_fields = tuple(_PARTS.values())
    variables_help = VARIABLES_HELP
    seeded_marker = "push_defaults_seeded_at"
    seed = staticmethod(services.push_templates_seed)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return () if obj is None else ("tenant_column", "type", "public_id", "created", "updated")

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        kwargs["fields"] = ("tenant",) if obj is None else ()
        return with_field_errors(super().get_form(request, obj, change, **kwargs), _part_field)

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> PushTemplate:
        tenant = form.cleaned_data["tenant"]
        # As the admin API does: a tenant's first template never stands in for its defaults.
        services.push_templates_seed(tenant)
        return services.push_template_create(tenant, **cast(PushTemplateForm, form).kwargs)

    def service_update(
        self, request: HttpRequest, current: PushTemplate, form: forms.ModelForm
    ) -> None:
        services.push_template_update(current, **cast(PushTemplateForm, form).kwargs)

    def service_delete(self, request: HttpRequest, obj: PushTemplate) -> None:
        services.push_template_delete(obj)

    @admin.display(description="preview")
    def preview(self, obj: PushTemplate) -> SafeString:
        return format_html('<a href="{}">Preview</a>', self.preview_url(obj))

    def get_urls(self) -> list[URLPattern]:
        name = f"{self.opts.app_label}_{self.opts.model_name}_preview"
        # Before Django's own: its "<object_id>/" catch-all would swallow it.
        view = self.admin_site.admin_view(self.preview_view)
        return [path("<path:object_id>/preview/", view, name=name), *super().get_urls()]

    def preview_url(self, obj: PushTemplate, user_id: str = "") -> str:
        opts = self.opts
        url = reverse(
            f"admin:{opts.app_label}_{opts.model_name}_preview",
            args=[obj.pk],
            current_app=self.admin_site.name,
        )
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
        template = cast(PushTemplate | None, self.get_object(request, unquote(object_id)))
        if template is None:
            raise Http404("No such push template")
        if not self.has_view_or_change_permission(request, template):
            raise PermissionDenied
        user_id = request.GET.get("user", "").strip()
        end_user = self._end_user(request, template.tenant, user_id)
        rendered = None
        try:
            rendered = push_template_preview(template, end_user)
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
            # Pairs, not the dict: the template language would read a key named "items" as
            # the dict's method.
            "data_rows": list(rendered.data.items()) if rendered else [],
            "app_name": app_context(template.tenant)["name"],
        }
        return TemplateResponse(request, "admin/notifications/pushtemplate/preview.html", context)
