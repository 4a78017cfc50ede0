"""The leaderboard page's form: the arguments of leaderboard_create or leaderboard_update, laid
out as the board reads (what it ranks, when, who takes part). The service validates and writes
them; the checks here only put the commonest mistakes next to their field."""

import re
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.admin.widgets import AdminDateWidget, AdminTimeWidget
from django.core import validators

from apps.accounts.admin.base import items_rules, range_rules, sentence, text_rules
from apps.accounts.admin.config_pages import ConfigForm
from apps.accounts.models import Tenant
from apps.core.api.fields import KEY_PATTERN, KEY_RULE
from apps.leaderboards import domain
from apps.leaderboards.choices import RankBy, RunUnit, Status
from apps.leaderboards.configuration import FROZEN_ONCE_LIVE
from apps.leaderboards.models import Leaderboard
from apps.metrics.models import Metric
from apps.points.models import PointsSystem
from apps.points.selectors import points_systems_active
from apps.users.choices import AttributeType
from apps.users.forms import (
    AttributePairsField,
    attribute_refs,
    attribute_values_rule,
    filter_pairs,
)
from apps.users.selectors import attribute_definitions

RANK_BY_CHOICES = [
    (RankBy.METRIC, "Total of a metric"),
    (RankBy.POINTS, "Total of a points system"),
    (RankBy.STREAK, "Current streak length"),
]
STATUS_CHOICES = [
    (Status.INACTIVE, "Inactive: being set up, counts nothing"),
    (Status.ACTIVE, "Active: live, counts activity from now on"),
    (Status.SCHEDULED, "Scheduled: goes live on its start date"),
    (Status.FINISHED, "Finished: closed after its end date"),
]
RUN_UNIT_CHOICES = [
    ("", "Never (perpetual)"),
    (RunUnit.DAY, "days"),
    (RunUnit.MONTH, "months"),
    (RunUnit.YEAR, "years"),
]


def _metric_label(metric: Metric) -> str:
    return f"{metric.name} ({metric.key})"


def _system_label(system: PointsSystem) -> str:
    return f"{system.name} ({system.key})"


def _max_participants(value: int) -> None:
    # The operator's LEADERBOARD_MAX_PARTICIPANTS, read when checked (tests change it).
    for rule in range_rules(1, settings.LEADERBOARD_MAX_PARTICIPANTS):
        rule(value)


class LeaderboardForm(ConfigForm):
    """What a board reads as; `clean` makes the arguments of the service call (`arguments`)."""

    free_text = ("description",)

    name = forms.CharField(label="Name", validators=text_rules(255))
    key = forms.CharField(
        label="Key",
        strip=False,
        help_text="How the API names the leaderboard. Can change only while it is inactive.",
        validators=[
            *text_rules(100),
            validators.RegexValidator(re.compile(KEY_PATTERN), sentence(KEY_RULE)),
        ],
    )
    status = forms.ChoiceField(
        label="Status",
        choices=STATUS_CHOICES,
        initial=Status.INACTIVE,
        help_text="Choosing Active with a future start date schedules it. Finished: only once "
        "the end date has passed. Inactive again: back to editing; rankings are kept.",
    )
    description = forms.CharField(
        label="Description",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        validators=text_rules(2000),
    )
    rank_by = forms.ChoiceField(
        label="Rank by",
        choices=RANK_BY_CHOICES,
        initial=RankBy.METRIC,
        widget=forms.RadioSelect,
        help_text="Can change only while the leaderboard is inactive.",
    )
    metric = forms.ModelChoiceField(
        label="Metric",
        queryset=Metric.objects.none(),
        required=False,
        error_messages={"invalid_choice": "Choose a metric of this tenant."},
    )
    points_system = forms.ModelChoiceField(
        label="Points system",
        queryset=PointsSystem.objects.none(),
        required=False,
        error_messages={"invalid_choice": "Choose an active points system of this tenant."},
    )
    max_participants = forms.IntegerField(
        label="Maximum participants",
        initial=1000,
        help_text="From 1 to {maximum:,}, per breakdown group. When full, a newcomer must beat "
        "the lowest value to enter.",
        validators=[_max_participants],
    )
    start = forms.DateField(
        label="Start date",
        required=False,
        widget=AdminDateWidget,
        help_text="Empty: today. A future date schedules the leaderboard.",
    )
    end = forms.DateField(
        label="End date",
        required=False,
        widget=AdminDateWidget,
        help_text="Inclusive. Empty: no end.",
    )
    start_time = forms.TimeField(
        label="Counts from",
        required=False,
        widget=AdminTimeWidget(format="%H:%M"),
        help_text="Time of day, in each user's own time zone. Empty: from midnight.",
    )
    end_time = forms.TimeField(
        label="Counts until",
        required=False,
        widget=AdminTimeWidget(format="%H:%M"),
        help_text="Empty: until midnight.",
    )
    run_interval = forms.IntegerField(
        label="Restarts every",
        required=False,
        widget=forms.NumberInput(attrs={"class": "vIntegerField", "min": 1}),
        help_text="Each run ranks from zero. Streak leaderboards are always perpetual.",
        validators=range_rules(1, domain.MAX_RUN_INTERVAL),
    )
    run_unit = forms.TypedChoiceField(
        label="Unit",
        choices=RUN_UNIT_CHOICES,
        required=False,
        empty_value=None,
    )
    user_attributes = AttributePairsField(
        label="Participation filters",
        help_text="Only end-users with all these attribute values take part. Empty: everyone. "
        "Can change only while the leaderboard is inactive.",
        validators=[attribute_values_rule],
    )
    breakdown_attributes = forms.MultipleChoiceField(
        label="Breakdown attributes",
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="One ranking per combination of values; end-users without a value for each "
        "do not take part. Empty: one ranking for everyone.",
        error_messages={"invalid_choice": "Unknown user attribute: %(value)s."},
        validators=items_rules(domain.MAX_BREAKDOWN_ATTRIBUTES),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.arguments: dict[str, Any] = {}
        tenant = self.tenant
        fields: Any = self.fields
        fields["metric"].queryset = Metric.objects.filter(tenant=tenant).order_by("name", "key")
        fields["metric"].label_from_instance = _metric_label
        fields["points_system"].queryset = points_systems_active(tenant).order_by("name", "key")
        fields["points_system"].label_from_instance = _system_label
        fields["max_participants"].help_text = fields["max_participants"].help_text.format(
            maximum=settings.LEADERBOARD_MAX_PARTICIPANTS
        )
        user_keys = sorted(attribute_definitions(tenant).user_keys) if tenant is not None else []
        stored = list(self.initial.get("breakdown_attributes") or [])
        # A deleted attribute stays checked under its id until staff uncheck it.
        fields["breakdown_attributes"].choices = [
            (key, key) for key in [*user_keys, *(k for k in stored if k not in user_keys)]
        ]
        fields["user_attributes"].set_keys(user_keys, "User attribute")

    def initial_from(self, obj: Leaderboard) -> dict[str, Any]:
        keys = {
            pid: key for (_, key), pid in attribute_definitions(obj.tenant).ids_by_type_key.items()
        }
        return {
            "name": obj.name,
            "key": obj.key,
            "rank_by": obj.rank_by,
            "metric": obj.metric_id,
            "points_system": obj.points_system_id,
            "status": obj.status,
            "description": obj.description or "",
            "max_participants": obj.max_participants,
            "start": obj.start,
            "end": obj.end,
            "start_time": obj.start_time,
            "end_time": obj.end_time,
            "run_unit": obj.run_unit,
            "run_interval": obj.run_interval,
            "breakdown_attributes": [keys.get(a, a) for a in obj.breakdown_attributes],
            "user_attributes": filter_pairs(obj.tenant, obj.user_attributes, AttributeType.USER),
        }

    def clean(self) -> dict[str, Any]:
        cleaned = self.cleaned_data
        # The service refuses these too; said here, the message sits next to the field.
        rank_by = cleaned.get("rank_by")
        if rank_by == RankBy.METRIC and cleaned.get("metric", False) is None:
            self.add_error("metric", "Choose the metric to rank by.")
        if rank_by == RankBy.POINTS and cleaned.get("points_system", False) is None:
            self.add_error("points_system", "Choose the points system to rank by.")
        unit, interval = cleaned.get("run_unit"), cleaned.get("run_interval")
        if rank_by == RankBy.STREAK and unit is not None:
            self.add_error("run_unit", "Streak leaderboards can only be perpetual.")
        elif unit is not None and interval is None and "run_interval" in cleaned:
            self.add_error("run_interval", "Give the length of a run, in the unit chosen.")
        elif unit is None and interval is not None and "run_unit" in cleaned:
            self.add_error("run_unit", "Choose days, months or years, or clear the length.")
        start, end = cleaned.get("start"), cleaned.get("end")
        if start is not None and end is not None and end < start:
            self.add_error("end", "The end date must not be before the start date.")
        super().clean()
        if not self.errors:
            self.arguments = self._arguments(self.valid_tenant)
        if self.errors:
            self.arguments = {}
        return cleaned

    def _arguments(self, tenant: Tenant) -> dict[str, Any]:
        """The arguments of leaderboard_create or leaderboard_update, from valid input; an
        unknown attribute is an error of its input."""
        cleaned = self.cleaned_data
        kwargs: dict[str, Any] = {
            "name": cleaned["name"],
            "key": cleaned["key"],
            "rank_by": cleaned["rank_by"],
            "metric_id": _public_id(cleaned["metric"]),
            "points_system_id": _public_id(cleaned["points_system"]),
            "status": cleaned["status"],
            "description": cleaned["description"] or None,
            "max_participants": cleaned["max_participants"],
            "end": cleaned["end"],
            "start_time": cleaned["start_time"],
            "end_time": cleaned["end_time"],
            "run_unit": cleaned["run_unit"],
            "run_interval": cleaned["run_interval"],
            "breakdown_attributes": self._breakdown_ids(cleaned["breakdown_attributes"], tenant),
            "user_attributes": attribute_refs(self, "user_attributes", tenant, AttributeType.USER),
        }
        if cleaned["start"] is not None:
            kwargs["start"] = cleaned["start"]  # otherwise a new board starts today
        board = self.instance
        if board is not None:
            # A live board refuses these even unchanged: sent only when they differ.
            for name in FROZEN_ONCE_LIVE:
                if kwargs[name] == getattr(board, name):
                    del kwargs[name]
            if kwargs["status"] == board.status:
                # Unchanged: not a transition (an active board past its end is not refused).
                del kwargs["status"]
        return kwargs

    def _breakdown_ids(self, chosen: list[str], tenant: Tenant) -> list[str]:
        ids = attribute_definitions(tenant).ids_by_type_key
        unknown = [key for key in chosen if (AttributeType.USER, key) not in ids]
        if unknown:
            self.add_error(
                "breakdown_attributes", f"Unknown user attributes: {', '.join(unknown)}."
            )
        # Groups are named by the attributes in their stored order: keeping it keeps the
        # groups (and their entries) of a live board when another attribute is added.
        stored = list(self.initial.get("breakdown_attributes") or [])
        ordered = [k for k in stored if k in chosen] + [k for k in chosen if k not in stored]
        return [ids[(AttributeType.USER, k)] for k in ordered if k not in unknown]


def _public_id(obj: Any) -> str | None:
    return str(obj.public_id) if obj is not None else None
