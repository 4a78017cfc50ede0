"""A league's tiers and rewards as rows of its page: one formset each, shown like Django's
tabular inline rows (with its script's "Add another"), whose valid rows, in their order, are the
lists the configuration service takes (`values`). The rows are not stored objects of their own:
the league keeps them as lists, so a save hands the whole list to `league_create` or
`league_update`, and a refusal about the list is shown above its rows (`refuse`)."""

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from django import forms
from django.forms.formsets import DELETION_FIELD_NAME
from django.forms.utils import ErrorList

from apps.accounts.admin.forms import text_rules
from apps.core.api.fields import control_characters_error
from apps.leagues import domain

# What a place or a count of places may be: a cohort holds at most MAX_COHORT users.
PLACES = {"min_value": 0, "max_value": domain.MAX_COHORT}


def _number(label: str, help_text: str = "", **options: Any) -> forms.IntegerField:
    """A small number input that states its bounds to the browser too."""
    attrs = {"class": "vSmallNumber"}
    for attr, bound in (("min", options.get("min_value")), ("max", options.get("max_value"))):
        if bound is not None:
            attrs[attr] = str(bound)
    return forms.IntegerField(
        label=label, help_text=help_text, widget=forms.NumberInput(attrs=attrs), **options
    )


class TierForm(forms.Form):
    name = forms.CharField(
        label="Name",
        validators=text_rules(domain.TIER_NAME_LENGTH),
        widget=forms.TextInput(attrs={"maxlength": str(domain.TIER_NAME_LENGTH)}),
    )
    promote = _number(
        "Promote",
        "Places (or percent) that move up; the top tier promotes nobody.",
        initial=0,
        **PLACES,
    )
    demote = _number(
        "Demote",
        "Places (or percent) that move down; the lowest tier demotes nobody.",
        initial=0,
        **PLACES,
    )

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        # The API's rule for display strings.
        problem = control_characters_error("name", name)
        if problem is not None:
            raise forms.ValidationError(f"This field {problem}.")
        return name

    def value(self) -> dict[str, Any]:
        cleaned = self.cleaned_data
        return {"name": cleaned["name"], "promote": cleaned["promote"], "demote": cleaned["demote"]}


EVERY_TIER = ("", "Every tier")
NO_CHOICE = ("", "---------")


class RewardForm(forms.Form):
    """One reward: places, a tier (or every tier), and what it pays. The choices are set by
    the rows (`RewardRows`), read once for every row."""

    from_place = _number("From place", min_value=1, max_value=domain.MAX_COHORT)
    to_place = _number(
        "To place", "Empty: the from place only.", min_value=1, max_value=domain.MAX_COHORT
    )
    tier = forms.ChoiceField(label="Tier", required=False)
    points = _number("Points", min_value=0)
    points_system_id = forms.ChoiceField(label="Points system", required=False)
    achievement_id = forms.ChoiceField(
        label="Achievement", required=False, help_text="An api achievement, completed."
    )

    def __init__(self, *args: Any, choices: "RewardChoices", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["to_place"].required = False
        self.fields["points"].required = False
        fields: Any = self.fields
        # A stored choice that is no longer offered (a renamed tier, an archived system) stays,
        # marked, so that staff see it and change it; the service refuses it on save.
        for name, offered in (
            ("tier", [EVERY_TIER, *((t, t) for t in choices.tiers)]),
            ("points_system_id", [NO_CHOICE, *choices.systems]),
            ("achievement_id", [NO_CHOICE, *choices.achievements]),
        ):
            current = self.initial.get(name)
            known = {value for value, _ in offered}
            if current and current not in known:
                offered = [*offered, (current, f"{current} (no longer offered)")]
            fields[name].choices = offered

    def value(self) -> dict[str, Any]:
        cleaned = self.cleaned_data
        return {
            "from_place": cleaned["from_place"],
            "to_place": cleaned["to_place"] or cleaned["from_place"],
            "tier": cleaned["tier"] or None,
            "points": cleaned["points"] or 0,
            "points_system_id": cleaned["points_system_id"] or None,
            "achievement_id": cleaned["achievement_id"] or None,
        }


@dataclass(frozen=True)
class RewardChoices:
    tiers: list[str]  # tier names
    systems: list[tuple[str, str]]  # (public id, label)
    achievements: list[tuple[str, str]]


@dataclass(frozen=True)
class ShownRow:
    index: str  # "empty": the row "Add another" copies
    form: forms.Form
    stored: bool  # shown from the league (a Delete box), not added on this page


class PlaceRows(forms.BaseFormSet):
    """Rows of one list of the league (tiers, rewards), in order."""

    heading: ClassVar[str]
    noun: ClassVar[str]  # one row, for "Add another <noun>"
    orderable: ClassVar[bool] = False  # rows moved up and down (their order means something)
    description: ClassVar[str]

    too_many: ClassVar[str]  # the refusal of more rows than a league holds

    def __init__(self, *args: Any, editable: bool = True, **kwargs: Any) -> None:
        kwargs["error_messages"] = {"too_many_forms": self.too_many}
        super().__init__(*args, **kwargs)
        self.editable = editable
        self.refusals = ErrorList()
        if not editable:
            for form in self.forms:
                for field in form.fields.values():
                    field.disabled = True

    def values(self) -> list[dict[str, Any]]:
        """The valid rows, in the order shown, without deleted and untouched new ones."""
        kept = []
        for index, form in enumerate(self.forms):
            if self._deleted(form):
                continue
            if index >= self.initial_form_count() and not form.has_changed():
                continue
            kept.append(form.value())
        return kept

    def _deleted(self, form: forms.Form) -> bool:
        return bool(form.cleaned_data.get(DELETION_FIELD_NAME)) if self.can_delete else False

    def refuse(self, message: str) -> None:
        """A refusal of the whole list (the domain's or the service's), above the rows."""
        self.refusals.append(message)

    @property
    def has_errors(self) -> bool:
        return bool(self.refusals or self.non_form_errors() or any(self.errors))

    # --- what the page shows (admin/leagues/league/rows.html) ---------------------------------

    def inline_data(self) -> str:
        """The options of Django's admin/js/inlines.js ("Add another", "Remove")."""
        options = {
            "prefix": self.prefix,
            "addText": f"Add another {self.noun}",
            "deleteText": "Remove",
        }
        return json.dumps({"name": f"#{self.prefix}", "options": options})

    def shown(self) -> list[ShownRow]:
        rows = [
            ShownRow(str(index), form, index < self.initial_form_count())
            for index, form in enumerate(self.forms)
        ]
        if self.editable:
            rows.append(ShownRow("empty", self.empty_form, False))
        return rows

    def columns(self) -> list[Any]:
        form = self.empty_form
        return [form[name] for name in form.fields if name != DELETION_FIELD_NAME]


class TierRows(PlaceRows):
    too_many = f"A league has at most {domain.MAX_TIERS} tiers."
    heading = "Tiers"
    noun = "tier"
    orderable = True
    description = (
        "Lowest first: new users start in the first tier. Promote and demote are places of "
        "the cohort, or percentages of its members, as “Promote and demote by” says."
    )


class RewardRows(PlaceRows):
    too_many = f"A league has at most {domain.MAX_REWARDS} rewards."
    heading = "Rewards"
    noun = "reward"
    description = (
        "Paid when the week ends, per final placement in a cohort (in one tier, or in every "
        "tier): points into a points system, and/or the completion of an api achievement."
    )

    def __init__(self, *args: Any, choices: RewardChoices, **kwargs: Any) -> None:
        self.choices = choices
        super().__init__(*args, **kwargs)

    def get_form_kwargs(self, index: int | None) -> dict[str, Any]:
        return {"choices": self.choices}


def _rows(form: type[forms.Form], base: type[PlaceRows], maximum: int) -> Any:
    return forms.formset_factory(
        form,
        formset=base,
        extra=0,
        can_delete=True,
        can_delete_extra=True,
        max_num=maximum,
        validate_max=True,
        absolute_max=maximum + 50,
    )


TIER_ROWS: type[TierRows] = _rows(TierForm, TierRows, domain.MAX_TIERS)
REWARD_ROWS: type[RewardRows] = _rows(RewardForm, RewardRows, domain.MAX_REWARDS)
