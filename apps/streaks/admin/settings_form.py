"""The streak settings page's form: the arguments of streak_settings_update, with the
conditions as rows of metric and threshold, days off as weekday checkboxes and the freezes. Its
limits are those of apps/streaks/domain.py, worded as the admin API words them."""

from decimal import Decimal
from typing import Any, ClassVar

from django import forms
from django.utils.html import format_html
from django.utils.safestring import SafeString
from rest_framework import serializers as drf

from apps.accounts.admin.base import (
    ParsedField,
    RowsWidget,
    items_rules,
    range_rules,
    sentence,
    text_rules,
)
from apps.accounts.admin.config_pages import ConfigForm
from apps.accounts.models import Tenant
from apps.core.api.fields import control_characters_error
from apps.metrics.selectors import metric_definitions
from apps.streaks import domain
from apps.streaks.choices import EvaluationMode, Frequency
from apps.streaks.selectors import StreakConfig, streak_config

# 0 is Sunday, as in the admin API; the page lists the week from Monday.
DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
WEEK = (1, 2, 3, 4, 5, 6, 0)

FREEZE_RULES = {
    "freeze_start_count": range_rules(0, domain.MAX_FREEZES),
    "freeze_max_count": range_rules(0, domain.MAX_FREEZES),
    "freeze_auto_earn_interval": range_rules(1, domain.MAX_AUTO_EARN_DAYS),
    "freeze_auto_earn_amount": range_rules(1, domain.MAX_FREEZES),
}
REQUIRED_FREEZES = ("freeze_start_count", "freeze_max_count")
# A threshold typed in a row, read as the admin API reads one (whole numbers; its messages).
THRESHOLD = drf.IntegerField(min_value=1, max_value=domain.MAX_THRESHOLD)
_METRIC_KEY_RULES = text_rules(100)


def _number(value: Decimal) -> str:
    # Thresholds are stored with 6 decimal places and set as whole numbers: 500, not 500.000000.
    return format(value.normalize(), "f")


class ConditionRowsWidget(RowsWidget):
    """Conditions as rows of (metric, threshold) (streaks/settings.js)."""

    choice_name = "metric"
    value_name = "threshold"
    choice_label = "Metric"
    value_label = "At least, per period"
    noun = "condition"
    unknown = "(unknown metric)"

    class Media:
        js = ("streaks/settings.js",)
        css: ClassVar[dict[str, tuple[str, ...]]] = {"all": ("streaks/streaks.css",)}

    def empty_text(self) -> str:
        return "The tenant has no metrics yet: add one first."

    def value_input(self, name: str, value: str, disabled: str) -> SafeString:
        return format_html(
            '<input type="number" name="{}-threshold" value="{}" min="1" step="1" '
            'aria-label="Threshold"{}>',
            name,
            value,
            disabled,
        )


class ConditionRowsField(ParsedField):
    """Conditions as rows of metric key and threshold, both as typed; the form reads the
    thresholds (StreakSettingsForm.clean)."""

    widget = ConditionRowsWidget

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, **kwargs)

    def to_python(self, value: Any) -> list[dict[str, str]]:
        conditions = []
        for key, threshold in value or []:
            key, threshold = str(key).strip(), str(threshold).strip()
            if not key and not threshold:
                continue
            if not key:
                raise forms.ValidationError(f"Choose the metric of the threshold {threshold}.")
            if not threshold:
                raise forms.ValidationError(f"Give the threshold of {key}.")
            conditions.append({"key": key, "threshold": threshold})
        return conditions


class StreakSettingsForm(ConfigForm):
    """The arguments of streak_settings_update as a form; `clean` makes them (`arguments`). The
    form shows the whole configuration, so saving it sets it all."""

    frequency = forms.ChoiceField(
        label="Frequency",
        choices=Frequency.choices,
        help_text="How often users must meet the conditions. Changing it restarts every streak.",
    )
    conditions = ConditionRowsField(
        label="Conditions",
        help_text="The change of each metric a user needs in a period (whole numbers). No "
        "conditions: nobody extends a streak.",
    )
    evaluation_mode = forms.ChoiceField(
        label="Users must meet",
        choices=[
            (EvaluationMode.AND, "Every condition (AND)"),
            (EvaluationMode.OR, "Any one condition (OR)"),
        ],
    )
    days_off = forms.TypedMultipleChoiceField(
        label="Days off",
        choices=[(day, DAY_NAMES[day]) for day in WEEK],
        coerce=int,
        required=False,
        widget=forms.CheckboxSelectMultiple(attrs={"class": "streak-days-off"}),
        help_text="Daily streaks only: a day off neither extends nor breaks a streak. Saving a "
        "weekly or monthly frequency clears them.",
        validators=items_rules(domain.MAX_DAYS_OFF),
    )
    customization_enabled = forms.BooleanField(
        label="Users may customize",
        required=False,
        help_text="Users may set their own conditions and days off (preferences API).",
    )
    freezes_enabled = forms.BooleanField(
        label="Enable freezes",
        required=False,
        help_text="A freeze keeps a streak alive through one missed period.",
    )
    # Unbounded inputs: the domain's limits are checked (FREEZE_RULES) only when freezes are on.
    freeze_start_count = forms.IntegerField(required=False, label="Freezes at start")
    freeze_max_count = forms.IntegerField(required=False, label="Maximum freezes")
    freeze_auto_earn_interval = forms.IntegerField(
        required=False,
        label="Earn freezes every",
        help_text="Days. Empty (with the amount): freezes are only granted by you.",
    )
    freeze_auto_earn_amount = forms.IntegerField(required=False, label="Freezes earned each time")

    def __init__(self, *args: Any, tenant: Tenant | None, instance: Any = None, **kwargs: Any):
        # Read through the selector so the form shows what the pipeline uses.
        config = streak_config(instance.tenant) if instance is not None else StreakConfig()
        kwargs["initial"] = {**_initial_from_config(config), **kwargs.get("initial", {})}
        super().__init__(*args, tenant=tenant, instance=instance, **kwargs)
        self.arguments: dict[str, Any] = {}
        widget: Any = self.fields["conditions"].widget
        widget.keys = sorted(metric_definitions(tenant)) if tenant is not None else []

    def clean(self) -> dict[str, Any]:
        """Every setting, read and checked as the admin API checks a PATCH that sends them
        all: each problem next to its input, in one pass."""
        cleaned = super().clean()
        if self.errors:
            return cleaned
        self.arguments = {
            "frequency": cleaned["frequency"],
            "evaluation_mode": cleaned["evaluation_mode"],
            "customization_enabled": cleaned["customization_enabled"],
            "days_off": cleaned["days_off"],
            "conditions": self._conditions(cleaned["conditions"]),
            "freezes": self._freezes() if cleaned["freezes_enabled"] else None,
        }
        if self.errors:
            self.arguments = {}
        return cleaned

    def _conditions(self, rows: list[dict[str, str]]) -> list[tuple[str, int]]:
        conditions: list[tuple[str, int]] = []
        problems: list[str] = []
        for row in rows:
            key = row["key"]
            found = _row_problems(key, row["threshold"])
            if found:
                problems += [f"{key}: {problem}" for problem in found]
            else:
                conditions.append((key, THRESHOLD.run_validation(row["threshold"])))
        for problem in problems:
            self.add_error("conditions", sentence(problem))
        duplicate = None if problems else domain.conditions_problem(k for k, _ in conditions)
        if duplicate is not None:
            self.add_error("conditions", sentence(duplicate.worded(self._label)))
        return conditions

    def _freezes(self) -> domain.FreezeSettings | None:
        cleaned = self.cleaned_data
        values = {name: cleaned[name] for name in FREEZE_RULES}
        valid = True
        for name, value in values.items():
            if value is None and name in REQUIRED_FREEZES:
                self.add_error(name, "This field is required.")
                valid = False
            elif value is not None:
                valid = self._limit(name, value, FREEZE_RULES[name]) and valid
        if not valid:
            return None
        freezes = domain.FreezeSettings(
            start_count=values["freeze_start_count"],
            max_count=values["freeze_max_count"],
            auto_earn_interval=values["freeze_auto_earn_interval"],
            auto_earn_amount=values["freeze_auto_earn_amount"],
        )
        if (problem := domain.freezes_problem(freezes)) is not None:
            # FreezeSettings' fields are the inputs named freeze_<field>.
            message = problem.worded(lambda field: self._label(f"freeze_{field}"))
            self.add_error("freezes_enabled", sentence(message))
        return freezes

    def _limit(self, name: str, value: Any, rules: list[Any]) -> bool:
        problem = _first_problem(value, rules)
        if problem is not None:
            self.add_error(name, sentence(problem))
        return problem is None


def _initial_from_config(config: StreakConfig) -> dict[str, Any]:
    conditions = sorted(
        (config.metric_keys[pk], _number(threshold)) for pk, threshold in config.thresholds.items()
    )
    return {
        "frequency": config.frequency,
        "evaluation_mode": config.mode,
        "customization_enabled": config.customization_enabled,
        "days_off": sorted(config.days_off),
        "conditions": conditions,
        "freezes_enabled": config.freezes_enabled,
        "freeze_start_count": config.freeze_start_count,
        "freeze_max_count": config.freeze_max_count,
        "freeze_auto_earn_interval": config.freeze_auto_earn_interval,
        "freeze_auto_earn_amount": config.freeze_auto_earn_amount,
    }


def _row_problems(key: str, threshold: str) -> list[str]:
    """A condition's problems, as the admin API finds them in one item of `metrics`: control
    characters first and alone, then the key's length and the threshold."""
    if (problem := control_characters_error("key", key)) is not None:
        return [problem]
    problems = [p for p in [_first_problem(key, _METRIC_KEY_RULES)] if p is not None]
    try:
        THRESHOLD.run_validation(threshold)
    except drf.ValidationError as exc:
        problems += [str(message) for message in exc.detail]
    return problems


def _first_problem(value: Any, rules: list[Any]) -> str | None:
    for rule in rules:
        try:
            rule(value)
        except forms.ValidationError as exc:
            return "; ".join(exc.messages)
    return None
