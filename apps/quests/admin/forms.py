"""The quest and pool pages' forms: the declared settings (QuestSettings, QuestPoolSettings) as
inputs, a quest's goals and a pool's quests as rows of (choice, number), the reward's system
and achievement and the user filters from the tenant's own. `clean` makes the declaration the
configuration service is given; the service checks the rest, and its refusals are shown next
to their input."""

from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar

from django import forms
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.declared import declared_form, own_input
from apps.accounts.admin.forms import ParsedField
from apps.accounts.admin.rows import RowsWidget
from apps.achievements.choices import Trigger
from apps.achievements.selectors import achievement_definitions
from apps.metrics.selectors import metric_definitions
from apps.points.selectors import points_config
from apps.quests.choices import Cadence, GoalKind, PoolCadence, PoolStatus, Status
from apps.quests.configuration import pool_settings_stored, quest_settings_stored
from apps.quests.domain import QuestPoolSettings, QuestSettings
from apps.quests.models import Quest, QuestPool
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
    (Status.ACTIVE, "Active: events count, from the moment it is activated"),
    (Status.ARCHIVED, "Archived: stops counting at once, gone from the API; history kept"),
]
CADENCE_CHOICES = [
    (Cadence.DAILY, "Daily, in each user's own time zone"),
    (Cadence.WEEKLY, "Weekly (Sunday to Saturday), in each user's own time zone"),
    (Cadence.MONTHLY, "Monthly, in each user's own time zone"),
    (Cadence.ONCE, "Once, from the start date to the end date"),
]
# The goal kinds that name nothing: their choice is the kind itself.
_PLAIN_GOALS = {
    GoalKind.ACTIVE_DAYS: "Active days (distinct local days with an event)",
    GoalKind.STREAK: "Streak extended (times)",
}
_NAMED_GOALS = {
    GoalKind.METRIC: ("metric_id", "Metric sum"),
    GoalKind.POINTS: ("points_system_id", "Points gained"),
    GoalKind.ACHIEVEMENT: ("achievement_id", "Achievement completed"),
}


class _NumberRows(RowsWidget):
    class Media:
        js = ("points/attribute-pairs.js",)
        css: ClassVar[dict[str, tuple[str, ...]]] = {"all": ("points/points.css",)}

    minimum = "0"
    step = "any"

    def value_input(self, name: str, value: str, disabled: str) -> SafeString:
        return format_html(
            '<input type="number" name="{}-{}" value="{}" min="{}" step="{}" aria-label="{}"{}>',
            name,
            self.value_name,
            value,
            self.minimum,
            self.step,
            self.value_label,
            disabled,
        )


class GoalRowsWidget(_NumberRows):
    """Goals as rows of (what counts, target)."""

    choice_name = "goal"
    value_name = "target"
    choice_label = "What counts"
    value_label = "Target in the period"
    noun = "goal"
    unknown = "(deleted)"

    def empty_text(self) -> str:  # pragma: no cover - the plain kinds are always offered
        return "Nothing to count."


class GoalRowsField(ParsedField):
    """A quest's goals: each row a choice ("metric:<id>", "active_days", ...) and a target
    (an achievement's is 1, whatever is typed)."""

    widget = GoalRowsWidget

    def to_python(self, value: Any) -> list[dict[str, Any]]:
        goals = []
        for choice, target in value or []:
            choice, target = str(choice).strip(), str(target).strip()
            if not choice and not target:
                continue
            if not choice:
                raise forms.ValidationError(f"Choose what the target {target} counts.")
            kind, _, ref = choice.partition(":")
            if kind not in GoalKind.values:
                raise forms.ValidationError(f"Unknown goal {choice}.")
            goal: dict[str, Any] = {"kind": kind}
            if kind == GoalKind.ACHIEVEMENT:
                goal["target"] = 1
            else:
                try:
                    goal["target"] = Decimal(target)
                except InvalidOperation:
                    labels: dict[str, str] = getattr(self.widget, "labels", {})
                    named = labels.get(choice, choice)
                    raise forms.ValidationError(f"Give the target of “{named}”.") from None
            if kind in _NAMED_GOALS:
                goal[_NAMED_GOALS[GoalKind(kind)][0]] = ref
            goals.append(goal)
        return goals


def goal_rows(goals: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Stored goals as the rows show them."""
    rows = []
    for goal in goals:
        kind = goal["kind"]
        named = _NAMED_GOALS.get(kind)
        choice = f"{kind}:{goal[named[0]]}" if named else kind
        rows.append((choice, str(goal.get("target", 1))))
    return rows


class PoolRowsWidget(_NumberRows):
    """A pool's quests as rows of (quest, weight)."""

    choice_name = "quest"
    value_name = "weight"
    choice_label = "Quest"
    value_label = "Weight (1 to 1000)"
    noun = "quest"
    unknown = "(deleted or archived)"
    minimum = "1"
    step = "1"

    def empty_text(self) -> str:
        return "The tenant has no quests yet: add some first."


class PoolRowsField(ParsedField):
    widget = PoolRowsWidget

    def to_python(self, value: Any) -> list[dict[str, Any]]:
        members = []
        for quest_id, weight in value or []:
            quest_id, weight = str(quest_id).strip(), str(weight).strip()
            if not quest_id and not weight:
                continue
            if not quest_id:
                raise forms.ValidationError(f"Choose the quest of the weight {weight}.")
            try:
                members.append({"quest_id": quest_id, "weight": int(weight or 1)})
            except ValueError:
                raise forms.ValidationError("A weight is a whole number.") from None
        return members


_QuestDeclared: Any = declared_form(
    QuestSettings,
    model=Quest,
    choices={"status": STATUS_CHOICES, "cadence": CADENCE_CHOICES},
    initial={"cadence": Cadence.DAILY},
)


def _own(name: str, field_class: type[forms.Field], **kwargs: Any) -> Any:
    return own_input(QuestSettings, name, field_class, **kwargs)


class QuestForm(_QuestDeclared):
    """A quest's settings as staff read them, its goals as rows; `clean` makes the declaration
    the service is given (`valid_settings`)."""

    goals = _own("goals", GoalRowsField)
    reward_points_system_id = _own(
        "reward_points_system_id",
        forms.ChoiceField,
        required=False,
        help_text="The system the reward's points go into.",
    )
    reward_achievement_id = _own(
        "reward_achievement_id",
        forms.ChoiceField,
        required=False,
        help_text="An api achievement a completion completes.",
    )
    user_attributes = _own(
        "user_attributes", AttributePairsField, validators=[attribute_values_rule]
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        tenant = self.tenant
        fields: Any = self.fields
        metrics = (
            sorted(metric_definitions(tenant).values(), key=lambda m: m.name) if tenant else []
        )
        systems = sorted(points_config(tenant).values(), key=lambda s: s.name) if tenant else []
        achievements = (
            sorted(achievement_definitions(tenant).values(), key=lambda a: a.name) if tenant else []
        )
        labels: dict[str, str] = {str(kind): label for kind, label in _PLAIN_GOALS.items()}
        for m in metrics:
            labels[f"metric:{m.public_id}"] = f"Metric sum: {m.name} ({m.key})"
        for s in systems:
            labels[f"points:{s.public_id}"] = f"Points gained: {s.name} ({s.key})"
        for a in achievements:
            labels[f"achievement:{a.public_id}"] = f"Achievement completed: {a.name}"
        goals: Any = fields["goals"].widget
        goals.keys, goals.labels = list(labels), labels
        fields["reward_points_system_id"].choices = [("", "---------")] + [
            (s.public_id, f"{s.name} ({s.key})") for s in systems
        ]
        fields["reward_achievement_id"].choices = [("", "---------")] + [
            (a.public_id, a.key or a.name) for a in achievements if a.trigger == Trigger.API
        ]
        user_keys = sorted(attribute_definitions(tenant).user_keys) if tenant is not None else []
        fields["user_attributes"].set_keys(user_keys, "User attribute")

    def initial_from(self, obj: Quest) -> dict[str, Any]:
        stored = quest_settings_stored(obj)
        declared = {
            name: "" if stored[name] is None else stored[name]
            for name in self.base_fields
            if name in stored and name not in ("user_attributes", "goals")
        }
        pairs = filter_pairs(obj.tenant, obj.user_attributes or [], AttributeType.USER)
        return {**declared, "goals": goal_rows(obj.goals), "user_attributes": pairs}

    @property
    def valid_settings(self) -> QuestSettings:
        cleaned = self.cleaned_data
        values: dict[str, Any] = {
            **self.declared_values(),
            "goals": cleaned["goals"],
            "reward_points_system_id": cleaned.get("reward_points_system_id") or None,
            "reward_achievement_id": cleaned.get("reward_achievement_id") or None,
            "user_attributes": attribute_refs(
                self, "user_attributes", self.valid_tenant, AttributeType.USER
            ),
        }
        return QuestSettings(**values)


_PoolDeclared: Any = declared_form(
    QuestPoolSettings,
    model=QuestPool,
    choices={
        "status": [
            (PoolStatus.ACTIVE, "Active: hands out its quests"),
            (PoolStatus.INACTIVE, "Inactive: its quests are nobody's"),
        ],
        "cadence": PoolCadence.choices,
    },
    initial={"cadence": PoolCadence.DAILY, "size": 3},
)


class QuestPoolForm(_PoolDeclared):
    quests = own_input(QuestPoolSettings, "quests", PoolRowsField)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        tenant = self.tenant
        quests = (
            Quest.objects.filter(tenant=tenant).exclude(status=Status.ARCHIVED).order_by("name")
            if tenant is not None
            else Quest.objects.none()
        )
        widget: Any = self.fields["quests"].widget
        widget.keys = [str(q.public_id) for q in quests]
        widget.labels = {str(q.public_id): f"{q.name} ({q.key}, {q.cadence})" for q in quests}

    def initial_from(self, obj: QuestPool) -> dict[str, Any]:
        stored = pool_settings_stored(obj)
        declared = {n: stored[n] for n in self.base_fields if n in stored and n != "quests"}
        rows = [(m["quest_id"], str(m["weight"])) for m in stored["quests"]]
        return {**declared, "quests": rows}

    @property
    def valid_settings(self) -> QuestPoolSettings:
        return QuestPoolSettings(
            **{**self.declared_values(), "quests": self.cleaned_data["quests"]}
        )
