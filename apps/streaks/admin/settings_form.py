"""The streak settings page's form: the body of PATCH /admin/v1/streaks/settings, with the
conditions as rows of metric and threshold, days off as weekday checkboxes and the freezes."""

import re
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from django import forms
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from apps.accounts.models import Tenant
from apps.metrics.selectors import metric_definitions
from apps.streaks.choices import EvaluationMode, Frequency
from apps.streaks.models import StreakSettings
from apps.streaks.selectors import StreakConfig, streak_config
from apps.streaks.serializers import StreakSettingsUpdateSerializer

# 0 is Sunday, as in the admin API; the page lists the week from Monday.
DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
WEEK = (1, 2, 3, 4, 5, 6, 0)

# Form fields named after the settings they edit, and the admin API key each one is sent as.
API_KEYS = {
    "frequency": "frequency",
    "evaluation_mode": "evaluationMode",
    "customization_enabled": "customizationEnabled",
    "days_off": "daysOff",
    "conditions": "metrics",
}
FREEZE_KEYS = {
    "freeze_start_count": "startCount",
    "freeze_max_count": "maxCount",
    "freeze_auto_earn_interval": "autoEarnInterval",
    "freeze_auto_earn_amount": "autoEarnAmount",
}

_API_WORD = re.compile(r"\b[a-z]+(?:[A-Z][a-z]*)+\b|\bmetrics\b")


def humanize(message: str, labels: Mapping[str, str]) -> str:
    """A service's or serializer's message in the words of the page: API keys become the
    labels staff see, and the sentence starts with a capital."""

    def label(match: re.Match[str]) -> str:
        word = match.group(0)
        return f"“{labels[word]}”" if word in labels else word

    text = _API_WORD.sub(label, message)
    return text[:1].upper() + text[1:]


def _number(value: Decimal) -> str:
    # Thresholds are stored with 6 decimal places and set as whole numbers: 500, not 500.000000.
    return format(value.normalize(), "f")


def _error_paths(detail: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    """DRF's nested error detail as (path, message) pairs: ("freezes", "maxCount"), "..."."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            yield from _error_paths(value, (*path, key))
    elif isinstance(detail, list):
        for index, value in enumerate(detail):
            nested = isinstance(value, dict | list)
            yield from _error_paths(value, (*path, index) if nested else path)
    else:
        yield path, str(detail)


class ConditionRowsWidget(forms.Widget):
    """Conditions as rows of (metric, threshold), with buttons to add and remove rows
    (streaks/settings.js). Without JavaScript one blank row is always shown, so a condition
    can still be added per save; the hidden template row is disabled, so it is never sent."""

    class Media:
        js = ("streaks/settings.js",)
        css: ClassVar[dict[str, tuple[str, ...]]] = {"all": ("streaks/streaks.css",)}

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs)
        self.metrics: list[str] = []

    def value_from_datadict(self, data: Any, files: Any, name: str) -> list[tuple[str, str]]:
        if hasattr(data, "getlist"):
            keys, thresholds = data.getlist(f"{name}-metric"), data.getlist(f"{name}-threshold")
        else:
            keys = list(data.get(f"{name}-metric", []))
            thresholds = list(data.get(f"{name}-threshold", []))
        return list(zip(keys, thresholds, strict=False))

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        return f"{name}-metric" not in data

    def _row(self, name: str, key: str, threshold: str, marker: str = "") -> SafeString:
        template = marker == "data-row-template"
        options = [("", "---------"), *((m, m) for m in self.metrics)]
        if key and key not in self.metrics:
            options.append((key, f"{key} (unknown metric)"))
        select = format_html_join(
            "",
            '<option value="{}"{}>{}</option>',
            ((value, " selected" if value == key else "", label) for value, label in options),
        )
        disabled = " disabled" if template else ""
        return format_html(
            '<tr data-row{}><td><select name="{}-metric" aria-label="Metric"{}>{}</select></td>'
            '<td><input type="number" name="{}-threshold" value="{}" min="1" step="1" '
            'aria-label="Threshold"{}></td><td><button type="button" class="rows-remove" '
            'data-remove-row title="Remove this condition">Remove</button></td></tr>',
            format_html(" {}{}", marker, " hidden" if template else "") if marker else "",
            name,
            disabled,
            select,
            name,
            threshold,
            disabled,
        )

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        rows = [(str(k), str(t)) for k, t in value] if isinstance(value, list | tuple) else []
        rows = [(k, t) for k, t in rows if k or t]
        if not self.metrics and not rows:
            return format_html(
                '<p class="rows-empty">{}</p>', "The tenant has no metrics yet: add one first."
            )
        return format_html(
            '<div class="rows" data-rows><table class="rows-table"><thead><tr><th>Metric</th>'
            "<th>At least, per period</th><th></th></tr></thead><tbody>{}{}{}</tbody></table>"
            '<button type="button" class="rows-add" data-add-row>Add a condition</button></div>',
            format_html_join("", "{}", ((self._row(name, k, t),) for k, t in rows)),
            self._row(name, "", "", "data-row-blank"),
            self._row(name, "", "", "data-row-template"),
        )


class ConditionRowsField(forms.Field):
    """Conditions as the admin API's `metrics` list; the serializer checks the thresholds."""

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

    def has_changed(self, initial: Any, data: Any) -> bool:
        try:
            return bool(self.to_python(initial) != self.to_python(data))
        except forms.ValidationError:
            return True


class StreakSettingsForm(forms.ModelForm):
    """The body of PATCH /admin/v1/streaks/settings as a form. Only `tenant` is a model field
    (see StreakSettingsAdmin.get_form): the settings are validated by the API's serializer and
    written by streak_settings_update, never copied onto the row by the form."""

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
    # Unbounded here: the serializer's limits are the rule, and its messages name them.
    freeze_start_count = forms.IntegerField(required=False, label="Freezes at start")
    freeze_max_count = forms.IntegerField(required=False, label="Maximum freezes")
    freeze_auto_earn_interval = forms.IntegerField(
        required=False,
        label="Earn freezes every",
        help_text="Days. Empty (with the amount): freezes are only granted by you.",
    )
    freeze_auto_earn_amount = forms.IntegerField(required=False, label="Freezes earned each time")

    class Meta:
        model = StreakSettings
        fields = ("tenant",)

    # The tenant whose metrics the conditions offer, when adding (set by the admin page).
    page_tenant: ClassVar[Tenant | None] = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        tenant = self.instance.tenant if self.instance.pk else self.page_tenant
        # Read through the selector so the form shows what the pipeline uses.
        config = streak_config(self.instance.tenant) if self.instance.pk else StreakConfig()
        self.initial = {**self.initial_from(config), **self.initial}
        widget: Any = self.fields["conditions"].widget
        widget.metrics = sorted(metric_definitions(tenant)) if tenant is not None else []
        self.api_data: dict[str, Any] = {}

    @staticmethod
    def initial_from(config: StreakConfig) -> dict[str, Any]:
        conditions = sorted(
            (config.metric_keys[pk], _number(threshold))
            for pk, threshold in config.thresholds.items()
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

    @classmethod
    def labels(cls) -> dict[str, str]:
        """Admin API key -> the label staff see."""
        fields = cls.base_fields
        return {
            key: str(fields[name].label) for name, key in (*API_KEYS.items(), *FREEZE_KEYS.items())
        }

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if self.errors:
            return cleaned
        # Every key is sent: the form shows the whole configuration, so saving it sets it all.
        body: dict[str, Any] = {key: cleaned[name] for name, key in API_KEYS.items()}
        freezes = {key: cleaned[name] for name, key in FREEZE_KEYS.items()}
        # Counts left empty are omitted, so the serializer says which one it requires.
        body["freezes"] = (
            {key: value for key, value in freezes.items() if value is not None}
            if cleaned["freezes_enabled"]
            else None
        )
        serializer = StreakSettingsUpdateSerializer(data=body)
        if serializer.is_valid():
            self.api_data = dict(serializer.validated_data)
        else:
            for path, message in _error_paths(serializer.errors):
                field, text = self._form_error(path, message, body["metrics"])
                self.add_error(field, humanize(text, self.labels()))
        return cleaned

    @staticmethod
    def _form_error(
        path: tuple[Any, ...], message: str, metrics: list[dict[str, str]]
    ) -> tuple[str | None, str]:
        """The form field that shows a serializer error at `path` (None: the whole form)."""
        head: Any = path[0] if path else None
        sub: Any = path[1] if len(path) > 1 else None
        if head == "metrics":
            if isinstance(sub, int):
                return "conditions", f"{metrics[sub]['key']}: {message}"
            return "conditions", message
        if head == "freezes":
            fields = {key: name for name, key in FREEZE_KEYS.items()}
            return fields.get(sub, "freezes_enabled"), message
        fields = {key: name for name, key in API_KEYS.items()}
        return fields.get(head), message
