"""The trigger form: the trigger's declared settings (PointsTriggerSettings) as inputs, with
the tenant's metrics, achievements and attributes to choose from. The settings of each trigger
type are those of domain.TRIGGER_FIELDS, so the form shows, requires and gives what the
function takes (the page's script shows the inputs of the chosen type only)."""

import json
from typing import Any

from django import forms

from apps.accounts.admin.declared import declared_form, own_input
from apps.accounts.models import Tenant
from apps.achievements.selectors import achievement_definitions
from apps.metrics.selectors import metric_definitions
from apps.points import domain
from apps.points.admin.forms import checked
from apps.points.admin.part_forms import EMPTY, PartForm
from apps.points.choices import TriggerStatus, TriggerType
from apps.points.domain import TRIGGER_FIELDS, TRIGGER_REQUIRED, PointsTriggerSettings
from apps.points.models import PointsTrigger
from apps.users.choices import AttributeType
from apps.users.forms import (
    AttributePairsField,
    attribute_refs,
    attribute_values_rule,
    filter_pairs,
)

# The inputs that belong to some trigger types only.
TYPE_INPUTS = {name for names in TRIGGER_FIELDS.values() for name in names}

# The rows of a trigger, on the system's page and on its own.
TRIGGER_ROWS: list[str | tuple[str, ...]] = [
    ("type", "status"),
    "points",
    ("metric_id", "metric_threshold"),
    "event_attributes",
    "achievement_id",
    "streak_length",
    ("time_interval", "time_unit"),
    "user_attributes",
    "block_if_out_of_points",
]


class TriggerTypeSelect(forms.Select):
    """The trigger type; points/trigger-form.js shows the inputs of the chosen type only (each
    type's own inputs are those of TRIGGER_FIELDS)."""

    class Media:
        js = ("points/trigger-form.js",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.attrs.update({"data-trigger-type": "", "data-type-fields": json.dumps(TRIGGER_FIELDS)})


def _points(points: int) -> None:
    if (problem := domain.trigger_points_problem(points)) is not None:
        raise forms.ValidationError(problem[:1].upper() + problem[1:])


_Declared: Any = declared_form(
    PointsTriggerSettings,
    model=PointsTrigger,
    choices={"status": TriggerStatus.choices},
    widgets={"type": TriggerTypeSelect},
)


def _own(name: str, field_class: type[forms.Field], **kwargs: Any) -> Any:
    return own_input(PointsTriggerSettings, name, field_class, **kwargs)


class TriggerForm(PartForm, _Declared):
    """A trigger's settings as staff read them; `clean` makes what the function is given
    (`arguments`, the settings of PointsTriggerSettings)."""

    metric_id = _own("metric_id", forms.ChoiceField)
    event_attributes = _own(
        "event_attributes", AttributePairsField, validators=[attribute_values_rule]
    )
    achievement_id = _own("achievement_id", forms.ChoiceField)
    user_attributes = _own(
        "user_attributes", AttributePairsField, validators=[attribute_values_rule]
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fields: Any = self.fields
        fields["points"].validators.append(_points)
        fields["status"].required = True  # its select always has one (a new trigger: inactive)
        fields["metric_id"].choices = [EMPTY, *self.choices.metrics]
        fields["achievement_id"].choices = [EMPTY, *self.choices.achievements]
        choices = self.choices
        fields["user_attributes"].set_keys(choices.user_keys, "User attribute", choices.user_labels)
        fields["event_attributes"].set_keys(
            choices.event_keys, "Event attribute", choices.event_labels
        )
        # The rules of an input of some trigger types only are checked when the trigger's type
        # has it (an input of another type is hidden and not given): by `values`.
        self.type_rules: dict[str, list[Any]] = {}
        for name in TYPE_INPUTS:
            self.type_rules[name], fields[name].validators = fields[name].validators, []

    def initial_from(self, obj: PointsTrigger) -> dict[str, Any]:
        tenant = self.stored_tenant()
        metrics = {m.pk: m.public_id for m in metric_definitions(tenant).values()}
        achievements = {a.pk: a.public_id for a in achievement_definitions(tenant).values()}
        return {
            **super().initial_from(obj),
            "user_attributes": filter_pairs(tenant, obj.user_attributes, AttributeType.USER),
            "metric_id": metrics.get(obj.metric_id, "") if obj.metric_id else "",
            "event_attributes": filter_pairs(tenant, obj.event_attributes, AttributeType.EVENT),
            "achievement_id": (
                achievements.get(obj.achievement_id, "") if obj.achievement_id else ""
            ),
        }

    def values(self, tenant: Tenant) -> dict[str, Any]:
        values = self.declared_values()
        kind = TriggerType(self.cleaned_data["type"])
        own = TRIGGER_FIELDS[kind]
        # The form shows the whole trigger, so an empty input of its type was emptied on
        # purpose; the function would keep the stored value of a setting given as None.
        for name in TRIGGER_REQUIRED[kind]:
            if values.get(name) is None:
                self.add_error(name, f"Required for {kind.label.lower()} triggers.")
        for name in own:
            value = self.cleaned_data.get(name)  # gone once refused above
            if value not in (None, "", []):
                for message in checked(value, self.type_rules[name]):
                    self.add_error(name, message)
        values["user_attributes"] = attribute_refs(
            self, "user_attributes", tenant, AttributeType.USER
        )
        if "event_attributes" in own and not self.has_error("event_attributes"):
            values["event_attributes"] = attribute_refs(
                self, "event_attributes", tenant, AttributeType.EVENT
            )
        # Inputs of other types are hidden and not part of the trigger: what they still hold
        # (after switching type, or without JavaScript) is not given, as the function would
        # refuse it.
        for name in TYPE_INPUTS - set(own):
            values.pop(name, None)
        return values
