"""Forms of a points system's levels, boosts and triggers: each holds the arguments of the
configuration function that creates or changes one part, used both as an inline row of the
system's page and on the part's own page."""

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from django import forms
from django.contrib.admin.widgets import AdminDateWidget
from rest_framework import serializers as drf

from apps.accounts.admin.base import ServiceForm, key_rules, range_rules, text_rules
from apps.accounts.models import Tenant
from apps.achievements.selectors import achievement_definitions
from apps.core.errors import ApplicationError
from apps.metrics.selectors import metric_definitions
from apps.points import domain
from apps.points.admin.forms import badge_rule
from apps.points.choices import Rounding
from apps.points.models import PointsBoost, PointsLevel, PointsSystem
from apps.users.choices import AttributeType
from apps.users.forms import (
    AttributePairsField,
    attribute_refs,
    attribute_values_rule,
    filter_pairs,
)
from apps.users.selectors import attribute_definitions

EMPTY = ("", "---------")


@dataclass(frozen=True)
class PartChoices:
    """What the part forms of one tenant offer. Read once per page from the cached definitions
    and shared by every inline row, so a system with many triggers costs no more queries."""

    metrics: list[tuple[str, str]]  # (public id, key)
    achievements: list[tuple[str, str]]  # (public id, key or name)
    user_keys: list[str]
    event_keys: list[str]

    @classmethod
    def of(cls, tenant: Tenant | None) -> "PartChoices":
        if tenant is None:
            return cls([], [], [], [])
        definitions = attribute_definitions(tenant)
        return cls(
            metrics=sorted(
                ((m.public_id, m.key) for m in metric_definitions(tenant).values()),
                key=lambda choice: choice[1],
            ),
            achievements=sorted(
                ((a.public_id, a.key or a.name) for a in achievement_definitions(tenant).values()),
                key=lambda choice: choice[1],
            ),
            user_keys=sorted(definitions.user_keys),
            event_keys=sorted(definitions.event_keys),
        )


class SystemPartForm(ServiceForm):
    """A level, boost or trigger. Its system is the page's (an inline row), the instance's (its
    own change page) or the one chosen (its own add page, among the selected tenant's)."""

    # Fields set when the part is created, shown disabled afterwards and never sent on update.
    set_once: ClassVar[tuple[str, ...]] = ()
    # Form field -> the configuration function's argument.
    arguments: ClassVar[dict[str, str]]
    create_only = ()
    # The selected tenant, for the choices of a part's own add page (set by its admin page).
    page_tenant: ClassVar[Tenant | None] = None

    def __init__(
        self,
        *args: Any,
        system: PointsSystem | None = None,
        choices: PartChoices | None = None,
        refusal: ApplicationError | None = None,
        **kwargs: Any,
    ) -> None:
        instance = kwargs.get("instance")
        if system is None and instance is not None and instance.pk:
            system = instance.system
        # Set before ServiceForm reads the stored part (initial_from needs the tenant).
        self.system = system
        self.tenant = system.tenant if system is not None else self.page_tenant
        # A configuration function refused this row on the previous try (see PartInline).
        self.refusal = refusal
        self.sent: set[str] = set()  # the inputs the call gets (limits apply to those only)
        super().__init__(*args, **kwargs)
        self.choices = choices or PartChoices.of(self.tenant)
        for name in self.set_once:
            if self.instance.pk and name in self.fields:
                self.fields[name].disabled = True

    def stored_tenant(self) -> Tenant:
        """The tenant of a stored part (it always has a system)."""
        if self.tenant is None:
            raise ValueError("a stored part belongs to a system")
        return self.tenant

    def config_tenant(self) -> Tenant | None:
        if self.system is not None:
            return self.system.tenant
        system = self.cleaned_data.get("system")
        return system.tenant if system is not None else None

    def values(self, tenant: Tenant) -> dict[str, Any]:
        """The inputs as the function's values, by form field (forms convert theirs)."""
        return {name: self.cleaned_data[name] for name in self.arguments if name in self.fields}

    def service_kwargs(self) -> dict[str, Any]:
        tenant = self.config_tenant()
        assert tenant is not None  # noqa: S101 - ServiceForm.clean asks only with a tenant
        values = self.values(tenant)
        if self.instance.pk:
            for name in self.set_once:
                values.pop(name, None)
        self.sent = set(values)
        return {self.arguments[name]: value for name, value in values.items()}

    def checks(self, name: str) -> bool:
        return name in self.sent

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.refusal is not None:
            self.refusal_add(self.refusal)
        return cleaned


class LevelForm(SystemPartForm):
    key = forms.CharField(
        strip=False, label="Key", help_text="How the API names the level; set for good."
    )
    name = forms.CharField(label="Name")
    points = forms.IntegerField(
        label="Points", help_text="Users with at least this many points reach the level."
    )
    description = forms.CharField(label="Description", required=False)
    badge_url = forms.CharField(required=False, label="Badge URL")

    arguments: ClassVar[dict[str, str]] = {
        "key": "key",
        "name": "name",
        "points": "points",
        "description": "description",
        "badge_url": "badge_url",
    }
    rules: ClassVar[dict[str, list[Any]]] = {
        "key": key_rules(),
        "name": text_rules(255),
        "points": range_rules(0, domain.MAX_POINTS),
        "description": text_rules(2000),
        "badge_url": [badge_rule],
    }
    set_once = ("key",)

    class Meta:
        model = PointsLevel
        fields = ("system",)

    def initial_from(self, obj: PointsLevel) -> dict[str, Any]:
        return {
            "key": obj.key,
            "name": obj.name,
            "points": obj.points,
            "description": obj.description,
            "badge_url": obj.badge_url or "",
        }

    def values(self, tenant: Tenant) -> dict[str, Any]:
        values = super().values(tenant)
        return {**values, "badge_url": values["badge_url"] or None}


def _multiplier(value: Decimal) -> None:
    """A multiplier as the admin API reads one (its precision and its messages)."""
    try:
        MULTIPLIER.run_validation(str(value))
    except drf.ValidationError as exc:
        raise forms.ValidationError([str(message) for message in exc.detail]) from None
    if (problem := domain.multiplier_problem(value)) is not None:
        raise forms.ValidationError(problem)


MULTIPLIER = drf.DecimalField(max_digits=8, decimal_places=4)


class BoostForm(SystemPartForm):
    name = forms.CharField(label="Name")
    multiplier = forms.DecimalField(label="Multiplier", help_text="E.g. 2 doubles, 0.5 halves.")
    rounding = forms.ChoiceField(label="Rounding", choices=Rounding.choices, initial=Rounding.DOWN)
    start = forms.DateField(label="Start", widget=AdminDateWidget)
    end = forms.DateField(
        label="End", required=False, widget=AdminDateWidget, help_text="Inclusive. Empty: no end."
    )
    user_id = forms.CharField(
        required=False,
        label="User id",
        help_text="A boost for this end-user only; set for good. Empty: everyone who matches "
        "the attribute filters.",
    )
    user_attributes = AttributePairsField(label="User attributes")

    arguments: ClassVar[dict[str, str]] = {
        "name": "name",
        "start": "start",
        "end": "end",
        "multiplier": "multiplier",
        "rounding": "rounding",
        "user_id": "user_id",
        "user_attributes": "user_attributes",
    }
    rules: ClassVar[dict[str, list[Any]]] = {
        "name": text_rules(255),
        "multiplier": [_multiplier],
        "user_id": text_rules(255),
        "user_attributes": [attribute_values_rule],
    }
    set_once = ("user_id",)

    class Meta:
        model = PointsBoost
        fields = ("system",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field: Any = self.fields["user_attributes"]
        field.set_keys(self.choices.user_keys, "User attribute")

    def initial_from(self, obj: PointsBoost) -> dict[str, Any]:
        return {
            "name": obj.name,
            "start": obj.start,
            "end": obj.end,
            "multiplier": obj.multiplier.normalize(),
            "rounding": obj.rounding,
            "user_id": obj.user.external_id if obj.user is not None else "",
            "user_attributes": filter_pairs(
                self.stored_tenant(), obj.user_attributes, AttributeType.USER
            ),
        }

    def values(self, tenant: Tenant) -> dict[str, Any]:
        values = super().values(tenant)
        if "user_id" in values:
            values["user_id"] = values["user_id"] or None
        values["user_attributes"] = attribute_refs(
            self, "user_attributes", tenant, AttributeType.USER
        )
        return values

    def check_rules(self) -> None:
        if self.instance.pk:
            return  # a change is checked by the function (the audience is set for good)
        kwargs = self.kwargs
        problem = domain.boost_problem(
            kwargs["start"], kwargs["end"], kwargs["user_id"], kwargs["user_attributes"]
        )
        if problem is not None:
            self.refusal_add(problem)
