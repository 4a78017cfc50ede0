"""The streak settings page's form: the tenant's declared settings (TenantStreakSettings) as
inputs, with the conditions as rows of metric and threshold, days off as weekday checkboxes and
the freezes as inputs of their own. Its limits are those of apps/streaks/domain.py, worded as
the admin API words them."""

from decimal import Decimal
from typing import Any, ClassVar

from django import forms
from django.utils.html import format_html
from django.utils.safestring import SafeString
from rest_framework import serializers as drf

from apps.accounts.admin.declared import declared_form, own_input
from apps.accounts.admin.forms import ParsedField, items_rules, range_rules, sentence, text_rules
from apps.accounts.admin.rows import RowsWidget
from apps.accounts.models import Tenant
from apps.core.api.fields import control_characters_error
from apps.core.declarations import settings_of
from apps.metrics.selectors import metric_definitions
from apps.streaks import domain
from apps.streaks.choices import EvaluationMode, Frequency, Weekday
from apps.streaks.domain import TenantStreakSettings
from apps.streaks.models import StreakSettings
from apps.streaks.selectors import streak_config

# The page lists the week from Monday; the values are the API's (0 is Sunday).
WEEK = (*Weekday.values[1:], Weekday.SUNDAY)
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


_Declared: Any = declared_form(
    TenantStreakSettings,
    model=StreakSettings,
    # No empty choice: the page shows the whole configuration, so a choice is always made.
    choices={
        "frequency": Frequency.choices,
        "evaluation_mode": [
            (EvaluationMode.AND, "Every condition (AND)"),
            (EvaluationMode.OR, "Any one condition (OR)"),
        ],
    },
)


def _own(name: str, field_class: type[forms.Field], **kwargs: Any) -> Any:
    return own_input(TenantStreakSettings, name, field_class, **kwargs)


class StreakSettingsForm(_Declared):
    """The tenant's streak settings as staff read them; `clean` makes the declaration
    streak_settings_update is given (`settings`). The form shows the whole configuration, so
    saving it sets it all."""

    # The declaration's order; the inputs of their own would otherwise come last.
    field_order = tuple(settings_of(TenantStreakSettings))

    conditions = _own("conditions", ConditionRowsField)
    days_off = _own(
        "days_off",
        forms.TypedMultipleChoiceField,
        choices=[(day, Weekday(day).label) for day in WEEK],
        coerce=int,
        widget=forms.CheckboxSelectMultiple(attrs={"class": "streak-days-off"}),
        validators=items_rules(domain.MAX_DAYS_OFF),
    )
    freezes_enabled = _own("freezes", forms.BooleanField, label="Enable freezes")
    # Unbounded inputs: the domain's limits are checked (FREEZE_RULES) only when freezes are on.
    freeze_start_count = forms.IntegerField(required=False, label="Freezes at start", initial=0)
    freeze_max_count = forms.IntegerField(required=False, label="Maximum freezes", initial=0)
    freeze_auto_earn_interval = forms.IntegerField(
        required=False,
        label="Earn freezes every",
        help_text="Days. Empty (with the amount): freezes are only granted by you.",
    )
    freeze_auto_earn_amount = forms.IntegerField(required=False, label="Freezes earned each time")

    def __init__(self, *args: Any, tenant: Tenant | None, instance: Any = None, **kwargs: Any):
        super().__init__(*args, tenant=tenant, instance=instance, **kwargs)
        # Not required by the declaration (an update may leave them out), but this page always
        # sends them.
        for name in ("frequency", "evaluation_mode"):
            self.fields[name].required = True
        self.settings: TenantStreakSettings | None = None
        widget: Any = self.fields["conditions"].widget
        metrics = metric_definitions(tenant) if tenant is not None else {}
        widget.labels = {key: f"{m.name} ({key})" for key, m in metrics.items()}
        widget.keys = sorted(metrics, key=lambda key: widget.labels[key].casefold())

    def initial_from(self, obj: StreakSettings) -> dict[str, Any]:
        """The declared settings, with the conditions as the pipeline reads them (the
        selector's snapshot, which knows their metrics' keys) and the freeze inputs."""
        config = streak_config(obj.tenant)
        conditions = sorted(
            (config.metric_keys[pk], _number(threshold))
            for pk, threshold in config.thresholds.items()
        )
        freezes = {name: getattr(obj, name) for name in ("freezes_enabled", *FREEZE_RULES)}
        return {**super().initial_from(obj), "conditions": conditions, **freezes}

    def clean(self) -> dict[str, Any]:
        """Every setting, read and checked as the admin API checks a PATCH that sends them
        all: each problem next to its input, in one pass."""
        cleaned = super().clean()
        self.settings = None
        if self.errors:
            return cleaned
        settings = TenantStreakSettings(
            **{
                **self.declared_values(),
                "conditions": self._conditions(cleaned["conditions"]),
                "freezes": self._freezes() if cleaned["freezes_enabled"] else None,
            }
        )
        self.settings = None if self.errors else settings
        return cleaned

    @property
    def valid_settings(self) -> TenantStreakSettings:
        assert self.settings is not None  # noqa: S101 - a valid form has them
        return self.settings

    def _conditions(self, rows: list[dict[str, str]]) -> list[tuple[str, int]]:
        problems = [
            sentence(f"{row['key']}: {problem}")
            for row in rows
            for problem in _row_problems(row["key"], row["threshold"])
        ]
        for problem in problems:
            self.add_error("conditions", problem)
        if problems:
            return []
        conditions = [(row["key"], THRESHOLD.run_validation(row["threshold"])) for row in rows]
        if (duplicate := domain.conditions_problem(k for k, _ in conditions)) is not None:
            self.add_error("conditions", sentence(duplicate.worded(self._label)))
        return conditions

    def _freezes(self) -> domain.FreezeSettings | None:
        values = {name: self.cleaned_data[name] for name in FREEZE_RULES}
        problems = False
        for name, value in values.items():
            if value is None and name in REQUIRED_FREEZES:
                problems = True
                self.add_error(name, "This field is required.")
            elif value is not None and (wrong := _first_problem(value, FREEZE_RULES[name])):
                problems = True
                self.add_error(name, sentence(wrong))
        if problems:
            return None
        # FreezeSettings' fields are the inputs named freeze_<field>.
        freezes = domain.FreezeSettings(
            **{name.removeprefix("freeze_"): value for name, value in values.items()}
        )
        if (problem := domain.freezes_problem(freezes)) is not None:
            message = problem.worded(lambda field: self._label(f"freeze_{field}"))
            self.add_error("freezes_enabled", sentence(message))
        return freezes


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
