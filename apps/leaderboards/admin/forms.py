"""The leaderboard page's form: the board's declared settings (LeaderboardSettings) as inputs,
with the tenant's metrics, points systems and attributes to choose from; the service validates
and writes them, the checks here only put the commonest mistakes next to their input."""

from typing import Any

from django import forms

from apps.accounts.admin.declared import declared_form, own_input
from apps.accounts.admin.forms import items_rules
from apps.accounts.models import Tenant
from apps.leaderboards import domain
from apps.leaderboards.choices import RankBy, RunUnit, Status
from apps.leaderboards.domain import FROZEN_ONCE_LIVE, LeaderboardSettings
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
from apps.users.selectors import attribute_definitions, attribute_labels

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


_Declared: Any = declared_form(
    LeaderboardSettings,
    model=Leaderboard,
    choices={"status": STATUS_CHOICES, "rank_by": RANK_BY_CHOICES, "run_unit": RUN_UNIT_CHOICES},
    widgets={"rank_by": forms.RadioSelect},
    initial={"rank_by": RankBy.METRIC},
)


def _own(name: str, field_class: type[forms.Field], **kwargs: Any) -> Any:
    return own_input(LeaderboardSettings, name, field_class, **kwargs)


class LeaderboardForm(_Declared):
    """A board's settings as staff read them; `clean` makes the declaration the service is
    given (`settings`)."""

    metric = _own(
        "metric_id",
        forms.ModelChoiceField,
        queryset=Metric.objects.none(),
        error_messages={"invalid_choice": "Choose a metric of this tenant."},
    )
    points_system = _own(
        "points_system_id",
        forms.ModelChoiceField,
        queryset=PointsSystem.objects.none(),
        error_messages={"invalid_choice": "Choose an active points system of this tenant."},
    )
    user_attributes = _own(
        "user_attributes", AttributePairsField, validators=[attribute_values_rule]
    )
    breakdown_attributes = _own(
        "breakdown_attributes",
        forms.MultipleChoiceField,
        widget=forms.CheckboxSelectMultiple,
        error_messages={"invalid_choice": "Unknown user attribute: %(value)s."},
        validators=items_rules(domain.MAX_BREAKDOWN_ATTRIBUTES),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.settings: LeaderboardSettings | None = None
        tenant = self.tenant
        fields: Any = self.fields
        fields["metric"].queryset = Metric.objects.filter(tenant=tenant).order_by("name", "key")
        fields["metric"].label_from_instance = _metric_label
        fields["points_system"].queryset = points_systems_active(tenant).order_by("name", "key")
        fields["points_system"].label_from_instance = _system_label
        fields["max_participants"].help_text = fields["max_participants"].help_text.format(
            maximum=domain.max_participants()
        )
        user_keys = sorted(attribute_definitions(tenant).user_keys) if tenant is not None else []
        stored = list(self.initial.get("breakdown_attributes") or [])
        # A deleted attribute stays checked under its id until staff uncheck it.
        labels = attribute_labels(tenant, AttributeType.USER) if tenant is not None else {}
        fields["breakdown_attributes"].choices = [
            (key, labels.get(key, key))
            for key in [*user_keys, *(k for k in stored if k not in user_keys)]
        ]
        fields["user_attributes"].set_keys(user_keys, "User attribute", labels)

    def initial_from(self, obj: Leaderboard) -> dict[str, Any]:
        keys = {
            pid: key for (_, key), pid in attribute_definitions(obj.tenant).ids_by_type_key.items()
        }
        return {
            **super().initial_from(obj),
            "metric": obj.metric_id,
            "points_system": obj.points_system_id,
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
        self.settings = None
        if not self.errors:
            settings = self._settings(self.valid_tenant)
            self.settings = None if self.errors else settings
        return cleaned

    @property
    def valid_settings(self) -> LeaderboardSettings:
        assert self.settings is not None  # noqa: S101 - a valid form has them
        return self.settings

    def _settings(self, tenant: Tenant) -> LeaderboardSettings:
        """What leaderboard_create or leaderboard_update is given, from valid input; an
        unknown attribute is an error of its input."""
        cleaned = self.cleaned_data
        values: dict[str, Any] = {
            **self.declared_values(),
            "metric_id": _public_id(cleaned["metric"]),
            "points_system_id": _public_id(cleaned["points_system"]),
            "breakdown_attributes": self._breakdown_ids(cleaned["breakdown_attributes"], tenant),
            "user_attributes": attribute_refs(self, "user_attributes", tenant, AttributeType.USER),
        }
        board = self.instance
        if board is not None:
            # A live board refuses these even unchanged: given only when they differ.
            for name in FROZEN_ONCE_LIVE:
                if values.get(name) == getattr(board, name):
                    values.pop(name, None)
            if values.get("status") == board.status:
                # Unchanged: not a transition (an active board past its end is not refused).
                del values["status"]
        return LeaderboardSettings(**values)

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
