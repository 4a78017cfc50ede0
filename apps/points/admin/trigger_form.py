"""The trigger form: the fields of each trigger type are those of configuration.TRIGGER_FIELDS,
so the form shows, requires and gives what the configuration function takes (the page's script
shows the fields of the chosen type only)."""

import json
from typing import Any, ClassVar

from django import forms

from apps.accounts.admin.base import range_rules
from apps.accounts.models import Tenant
from apps.achievements.selectors import achievement_definitions
from apps.metrics.selectors import metric_definitions
from apps.points import configuration, domain
from apps.points.admin.part_forms import EMPTY, SystemPartForm
from apps.points.choices import TimeUnit, TriggerStatus, TriggerType
from apps.points.models import PointsTrigger
from apps.users.choices import AttributeType
from apps.users.forms import (
    AttributePairsField,
    attribute_refs,
    attribute_values_rule,
    filter_pairs,
)

# Trigger form field -> the configuration function's argument: the same name but for the
# choices of metric and achievement. The fields of each trigger type are those of
# configuration.TRIGGER_FIELDS, so the form shows, requires and sends what the function takes.
_NAMED_APART = {"metric": "metric_id", "achievement": "achievement_id"}
_FIELD_OF_ARGUMENT = {argument: name for name, argument in _NAMED_APART.items()}


def type_fields() -> dict[str, list[str]]:
    """Each trigger type's own form fields, for the page's script and the form's checks."""
    return {
        str(kind): [_FIELD_OF_ARGUMENT.get(argument, argument) for argument in arguments]
        for kind, arguments in configuration.TRIGGER_FIELDS.items()
    }


class TriggerTypeSelect(forms.Select):
    """The trigger type; points/trigger-form.js shows the fields of the chosen type only."""

    class Media:
        js = ("points/trigger-form.js",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.attrs.update({"data-trigger-type": "", "data-type-fields": json.dumps(type_fields())})


class TriggerForm(SystemPartForm):
    type = forms.ChoiceField(
        label="Type",
        choices=TriggerType.choices,
        widget=TriggerTypeSelect,
        help_text="The type of an active trigger cannot change: deactivate it first.",
    )
    points = forms.IntegerField(label="Points", help_text="Negative: a deduction.")
    # As in the admin API, a new trigger pays nothing until it is switched on.
    status = forms.ChoiceField(
        label="Status", choices=TriggerStatus.choices, initial=TriggerStatus.INACTIVE
    )
    metric = forms.ChoiceField(label="Metric", required=False)
    metric_threshold = forms.IntegerField(
        label="Threshold", required=False, help_text="Paid at every multiple of the total."
    )
    event_attributes = AttributePairsField(label="Event attributes")
    achievement = forms.ChoiceField(label="Achievement", required=False)
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
    user_attributes = AttributePairsField(label="User attributes")
    block_if_out_of_points = forms.BooleanField(
        label="Block if out of points",
        required=False,
        help_text="Deductions only: refuse the event rather than go below 0.",
    )

    rules: ClassVar[dict[str, list[Any]]] = {
        "points": [
            *range_rules(-domain.MAX_TRIGGER_POINTS, domain.MAX_TRIGGER_POINTS),
            lambda points: _refused(domain.trigger_points_problem(points)),
        ],
        "metric_threshold": range_rules(1, domain.MAX_THRESHOLD),
        "streak_length": range_rules(1, domain.MAX_REPEAT),
        "time_interval": range_rules(1, domain.MAX_REPEAT),
        "user_attributes": [attribute_values_rule],
        "event_attributes": [attribute_values_rule],
    }

    class Meta:
        model = PointsTrigger
        fields = ("system",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fields: Any = self.fields
        fields["metric"].choices = [EMPTY, *self.choices.metrics]
        fields["achievement"].choices = [EMPTY, *self.choices.achievements]
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
            "metric": metrics.get(obj.metric_id, "") if obj.metric_id else "",
            "metric_threshold": obj.metric_threshold,
            "event_attributes": filter_pairs(tenant, obj.event_attributes, AttributeType.EVENT),
            "achievement": achievements.get(obj.achievement_id, "") if obj.achievement_id else "",
            "streak_length": obj.streak_length,
            "time_unit": obj.time_unit,
            "time_interval": obj.time_interval,
        }

    def values(self, tenant: Tenant) -> dict[str, Any]:
        values = super().values(tenant)
        values["metric"] = values["metric"] or None
        values["achievement"] = values["achievement"] or None
        kind = TriggerType(self.cleaned_data["type"])
        # The form shows the whole trigger, so an empty field of its type was emptied on
        # purpose; the function would keep the stored value of a setting given as None.
        for argument in configuration.REQUIRED[kind]:
            name = _FIELD_OF_ARGUMENT.get(argument, argument)
            if values.get(name) in (None, ""):
                self.add_error(name, f"Required for {kind.label.lower()} triggers.")
        own = set(type_fields()[kind])
        values["user_attributes"] = attribute_refs(
            self, "user_attributes", tenant, AttributeType.USER
        )
        if "event_attributes" in own:
            values["event_attributes"] = attribute_refs(
                self, "event_attributes", tenant, AttributeType.EVENT
            )
        # Fields of other types are hidden and not part of the trigger: what they still hold
        # (after switching type, or without JavaScript) is not given, as the function would
        # refuse it.
        other = {name for names in type_fields().values() for name in names} - own
        return {name: value for name, value in values.items() if name not in other}


# Every input but the system gives the argument of its name, or the one it is named apart from.
TriggerForm.arguments = {
    name: _NAMED_APART.get(name, name) for name in TriggerForm.base_fields if name != "system"
}


def _refused(problem: str | None) -> None:
    if problem is not None:
        raise forms.ValidationError(problem)
