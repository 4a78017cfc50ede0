"""The achievement form: what staff fill in, turned into the arguments of achievement_create or
achievement_update, the services the admin API calls. Which fields belong to which kind, and
which are required, come from the service's tables, so the form keeps no second copy of the
rules; its limits are those the admin API enforces, in its words."""

from decimal import Decimal
from typing import Any, ClassVar

from django import forms
from rest_framework import serializers as drf

from apps.accounts.admin.base import (
    attribute_value_problems,
    items_rules,
    key_field,
    range_rules,
    text_rules,
    url_problems,
)
from apps.accounts.admin.config_pages import ConfigForm
from apps.accounts.models import Tenant
from apps.achievements import configuration
from apps.achievements.admin.fields import (
    AttributeRowsField,
    BadgeUrlWidget,
    PrerequisitesWidget,
)
from apps.achievements.choices import Status, Trigger
from apps.achievements.models import Achievement
from apps.achievements.selectors import achievement_settings
from apps.metrics.models import Metric
from apps.streaks.choices import Frequency
from apps.streaks.selectors import streak_config
from apps.users.choices import AttributeType
from apps.users.selectors import attribute_definitions

KIND_CHOICES = [
    (Trigger.METRIC, "Metric: a user's total of a metric reaches a threshold"),
    (Trigger.STREAK, "Streak: a user's streak reaches a length"),
    (Trigger.API, "API: your backend completes it for a user"),
    (Trigger.ACHIEVEMENT, "Composite: a user has completed all of its prerequisites"),
    (Trigger.ANNIVERSARY, "Anniversary: a number of years since the user signed up"),
]
STATUS_CHOICES = [
    (Status.INACTIVE, "Inactive: a draft; nobody sees it and nobody can complete it"),
    (
        Status.ACTIVE,
        "Active: users complete it; activating it also completes it for every user who "
        "already qualifies (backdating, without notifications)",
    ),
    (Status.LOCKED, "Locked: no new completions; shown only to the users who completed it"),
]

# The settings of each kind, from the service's own table (the inputs are named as its
# arguments).
KIND_FIELDS: dict[str, tuple[str, ...]] = {
    str(kind): tuple(arguments) for kind, arguments in configuration.TRIGGER_FIELDS.items()
}
REQUIRED: dict[str, tuple[str, ...]] = {
    str(kind): tuple(arguments) for kind, arguments in configuration.REQUIRED_FIELDS.items()
}
# A threshold as the admin API reads one (its precision and its messages).
METRIC_VALUE = drf.DecimalField(max_digits=24, decimal_places=6, min_value=1)
KIND_LABELS = {
    Trigger.METRIC: "Metric",
    Trigger.STREAK: "Streak",
    Trigger.API: "API",
    Trigger.ACHIEVEMENT: "Composite",
    Trigger.ANNIVERSARY: "Anniversary",
}
PERIODS: dict[str, str] = {
    Frequency.DAILY: "days",
    Frequency.WEEKLY: "weeks",
    Frequency.MONTHLY: "months",
}


def _decimal(value: Decimal | None) -> str | None:
    # Amounts are stored with 6 decimal places; 1000 reads better than 1000.000000 (or 1E+3).
    return None if value is None else format(value.normalize(), "f")


def _metric_value(value: Decimal) -> None:
    try:
        METRIC_VALUE.run_validation(str(value))
    except drf.ValidationError as exc:
        raise forms.ValidationError([str(message) for message in exc.detail]) from None


def _badge_url(value: str) -> None:
    if problems := url_problems(value):
        raise forms.ValidationError(problems)


def _filter_values(rows: list[tuple[str, str]]) -> None:
    problems = [p for p in attribute_value_problems(value for _, value in rows) if p]
    if problems:
        raise forms.ValidationError(problems)


class AchievementForm(ConfigForm):
    trigger = forms.ChoiceField(
        choices=KIND_CHOICES,
        initial=Trigger.METRIC,
        label="Kind",
        widget=forms.RadioSelect(attrs={"class": "radiolist"}),
        help_text="What completes the achievement. Only the settings of this kind are saved.",
    )
    name = forms.CharField(widget=forms.TextInput(attrs={"class": "vTextField"}))
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    status = forms.ChoiceField(
        choices=STATUS_CHOICES,
        initial=Status.INACTIVE,
        widget=forms.RadioSelect(attrs={"class": "radiolist"}),
    )
    badge_url = forms.CharField(required=False, label="Badge URL", widget=BadgeUrlWidget())
    key = key_field(100)
    metric_id = forms.ModelChoiceField(
        queryset=Metric.objects.none(), required=False, label="Metric"
    )
    metric_value = forms.DecimalField(
        required=False,
        label="Metric threshold",
        help_text="Completed when the user's total of the metric reaches this value.",
    )
    event_attributes = AttributeRowsField(
        label="Event attribute filters",
        help_text="Only events carrying all these values count towards the threshold. "
        "None: every event of the metric.",
    )
    streak_length = forms.IntegerField(required=False, label="Streak length")
    anniversary_years = forms.IntegerField(
        required=False,
        label="Years since sign-up",
        help_text="Completed on this anniversary of the user's sign-up date, in their time zone; "
        "users without a sign-up date never complete it.",
    )
    achievement_ids = forms.ModelMultipleChoiceField(
        label="Prerequisites",
        queryset=Achievement.objects.none(),
        required=False,
        widget=PrerequisitesWidget(),
        help_text="Completed as soon as a user has completed all of these.",
    )
    user_attributes = AttributeRowsField(
        label="User attribute filters",
        help_text="Only users with all these attribute values can complete it. None: everyone.",
    )

    free_text = ("description",)
    # The limits the admin API enforces, on the inputs the call gets.
    rules: ClassVar[dict[str, list[Any]]] = {
        "name": text_rules(255),
        "description": text_rules(2000),
        "badge_url": [_badge_url],
        "metric_value": [_metric_value],
        "streak_length": range_rules(1, 100_000),
        "anniversary_years": range_rules(1, 200),
        "achievement_ids": items_rules(100),
        "user_attributes": [_filter_values],
        "event_attributes": [_filter_values],
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.sent: set[str] = set()  # the inputs the call gets (limits apply to those only)
        self.kwargs: dict[str, Any] = {}  # the service's arguments, once the form is valid
        super().__init__(*args, **kwargs)
        self.fields["key"].required = False
        self.fields[
            "key"
        ].help_text = (
            "Your backend completes the achievement with POST /achievements/{key}/complete."
        )
        tenant = self.config_tenant()
        if tenant is not None:
            self._offer_tenant_choices(tenant)

    def config_tenant(self) -> Tenant | None:
        return self.tenant if self.instance is None else self.instance.tenant

    def _offer_tenant_choices(self, tenant: Tenant) -> None:
        """Only this tenant's metrics, achievements and attributes can be chosen."""
        metric: Any = self.fields["metric_id"]
        metric.queryset = Metric.objects.filter(tenant=tenant).order_by("name", "key")
        metric.label_from_instance = lambda m: f"{m.name} ({m.key})"
        prerequisites: Any = self.fields["achievement_ids"]
        others = Achievement.objects.filter(tenant=tenant).order_by("name")
        if self.instance is not None:
            others = others.exclude(pk=self.instance.pk)
        prerequisites.queryset = others
        definitions = attribute_definitions(tenant).ids_by_type_key
        for name, kind in (
            ("user_attributes", AttributeType.USER),
            ("event_attributes", AttributeType.EVENT),
        ):
            rows: Any = self.fields[name]
            choices = [(pid, key) for (t, key), pid in definitions.items() if t == kind]
            rows.set_attributes(sorted(choices, key=_by_key))
        period = PERIODS.get(streak_config(tenant).frequency, "periods")
        self.fields["streak_length"].help_text = (
            f"Completed when a user's streak reaches this many {period} in a row (the streak "
            "frequency of the tenant's streak settings)."
        )

    def initial_from(self, obj: Achievement) -> dict[str, Any]:
        return {
            "trigger": obj.trigger,
            "name": obj.name,
            "description": obj.description or "",
            "status": obj.status,
            "badge_url": obj.badge_url or "",
            "key": obj.key or "",
            "metric_id": obj.metric_id,
            "metric_value": _decimal(obj.metric_value),
            "event_attributes": _rows(obj.event_attributes),
            "streak_length": obj.streak_length,
            "anniversary_years": obj.anniversary_years,
            "achievement_ids": [p.pk for p in obj.prerequisites.all()],
            "user_attributes": _rows(obj.user_attributes),
        }

    # --- the service's arguments ---------------------------------------------------------------

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if not self.errors:
            self.kwargs = self._arguments()
            self._check_limits()
        if self.errors:
            self.kwargs = {}
        return cleaned

    def _check_limits(self) -> None:
        for name, rules in self.rules.items():
            value = self.cleaned_data.get(name)
            if name not in self.sent or value in (None, "") or self.has_error(name):
                continue
            for rule in rules:
                try:
                    rule(value)
                except forms.ValidationError as exc:
                    for text in exc.messages:
                        self.add_error(name, text[:1].upper() + text[1:])

    def _arguments(self) -> dict[str, Any]:
        """The common settings and those of the chosen kind only (what is left in another
        kind's inputs is not part of it); on a change, only what differs from the stored
        achievement."""
        cleaned = self.cleaned_data
        kind = cleaned["trigger"]
        self._check_required(kind)
        if self.errors:
            return {}
        values = {
            "trigger": kind,
            "name": cleaned["name"],
            "description": cleaned["description"] or None,
            "status": cleaned["status"],
            "badge_url": cleaned["badge_url"] or None,
            "user_attributes": _refs(cleaned["user_attributes"]),
            "key": cleaned["key"] or None,
            "metric_id": str(cleaned["metric_id"].public_id) if cleaned["metric_id"] else None,
            "metric_value": cleaned["metric_value"],
            "event_attributes": _refs(cleaned["event_attributes"]),
            "streak_length": cleaned["streak_length"],
            "anniversary_years": cleaned["anniversary_years"],
            "achievement_ids": [str(a.public_id) for a in cleaned["achievement_ids"]],
        }
        other_kinds = {name for names in KIND_FIELDS.values() for name in names}
        own = set(KIND_FIELDS[kind])
        chosen = {
            name: value for name, value in values.items() if name not in other_kinds or name in own
        }
        if self.instance is not None:
            chosen = _changes(chosen, self.instance)
        self.sent = set(chosen)
        return chosen

    def _check_required(self, kind: str) -> None:
        """The service refuses a new kind without its fields, and keeps the stored value when one
        is sent empty; an achievement of a kind always has them, so the form asks for them."""
        label = _in_sentence(KIND_LABELS[Trigger(kind)])
        for name in REQUIRED[kind]:
            value = self.cleaned_data.get(name)
            if value is None or value == "" or (name == "achievement_ids" and not value):
                self.add_error(name, f"Required for {label} achievements.")


def _in_sentence(label: str) -> str:
    return label if label.isupper() else label.lower()


def _by_key(choice: tuple[str, str]) -> str:
    return choice[1]


def _rows(refs: list[dict[str, str]]) -> list[tuple[str, str]]:
    return [(ref["attributeId"], ref["attributeValue"]) for ref in refs]


def _refs(rows: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"attributeId": attribute, "attributeValue": value} for attribute, value in rows]


def _changes(values: dict[str, Any], achievement: Achievement) -> dict[str, Any]:
    """What differs from the stored achievement. Every qualification setting given to the
    service, even unchanged, backdates the achievement again (a scan of the tenant's users), so
    an edit of the description must not send the threshold. A new kind sends all of its
    settings: the service requires them."""
    stored = achievement_settings(achievement)  # the common settings and its kind's
    if values["trigger"] != stored["trigger"]:
        return values
    return {
        name: value for name, value in values.items() if not _same(name, value, stored.get(name))
    }


def _same(name: str, value: Any, stored: Any) -> bool:
    if name == "achievement_ids":
        return sorted(value or []) == sorted(stored or [])
    return bool(value == stored)
