"""What the notification pages' forms share: the fields of every template (the template pages
themselves share template_pages.py)."""

from typing import Any, ClassVar, cast

from django import forms
from django.core import validators

from apps.accounts.admin.config_pages import ConfigForm
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


def at_most(max_length: int) -> list[validators.MaxLengthValidator]:
    """A template part's limit, worded as the admin API words it."""
    message = f"Ensure this field has no more than {max_length} characters."
    return [validators.MaxLengthValidator(max_length, message)]


def source_line(**kwargs: Any) -> forms.CharField:
    """A one-line template (a subject, a title)."""
    widget = forms.TextInput(attrs={**CODE_ATTRS, "maxlength": 1000})
    return forms.CharField(required=False, widget=widget, **kwargs)


def source_text(rows: int, **kwargs: Any) -> forms.CharField:
    """A template over several lines, kept exactly as typed."""
    widget = forms.Textarea(attrs={**CODE_ATTRS, "rows": rows})
    return forms.CharField(required=False, strip=False, widget=widget, **kwargs)


class TemplateFormBase(ConfigForm):
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
        min_value=-domain.MAX_TEMPLATE_PRIORITY,
        max_value=domain.MAX_TEMPLATE_PRIORITY,
        help_text="Of the active templates of a type whose filters match a user, the highest "
        "priority is sent.",
    )
    user_attributes = AttributePairsField(
        label="User attributes",
        help_text="Sent only to users with all of these attribute values. Empty: everyone.",
        validators=[attribute_values_rule],
    )
    # The content inputs a saved template must have; on creation, left empty, the service
    # fills them from the built-in template of the type.
    required_on_edit: ClassVar[tuple[str, ...]]
    defaulted: ClassVar[tuple[str, ...]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        tenant = self.owner
        keys = sorted(attribute_definitions(tenant).user_keys) if tenant is not None else []
        cast(AttributePairsField, self.fields["user_attributes"]).set_keys(keys, "User attribute")
        if self.instance is not None:
            del self.fields["type"]  # a template is written for its type's variables
        for name in self.required_on_edit:
            if self.instance is not None:
                self.fields[name].required = True
            else:
                self.fields[name].help_text = "Empty: the built-in template of the type."

    @property
    def owner(self) -> Tenant | None:
        return self.tenant if self.instance is None else self.instance.tenant

    def initial_from(self, obj: Any) -> dict[str, Any]:
        return {
            **{name: getattr(obj, name) for name in ("name", "status", "priority")},
            "user_attributes": filter_pairs(obj.tenant, obj.user_attributes, AttributeType.USER),
        }

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if "user_attributes" in cleaned and self.owner is not None:
            # Keys become attribute ids, as the services take them; an unknown key is refused.
            refs = attribute_refs(self, "user_attributes", self.owner, AttributeType.USER)
            if "user_attributes" in cleaned:
                cleaned["user_attributes"] = refs
        return cleaned

    def arguments(self) -> dict[str, Any]:
        """The create service's arguments: content left empty is the built-in one's."""
        return {k: v for k, v in self.cleaned_data.items() if k not in self.defaulted or v}
