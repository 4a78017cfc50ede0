"""The league page's form: the league's declared settings (LeagueSettings) as inputs, with the
tenant's metrics, points systems and user attributes to choose from, and its tiers and rewards
as rows (rows.py). `clean` makes the declaration the configuration service is given; the
service checks the rest, and its refusals are shown next to their input or above their rows."""

from typing import Any

from django import forms

from apps.accounts.admin.declared import declared_form, own_input
from apps.accounts.admin.forms import sentence
from apps.accounts.models import Tenant
from apps.achievements.choices import Trigger
from apps.achievements.selectors import achievement_definitions
from apps.core.errors import ApplicationError
from apps.leagues import domain
from apps.leagues.admin.rows import REWARD_ROWS, TIER_ROWS, PlaceRows, RewardChoices
from apps.leagues.choices import Absent, Idle, ScoreBy, Status, ZoneUnit
from apps.leagues.configuration import league_settings_stored
from apps.leagues.domain import LeagueSettings
from apps.leagues.models import League
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

STATUS_CHOICES = [
    (Status.INACTIVE, "Inactive: being set up, nothing counts"),
    (Status.ACTIVE, "Active: events count, weeks are finished and rewarded"),
    (Status.ARCHIVED, "Archived: as inactive, and gone from the API; the history is kept"),
]
SCORE_BY_CHOICES = [
    (ScoreBy.METRIC, "A metric's values sent during the week"),
    (ScoreBy.POINTS, "Points of a points system earned during the week"),
]
ZONE_UNIT_CHOICES = [
    (ZoneUnit.COUNT, "Places"),
    (ZoneUnit.PERCENT, "Percent of the cohort's members"),
]
IDLE_CHOICES = [
    (Idle.DEMOTE, "Move down a tier"),
    (Idle.LEAVE, "Leave the league (they start again in the lowest tier)"),
]
ABSENT_CHOICES = [
    (Absent.KEEP, "Keep the tier they earned"),
    (Absent.DEMOTE, "Come back one tier lower"),
]
ACTIVE_KEY_HELP = "Set while the league is active: make it inactive to change it."
# Inputs of the rows are named <prefix>-<index>-<field>; a page holds at most this many.
MAX_POSTED_ROWS = domain.MAX_TIERS + 50


_Declared: Any = declared_form(
    LeagueSettings,
    model=League,
    choices={
        "status": STATUS_CHOICES,
        "score_by": SCORE_BY_CHOICES,
        "zone_unit": ZONE_UNIT_CHOICES,
        "idle": IDLE_CHOICES,
        "absent": ABSENT_CHOICES,
    },
    widgets={"score_by": forms.RadioSelect, "zone_unit": forms.RadioSelect},
    initial={"score_by": ScoreBy.METRIC, "week_ends_at": "24:00"},
)


def _own(name: str, field_class: type[forms.Field], **kwargs: Any) -> Any:
    return own_input(LeagueSettings, name, field_class, **kwargs)


def _label(obj: Metric | PointsSystem) -> str:
    return f"{obj.name} ({obj.key})"


class LeagueForm(_Declared):
    """A league's settings as staff read them, with its tiers and rewards as rows
    (`tier_rows`, `reward_rows`); `clean` makes the declaration the service is given
    (`valid_settings`)."""

    metric_id = _own(
        "metric_id",
        forms.ModelChoiceField,
        queryset=Metric.objects.none(),
        to_field_name="public_id",
        required=False,
        help_text="The metric whose values score, for a league scored by a metric.",
        error_messages={"invalid_choice": "Choose a metric of this tenant."},
    )
    points_system_id = _own(
        "points_system_id",
        forms.ModelChoiceField,
        queryset=PointsSystem.objects.none(),
        to_field_name="public_id",
        required=False,
        help_text="The system whose points score, for a league scored by points.",
        error_messages={"invalid_choice": "Choose an active points system of this tenant."},
    )
    user_attributes = _own(
        "user_attributes", AttributePairsField, validators=[attribute_values_rule]
    )

    def __init__(self, *args: Any, editable: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.settings: LeagueSettings | None = None
        tenant, league = self.tenant, self.instance
        fields: Any = self.fields
        fields["metric_id"].queryset = Metric.objects.filter(tenant=tenant).order_by("name", "key")
        fields["metric_id"].label_from_instance = _label
        systems = points_systems_active(tenant).order_by("name", "key")
        fields["points_system_id"].queryset = systems
        fields["points_system_id"].label_from_instance = _label
        user_keys = sorted(attribute_definitions(tenant).user_keys) if tenant is not None else []
        fields["user_attributes"].set_keys(user_keys, "User attribute")
        if league is not None and league.status == Status.ACTIVE:
            fields["key"].help_text = ACTIVE_KEY_HELP
        data = args[0] if args else None
        tiers = list(league.tiers) if league is not None else domain.default_tiers()
        self.tier_rows = TIER_ROWS(data, prefix="tiers", initial=tiers, editable=editable)
        choices = RewardChoices(
            tiers=_posted_names(data) if data is not None else [t["name"] for t in tiers],
            systems=[(str(s.public_id), _label(s)) for s in systems],
            achievements=_api_achievements(tenant),
        )
        rewards = list(league.rewards) if league is not None else []
        self.reward_rows = REWARD_ROWS(
            data, prefix="rewards", initial=rewards, choices=choices, editable=editable
        )

    @property
    def row_sets(self) -> list[PlaceRows]:
        return [self.tier_rows, self.reward_rows]

    @property
    def media(self) -> forms.Media:
        media = super().media
        for rows in self.row_sets:
            media += rows.media
        return media

    def initial_from(self, obj: League) -> dict[str, Any]:
        stored = league_settings_stored(obj)
        declared = {
            name: "" if stored[name] is None else stored[name]
            for name in self.base_fields
            if name in stored and name != "user_attributes"
        }
        pairs = filter_pairs(obj.tenant, obj.user_attributes or [], AttributeType.USER)
        return {**declared, "user_attributes": pairs}

    def is_valid(self) -> bool:
        valid = super().is_valid()
        return all([valid, *(rows.is_valid() and not rows.refusals for rows in self.row_sets)])

    @property
    def rows_have_errors(self) -> bool:
        return self.is_bound and any(rows.has_errors for rows in self.row_sets)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        self.settings = None
        valid = [rows.is_valid() for rows in self.row_sets]  # each, so each shows its errors
        rows_valid = all(valid)
        if self.errors or not rows_valid:
            return cleaned
        tiers = self.tier_rows.values()
        # The domain's rule, checked here too so that it shows above the rows it is about
        # before anything else is checked.
        problem = domain.tiers_problem(tiers)
        if problem is not None:
            self.refuse(problem)
            return cleaned
        settings = self._settings(self.valid_tenant, tiers)
        self.settings = None if self.errors else settings
        return cleaned

    @property
    def valid_settings(self) -> LeagueSettings:
        assert self.settings is not None  # noqa: S101 - a valid form has them
        return self.settings

    def _settings(self, tenant: Tenant, tiers: list[dict[str, Any]]) -> LeagueSettings:
        """What league_create or league_update is given: every setting, as the page shows it
        (the service takes an unchanged frozen setting of an active league as no change). The
        reference the chosen way of scoring does not use is cleared."""
        cleaned = self.cleaned_data
        score_by = cleaned["score_by"]
        metric, system = cleaned["metric_id"], cleaned["points_system_id"]
        values: dict[str, Any] = {
            **self.declared_values(),
            "metric_id": str(metric.public_id) if metric and score_by == ScoreBy.METRIC else None,
            "points_system_id": (
                str(system.public_id) if system and score_by == ScoreBy.POINTS else None
            ),
            "tiers": tiers,
            "rewards": self.reward_rows.values(),
            "user_attributes": attribute_refs(self, "user_attributes", tenant, AttributeType.USER),
        }
        return LeagueSettings(**values)

    def refuse(self, exc: ApplicationError) -> None:
        """A refusal of the tiers or the rewards goes above their rows; any other as usual."""
        rows = {"tiers": self.tier_rows, "rewards": self.reward_rows}
        field = exc.fields[0] if len(exc.fields) == 1 else None
        if field not in rows:
            super().refuse(exc)
            return
        shown = rows[field]
        rest = exc.template.removeprefix("{" + field + "}")
        if rest.startswith(": "):
            shown.refuse(sentence(rest[2:]))
        else:
            shown.refuse(exc.worded(lambda _: f"“{shown.heading}”"))


def _posted_names(data: Any) -> list[str]:
    """The tier names of the posted rows (a reward may name a tier added in the same save)."""
    try:
        count = min(int(data.get("tiers-TOTAL_FORMS", 0)), MAX_POSTED_ROWS)
    except (TypeError, ValueError):
        count = 0
    names = []
    for index in range(count):
        name = str(data.get(f"tiers-{index}-name", "")).strip()
        if name and not data.get(f"tiers-{index}-DELETE") and name not in names:
            names.append(name)
    return names


def _api_achievements(tenant: Tenant | None) -> list[tuple[str, str]]:
    """The achievements a reward may complete (api ones), by public id, from the cached
    definitions."""
    if tenant is None:
        return []
    found = [
        (d.public_id, d.key or d.name)
        for d in achievement_definitions(tenant).values()
        if d.trigger == Trigger.API
    ]
    return sorted(found, key=lambda choice: choice[1])
