"""What the notification pages' forms share: the fields of every template (the template pages
themselves share template_pages.py)."""

from typing import Any, ClassVar, cast

from django import forms

from apps.accounts.admin.base import ServiceForm, range_rules
from apps.accounts.models import Tenant
from apps.notifications import domain
from apps.notifications.choices import NotificationType, TemplateStatus
from apps.users.choices import AttributeType
from apps.users.forms import (
    AttributePairsField,
    attribute_refs,
    attribute_values_rule,
    filter_pairs,
)
from apps.users.selectors import attribute_definitions

# Template source, keys and tokens are code: monospace, never spell-checked.
CODE_ATTRS = {"spellcheck": "false", "style": "font-family: monospace; width: 100%"}


def source_line(**kwargs: Any) -> forms.CharField:
    """A one-line template (a subject, a title)."""
    widget = forms.TextInput(attrs={**CODE_ATTRS, "maxlength": 1000})
    return forms.CharField(required=False, widget=widget, **kwargs)


def source_text(rows: int, **kwargs: Any) -> forms.CharField:
    """A template over several lines, kept exactly as typed."""
    widget = forms.Textarea(attrs={**CODE_ATTRS, "rows": rows})
    return forms.CharField(required=False, strip=False, widget=widget, **kwargs)


class TemplateFormBase(ServiceForm):
    """The fields every notification template has, around each kind's content fields: the
    arguments of the template services, which check that the template renders."""

    type = forms.ChoiceField(choices=NotificationType.choices, help_text="Set for good.")
    name = forms.CharField(max_length=255)
    status = forms.ChoiceField(
        choices=TemplateStatus.choices,
        initial=TemplateStatus.INACTIVE,
        help_text="Only active templates are sent.",
    )
    priority = forms.IntegerField(
        initial=0,
        help_text="Of the active templates of a type whose filters match a user, the highest "
        "priority is sent.",
    )
    user_attributes = AttributePairsField(
        label="User attributes",
        help_text="Sent only to users with all of these attribute values. Empty: everyone.",
    )
    create_only = ("type",)
    rules: ClassVar[dict[str, list[Any]]] = {
        "priority": range_rules(-domain.MAX_TEMPLATE_PRIORITY, domain.MAX_TEMPLATE_PRIORITY),
        "user_attributes": [attribute_values_rule],
    }
    # Form field -> the services' argument (each kind adds its content fields).
    arguments: ClassVar[dict[str, str]] = {
        name: name for name in ("type", "name", "status", "priority", "user_attributes")
    }
    # The tenant the page shows (set by TemplateAdminBase.get_form): an add form offers its
    # attributes.
    page_tenant: ClassVar[Tenant | None] = None
    # The content inputs a saved template must have; on creation, left empty, the service
    # fills them (their arguments in `defaulted`) from the built-in template of the type.
    required_on_edit: ClassVar[tuple[str, ...]]
    defaulted: ClassVar[tuple[str, ...]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        tenant = self.instance.tenant if self.instance.pk else self.page_tenant
        keys = sorted(attribute_definitions(tenant).user_keys) if tenant is not None else []
        cast(AttributePairsField, self.fields["user_attributes"]).set_keys(keys, "User attribute")
        for name in self.required_on_edit:
            if self.instance.pk:
                self.fields[name].required = True
            else:
                self.fields[name].help_text = "Empty: the built-in template of the type."

    def config_tenant(self) -> Tenant | None:
        return self.instance.tenant if self.instance.pk else self.cleaned_data.get("tenant")

    def initial_from(self, obj: Any) -> dict[str, Any]:
        return {
            **{name: getattr(obj, name) for name in ("name", "status", "priority")},
            "user_attributes": filter_pairs(obj.tenant, obj.user_attributes, AttributeType.USER),
        }

    def service_kwargs(self) -> dict[str, Any]:
        tenant = self.config_tenant()
        assert tenant is not None  # noqa: S101 - ServiceForm.clean asks only with a tenant
        kwargs = {
            argument: self.cleaned_data[name]
            for name, argument in self.arguments.items()
            if name in self.fields
        }
        kwargs["user_attributes"] = attribute_refs(
            self, "user_attributes", tenant, AttributeType.USER
        )
        if not self.instance.pk:
            kwargs = {k: v for k, v in kwargs.items() if k not in self.defaulted or v}
        return kwargs
