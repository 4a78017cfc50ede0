"""What the notification pages' forms share: a template's inputs, derived from its declaration
(EmailTemplateSettings, PushTemplateSettings), with code inputs for its content (the template
pages themselves share template_pages.py)."""

from typing import Any, ClassVar, cast

from django import forms

from apps.accounts.admin.config_pages import ConfigForm
from apps.accounts.admin.declared import declared_form, own_input
from apps.accounts.admin.forms import text_rules
from apps.accounts.models import Tenant
from apps.core.declarations import Declaration, settings_of
from apps.notifications.choices import TemplateStatus
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


def source_input(declaration: type[Declaration], name: str, rows: int) -> Any:
    """A template part's input: one line (rows=0: a subject, a title), or `rows` lines kept
    exactly as typed; never required here (see TemplateFormBase.required_on_edit)."""
    max_length = settings_of(declaration)[name].max_length or 0
    if rows:
        widget: forms.Widget = forms.Textarea(attrs={**CODE_ATTRS, "rows": rows})
    else:
        widget = forms.TextInput(attrs={**CODE_ATTRS, "maxlength": max_length})
    rules = text_rules(max_length)
    kwargs = {"required": False, "strip": not rows, "widget": widget, "validators": rules}
    return own_input(declaration, name, forms.CharField, **kwargs)


def template_form(
    declaration: type[Declaration],
    model: Any,
    content: dict[str, int],
    skip: tuple[str, ...] = (),
    **kwargs: Any,
) -> Any:
    """The base of a template kind's form: its declared inputs, its `content` as code inputs
    (part -> rows, see source_input) and its audience; `skip`: settings written by a page of
    their own (an email's blocks, in the block editor). `kwargs`: declared_form's."""
    declared = declared_form(
        declaration,
        model=model,
        skip=(*content, *skip),
        choices={"status": TemplateStatus.choices},
        **kwargs,
    )
    own = {name: source_input(declaration, name, rows) for name, rows in content.items()}
    own["user_attributes"] = own_input(
        declaration, "user_attributes", AttributePairsField, validators=[attribute_values_rule]
    )
    name = f"{declaration.__name__}FormBase"
    return type(name, (declared, TemplateFormBase), {**own, "__module__": __name__})


class TemplateFormBase(ConfigForm):
    """What every template's form does with its inputs (`template_form`): `clean` makes the
    declaration the template services are given (`settings`), which check that it renders."""

    # The content inputs a saved template must have; on creation, left empty, the service
    # fills them from the built-in template of the type.
    required_on_edit: ClassVar[tuple[str, ...]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.settings: Any = None
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
            **super().initial_from(obj),
            "user_attributes": filter_pairs(obj.tenant, obj.user_attributes, AttributeType.USER),
        }

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        self.settings = None
        values = self.declared_values()  # content left empty: not given (the built-in one's)
        if "user_attributes" in cleaned and self.owner is not None:
            # Keys become attribute ids, as the services take them; an unknown key is refused.
            values["user_attributes"] = attribute_refs(
                self, "user_attributes", self.owner, AttributeType.USER
            )
        if self.instance is not None:
            # An update is given what changed: an unchanged template is not checked again.
            values = {name: v for name, v in values.items() if name in self.changed_data}
        if not self.errors:
            self.settings = self.declaration(**values)
        return cleaned

    @property
    def valid_settings(self) -> Any:
        assert self.settings is not None  # noqa: S101 - a valid form has them
        return self.settings
