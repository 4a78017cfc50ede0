"""The trigger form: its inputs are the configuration function's arguments, named as it names
them, and the fields of each trigger type are those of configuration.TRIGGER_FIELDS, so the form
shows, requires and gives what the function takes (the page's script shows the fields of the
chosen type only)."""

import json
from typing import Any

from django import forms

from apps.accounts.admin.base import range_rules
from apps.accounts.models import Tenant
from apps.achievements.selectors import achievement_definitions
from apps.metrics.selectors import metric_definitions
from apps.points import configuration, domain
from apps.points.admin.forms import checked
from apps.points.admin.part_forms import EMPTY, PartForm
from apps.points.choices import TimeUnit, TriggerStatus, TriggerType
from apps.points.models import PointsTrigger
from apps.users.choices import AttributeType
from apps.users.forms import (
    AttributePairsField,
    attribute_refs,
    attribute_values_rule,
    filter_pairs,
)

# The limits of the inputs that belong to some trigger types only: checked when the trigger's
# type has them (an input of another type is hidden and not given).
TYPE_LIMITS = {
    "metric_threshold": range_rules(1, domain.MAX_THRESHOLD),
    "streak_length": range_rules(1, domain.MAX_REPEAT),
    "time_interval": range_rules(1, domain.MAX_REPEAT),
}
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


def type_fields() -> dict[str, list[str]]:
    """Each trigger type's own inputs, for the page's script and the form's checks."""
    return {str(kind): list(names) for kind, names in configuration.TRIGGER_FIELDS.items()}


class TriggerTypeSelect(forms.Select):
    """The trigger type; points/trigger-form.js shows the fields of the chosen type only."""

    class Media:
        js = ("points/trigger-form.js",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.attrs.update({"data-trigger-type": "", "data-type-fields": json.dumps(type_fields())})


def _points(points: int) -> None:
    if (problem := domain.trigger_points_problem(points)) is not None:
        raise forms.ValidationError(problem[:1].upper() + problem[1:])


class TriggerForm(PartForm):
    type = forms.ChoiceField(
        label="Type",
        choices=TriggerType.choices,
        widget=TriggerTypeSelect,
        help_text="The type of an active trigger cannot change: deactivate it first.",
    )
    points = forms.IntegerField(
        label="Points",
        help_text="Negative: a deduction.",
        validators=[
            *range_rules(-domain.MAX_TRIGGER_POINTS, domain.MAX_TRIGGER_POINTS),
            _points,
        ],
    )
    # As in the admin API, a new trigger pays nothing until it is switched on.
    status = forms.ChoiceField(
        label="Status", choices=TriggerStatus.choices, initial=TriggerStatus.INACTIVE
    )
    metric_id = forms.ChoiceField(label="Metric", required=False)
    metric_threshold = forms.IntegerField(
        label="Threshold", required=False, help_text="Paid at every multiple of the total."
    )
    event_attributes = AttributePairsField(label="Event attributes")
    achievement_id = forms.ChoiceField(label="Achievement", required=False)
    streak_length = forms.IntegerField(
        label="Streak length", required=False, help_text="Paid at every multiple."
    )
    time_interval = forms.IntegerField(label="Every", required=False)
    time_unit = forms.TypedChoiceField(
        label="Unit",
        choices=[EMPTY, *TimeUnit.choices],
        required=False,
        empty_value=None,
        help_text="Counted from the user's first activity in the system.",
    )
    user_attributes = AttributePairsField(
        label="User attributes", validators=[attribute_values_rule]
    )
    block_if_out_of_points = forms.BooleanField(
        label="Block if out of points",
        required=False,
        help_text="Deductions only: refuse the event rather than go below 0.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fields: Any = self.fields
        fields["metric_id"].choices = [EMPTY, *self.choices.metrics]
        fields["achievement_id"].choices = [EMPTY, *self.choices.achievements]
        fields["user_attributes"].set_keys(self.choices.user_keys, "User attribute")
        fields["event_attributes"].set_keys(self.choices.event_keys, "Event attribute")

    def initial_from(self, obj: PointsTrigger) -> dict[str, Any]:
        tenant = self.stored_tenant()
        metrics = {m.pk: m.public_id for m in metric_definitions(tenant).values()}
        achievements = {a.pk: a.public_id for a in achievement_definitions(tenant).values()}
        return {
            "type": obj.type,
            "points": obj.points,
            "status": obj.status,
            "user_attributes": filter_pairs(tenant, obj.user_attributes, AttributeType.USER),
            "block_if_out_of_points": obj.block_if_out_of_points,
            "metric_id": metrics.get(obj.metric_id, "") if obj.metric_id else "",
            "metric_threshold": obj.metric_threshold,
            "event_attributes": filter_pairs(tenant, obj.event_attributes, AttributeType.EVENT),
            "achievement_id": (
                achievements.get(obj.achievement_id, "") if obj.achievement_id else ""
            ),
            "streak_length": obj.streak_length,
            "time_unit": obj.time_unit,
            "time_interval": obj.time_interval,
        }

    def values(self, tenant: Tenant) -> dict[str, Any]:
        values = super().values(tenant)
        values["metric_id"] = values["metric_id"] or None
        values["achievement_id"] = values["achievement_id"] or None
        kind = TriggerType(self.cleaned_data["type"])
        own = set(type_fields()[kind])
        # The form shows the whole trigger, so an empty field of its type was emptied on
        # purpose; the function would keep the stored value of a setting given as None.
        for name in configuration.REQUIRED[kind]:
            if values.get(name) in (None, ""):
                self.add_error(name, f"Required for {kind.label.lower()} triggers.")
        for name, rules in TYPE_LIMITS.items():
            if name in own and values.get(name) is not None:
                for message in checked(values[name], rules):
                    self.add_error(name, message)
        values["user_attributes"] = attribute_refs(
            self, "user_attributes", tenant, AttributeType.USER
        )
        if "event_attributes" in own:
            problems = checked(self.cleaned_data["event_attributes"], [attribute_values_rule])
            for message in problems:
                self.add_error("event_attributes", message)
        if "event_attributes" in own and not self.has_error("event_attributes"):
            values["event_attributes"] = attribute_refs(
                self, "event_attributes", tenant, AttributeType.EVENT
            )
        # Fields of other types are hidden and not part of the trigger: what they still hold
        # (after switching type, or without JavaScript) is not given, as the function would
        # refuse it.
        other = {name for names in type_fields().values() for name in names} - own
        return {name: value for name, value in values.items() if name not in other}
