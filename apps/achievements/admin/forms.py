"""The achievement form: the achievement's declared settings (AchievementSettings) as inputs,
with the tenant's metrics, achievements and attributes to choose from, turned into what
achievement_create or achievement_update is given. Which settings belong to which kind, and
which are required, come from the domain's tables, so the form keeps no second copy of the
rules; its limits are those the admin API enforces, in its words."""

import re
from decimal import Decimal
from typing import Any

from django import forms
from rest_framework import serializers as drf

from apps.accounts.admin.declared import declared_form, own_input
from apps.accounts.admin.forms import attribute_value_problems, items_rules, sentence
from apps.accounts.models import Tenant
from apps.achievements.admin.fields import (
    AttributeRowsField,
    BadgeUrlWidget,
    PrerequisitesWidget,
)
from apps.achievements.choices import Status, Trigger
from apps.achievements.domain import (
    MAX_PREREQUISITES,
    REQUIRED_FIELDS,
    TRIGGER_FIELDS,
    AchievementSettings,
)
from apps.achievements.models import Achievement
from apps.achievements.selectors import achievement_settings
from apps.core.api.fields import KEY_PATTERN
from apps.metrics.models import Metric
from apps.streaks.choices import Frequency
from apps.streaks.selectors import streak_config
from apps.users.choices import AttributeType
from apps.users.selectors import attribute_definitions, attribute_labels

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
# A threshold as the admin API reads one (its precision and its messages).
METRIC_VALUE = drf.DecimalField(max_digits=24, decimal_places=6, min_value=1)
# "Metric", "Composite", ...: a kind's name, as its choice above opens.
KIND_LABELS = {kind: text.split(":")[0] for kind, text in KIND_CHOICES}
PERIODS: dict[str, str] = {
    Frequency.DAILY: "days",
    Frequency.WEEKLY: "weeks",
    Frequency.MONTHLY: "months",
}
# Every kind's own settings.
KIND_SETTINGS = frozenset(name for names in TRIGGER_FIELDS.values() for name in names)


def _decimal(value: Decimal | None) -> str | None:
    # Amounts are stored with 6 decimal places; 1000 reads better than 1000.000000 (or 1E+3).
    return None if value is None else format(value.normalize(), "f")


def _metric_value(value: Decimal) -> None:
    try:
        METRIC_VALUE.run_validation(str(value))
    except drf.ValidationError as exc:
        raise forms.ValidationError([str(message) for message in exc.detail]) from None


def _filter_values(rows: list[tuple[str, str]]) -> None:
    problems = [p for p in attribute_value_problems(value for _, value in rows) if p]
    if problems:
        raise forms.ValidationError([sentence(p) for p in problems])


_Declared: Any = declared_form(
    AchievementSettings,
    model=Achievement,
    # The key keeps the refusal the metric and attribute pages word (key_field); the threshold
    # is read as the admin API reads it (_metric_value), not by the declared bounds alone.
    skip=("key", "metric_value"),
    choices={"trigger": KIND_CHOICES, "status": STATUS_CHOICES},
    widgets={
        "trigger": forms.RadioSelect(attrs={"class": "radiolist"}),
        "name": forms.TextInput(attrs={"class": "vTextField"}),
        "description": forms.Textarea(attrs={"rows": 3}),
        "status": forms.RadioSelect(attrs={"class": "radiolist"}),
        "badge_url": BadgeUrlWidget(),
    },
    initial={"trigger": Trigger.METRIC},
)


def _own(name: str, field_class: type[forms.Field], **kwargs: Any) -> Any:
    return own_input(AchievementSettings, name, field_class, **kwargs)


class AchievementForm(_Declared):
    """An achievement's settings as staff read them; `clean` makes the declaration the service
    is given (`settings`): the common settings and those of the chosen kind only."""

    key = _own(
        "key",
        forms.RegexField,
        regex=re.compile(KEY_PATTERN, re.ASCII),
        max_length=100,
        strip=False,  # a key with stray spaces is refused, not trimmed into another key
        error_messages={"invalid": "must contain only letters, digits, - and _"},
    )
    metric_id = _own("metric_id", forms.ModelChoiceField, queryset=Metric.objects.none())
    metric_value = _own("metric_value", forms.DecimalField, validators=[_metric_value])
    event_attributes = _own("event_attributes", AttributeRowsField, validators=[_filter_values])
    achievement_ids = _own(
        "achievement_ids",
        forms.ModelMultipleChoiceField,
        queryset=Achievement.objects.none(),
        widget=PrerequisitesWidget(),
        validators=items_rules(MAX_PREREQUISITES),
    )
    user_attributes = _own("user_attributes", AttributeRowsField, validators=[_filter_values])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.settings: AchievementSettings | None = None
        # The API may leave it out (inactive); on the page one of the radios is always chosen.
        self.fields["status"].required = True
        tenant = self.tenant  # a stored achievement's: pages look objects up in it only
        period = "periods"
        if tenant is not None:
            self._offer_tenant_choices(tenant)
            period = PERIODS.get(streak_config(tenant).frequency, period)
        streak_length = self.fields["streak_length"]
        streak_length.help_text = streak_length.help_text.format(period=period)

    def _offer_tenant_choices(self, tenant: Tenant) -> None:
        """Only this tenant's metrics, achievements and attributes can be chosen."""
        fields: Any = self.fields
        fields["metric_id"].queryset = Metric.objects.filter(tenant=tenant).order_by("name", "key")
        fields["metric_id"].label_from_instance = lambda m: f"{m.name} ({m.key})"
        others = Achievement.objects.filter(tenant=tenant).order_by("name")
        if self.instance is not None:
            others = others.exclude(pk=self.instance.pk)
        fields["achievement_ids"].queryset = others
        definitions = attribute_definitions(tenant).ids_by_type_key
        for name, kind in (
            ("user_attributes", AttributeType.USER),
            ("event_attributes", AttributeType.EVENT),
        ):
            labels = attribute_labels(tenant, kind)  # names first, keys second
            choices = sorted(
                [(pid, key) for (t, key), pid in definitions.items() if t == kind], key=_by_key
            )
            fields[name].set_attributes([(pid, labels.get(key, key)) for pid, key in choices])

    def initial_from(self, obj: Achievement) -> dict[str, Any]:
        return {
            **super().initial_from(obj),
            "metric_value": _decimal(obj.metric_value),
            "event_attributes": _rows(obj.event_attributes),
            "achievement_ids": [p.pk for p in obj.prerequisites.all()],
            "user_attributes": _rows(obj.user_attributes),
        }

    # --- what the service is given ----------------------------------------------------------

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        kind = cleaned.get("trigger")
        if kind is not None:
            # What is left in another kind's inputs is not part of it, nor are its mistakes.
            for name in KIND_SETTINGS - set(TRIGGER_FIELDS[kind]):
                self.errors.pop(name, None)
        if not self.errors:
            self._check_required(kind)
        self.settings = None
        if not self.errors:
            self.settings = AchievementSettings(**self._values(kind))
        return cleaned

    @property
    def valid_settings(self) -> AchievementSettings:
        assert self.settings is not None  # noqa: S101 - a valid form has them
        return self.settings

    def _values(self, kind: str) -> dict[str, Any]:
        """The common settings and those of the chosen kind only; on a change, only what
        differs from the stored achievement."""
        cleaned = self.cleaned_data  # without another kind's input that had a mistake
        metric = cleaned.get("metric_id")
        values = {
            **self.declared_values(),
            "user_attributes": _refs(cleaned["user_attributes"]),
            "metric_id": str(metric.public_id) if metric else None,
            "event_attributes": _refs(cleaned.get("event_attributes", [])),
            "achievement_ids": [str(a.public_id) for a in cleaned.get("achievement_ids", [])],
        }
        own = set(TRIGGER_FIELDS[kind])
        chosen = {name: v for name, v in values.items() if name not in KIND_SETTINGS or name in own}
        return chosen if self.instance is None else _changes(chosen, self.instance)

    def _check_required(self, kind: str) -> None:
        """The service refuses a new kind without its settings, and keeps the stored value when
        one is given empty; an achievement of a kind always has them, so the form asks for
        them."""
        label = _in_sentence(KIND_LABELS[Trigger(kind)])
        for name in REQUIRED_FIELDS[kind]:
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
    an edit of the description must not give the threshold. A new kind gives all of its
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
