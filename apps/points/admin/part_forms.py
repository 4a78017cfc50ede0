"""Forms of a points system's levels, boosts and triggers: each holds what the configuration
function that creates or changes one part is given (`arguments`, made by `clean`; a level's
and a boost's inputs are derived from their declarations), used both as a row of the system's
page and on the part's own page."""

from dataclasses import dataclass
from dataclasses import field as dataclass_field
from decimal import Decimal
from typing import Any, ClassVar

from django import forms
from rest_framework import serializers as drf

from apps.accounts.admin.config_pages import ConfigForm
from apps.accounts.admin.declared import declared_form, own_input
from apps.accounts.models import Tenant
from apps.achievements.selectors import achievement_definitions
from apps.core.errors import ApplicationError
from apps.metrics.selectors import metric_definitions
from apps.points import domain, selectors
from apps.points.admin.forms import badge_rule
from apps.points.choices import Rounding
from apps.points.domain import PointsBoostSettings, PointsLevelSettings
from apps.points.models import PointsBoost, PointsSystem
from apps.users.choices import AttributeType
from apps.users.forms import (
    AttributePairsField,
    attribute_refs,
    attribute_values_rule,
    filter_pairs,
)
from apps.users.selectors import attribute_definitions, attribute_labels

EMPTY = ("", "---------")


@dataclass(frozen=True)
class PartChoices:
    """What the part forms of one tenant offer. Read once per page from the cached definitions
    and shared by every row, so a system with many triggers costs no more queries."""

    metrics: list[tuple[str, str]]  # (public id, key)
    achievements: list[tuple[str, str]]  # (public id, key or name)
    user_keys: list[str]
    event_keys: list[str]
    # Attribute keys -> "Name (key)" (one query per page, as the rest is read once per page).
    user_labels: dict[str, str] = dataclass_field(default_factory=dict)
    event_labels: dict[str, str] = dataclass_field(default_factory=dict)

    @classmethod
    def of(cls, tenant: Tenant | None) -> "PartChoices":
        if tenant is None:
            return cls([], [], [], [])
        definitions = attribute_definitions(tenant)
        return cls(
            # Names first, keys second (README, "The dashboard").
            metrics=sorted(
                ((m.public_id, f"{m.name} ({m.key})") for m in metric_definitions(tenant).values()),
                key=lambda choice: choice[1].casefold(),
            ),
            achievements=sorted(
                (
                    (a.public_id, f"{a.name} ({a.key})" if a.key else a.name)
                    for a in achievement_definitions(tenant).values()
                ),
                key=lambda choice: choice[1].casefold(),
            ),
            user_keys=sorted(definitions.user_keys),
            event_keys=sorted(definitions.event_keys),
            user_labels=attribute_labels(tenant, AttributeType.USER),
            event_labels=attribute_labels(tenant, AttributeType.EVENT),
        )


class PartForm(ConfigForm):
    """A level, boost or trigger. Its system is the page's (a row of the system's page), the
    stored part's (its own change page) or the one chosen (its own add page, among the
    selected tenant's active systems)."""

    # Inputs set when the part is created, shown disabled afterwards and never given on update.
    set_once: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        *args: Any,
        tenant: Tenant | None,
        instance: Any = None,
        system: PointsSystem | None = None,
        choices: PartChoices | None = None,
        **kwargs: Any,
    ) -> None:
        if system is None and instance is not None:
            system = instance.system
        self.system = system
        if system is not None:
            tenant = system.tenant
        self.choices = choices or PartChoices.of(tenant)
        self.arguments: dict[str, Any] = {}
        super().__init__(*args, tenant=tenant, instance=instance, **kwargs)
        if system is None:  # its own add page: the system is chosen
            self.fields = {
                "system": forms.ModelChoiceField(
                    label="System",
                    queryset=selectors.points_systems_active(tenant).order_by("key"),
                ),
                **self.fields,
            }
        for name in self.set_once:
            if instance is not None and name in self.fields:
                self.fields[name].disabled = True

    @property
    def valid_system(self) -> PointsSystem:
        system = self.system or self.cleaned_data["system"]
        assert isinstance(system, PointsSystem)  # noqa: S101 - the form is valid
        return system

    def stored_tenant(self) -> Tenant:
        """The tenant of a stored part (it always has a system)."""
        if self.tenant is None:
            raise ValueError("a stored part belongs to a system")
        return self.tenant

    def values(self, tenant: Tenant) -> dict[str, Any]:
        """The configuration function's arguments (forms convert theirs)."""
        return {name: self.cleaned_data[name] for name in self.base_fields}

    def check_rules(self) -> None:
        """Checks across inputs that the page shares with the admin API (forms override)."""

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.errors or self.tenant is None:
            return cleaned
        values = self.values(self.tenant)  # may refuse input too (an unknown attribute)
        if self.instance is not None:
            for name in self.set_once:
                values.pop(name, None)
        if not self.errors:
            self.arguments = values
            self.check_rules()
        return cleaned

    def refuse(self, exc: ApplicationError) -> None:
        """A refusal about several inputs stands next to the first of them."""
        named = [field for field in exc.fields if field in self.fields]
        if len(exc.fields) > 1 and named:
            self.add_error(named[0], exc.worded(self._label))
        else:
            super().refuse(exc)


_LevelInputs: Any = declared_form(PointsLevelSettings, skip=("badge_url",))


class LevelForm(PartForm, _LevelInputs):
    badge_url = own_input(
        PointsLevelSettings, "badge_url", forms.CharField, validators=[badge_rule]
    )

    set_once = ("key",)

    def values(self, tenant: Tenant) -> dict[str, Any]:
        return self.declared_values()


def _multiplier(value: Decimal) -> None:
    """A multiplier as the admin API reads one (its precision and its messages)."""
    try:
        MULTIPLIER.run_validation(str(value))
    except drf.ValidationError as exc:
        raise forms.ValidationError([str(message) for message in exc.detail]) from None
    if (problem := domain.multiplier_problem(value)) is not None:
        raise forms.ValidationError(problem[:1].upper() + problem[1:])


MULTIPLIER = drf.DecimalField(max_digits=8, decimal_places=4)
_BoostInputs: Any = declared_form(
    PointsBoostSettings,
    model=PointsBoost,
    skip=("multiplier",),
    choices={"rounding": Rounding.choices},
)


def _own(name: str, field_class: type[forms.Field], **kwargs: Any) -> Any:
    return own_input(PointsBoostSettings, name, field_class, **kwargs)


class BoostForm(PartForm, _BoostInputs):
    multiplier = _own("multiplier", forms.DecimalField, validators=[_multiplier])
    user_attributes = _own(
        "user_attributes", AttributePairsField, validators=[attribute_values_rule]
    )

    set_once = ("user_id",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field: Any = self.fields["user_attributes"]
        field.set_keys(self.choices.user_keys, "User attribute", self.choices.user_labels)

    def initial_from(self, obj: PointsBoost) -> dict[str, Any]:
        return {
            **super().initial_from(obj),
            "multiplier": obj.multiplier.normalize(),
            "user_id": obj.user.external_id if obj.user is not None else "",
            "user_attributes": filter_pairs(
                self.stored_tenant(), obj.user_attributes, AttributeType.USER
            ),
        }

    def values(self, tenant: Tenant) -> dict[str, Any]:
        return {
            **self.declared_values(),
            "user_attributes": attribute_refs(self, "user_attributes", tenant, AttributeType.USER),
        }

    def check_rules(self) -> None:
        if self.instance is not None:
            return  # a change is checked by the function (the audience is set for good)
        arguments = self.arguments
        problem = domain.boost_problem(
            arguments["start"],
            arguments.get("end"),
            arguments.get("user_id"),
            arguments["user_attributes"],
        )
        if problem is not None:
            self.refuse(problem)
