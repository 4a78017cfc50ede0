"""Forms of a points system's levels, boosts and triggers: each is the body of the admin API's
create or update call for one part, used both as an inline row of the system's page and on the
part's own page."""

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from django import forms
from django.contrib.admin.widgets import AdminDateWidget

from apps.accounts.models import Tenant
from apps.achievements.selectors import achievement_definitions
from apps.metrics.selectors import metric_definitions
from apps.points import configuration
from apps.points.admin.forms import (
    AttributePairsField,
    ConfigForm,
    filter_pairs,
)
from apps.points.choices import Rounding, TimeUnit, TriggerStatus, TriggerType
from apps.points.models import PointsBoost, PointsLevel, PointsSystem, PointsTrigger
from apps.points.serializers import (
    BoostCreateSerializer,
    BoostUpdateSerializer,
    LevelCreateSerializer,
    LevelUpdateSerializer,
    TriggerCreateSerializer,
    TriggerUpdateSerializer,
)
from apps.users.choices import AttributeType
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


def _badge(url: str) -> dict[str, str] | None:
    return {"url": url} if url else None


class SystemPartForm(ConfigForm):
    """A level, boost or trigger. Its system is the page's (an inline row), the instance's (its
    own change page) or the one chosen (its own add page, among the selected tenant's)."""

    # Fields set when the part is created, shown disabled afterwards and never sent on update.
    set_once: ClassVar[tuple[str, ...]] = ()
    create_only = ()
    humanize_errors = True
    # The selected tenant, for the choices of a part's own add page (set by its admin page).
    page_tenant: ClassVar[Tenant | None] = None

    def __init__(
        self,
        *args: Any,
        system: PointsSystem | None = None,
        choices: PartChoices | None = None,
        refusal: str | None = None,
        **kwargs: Any,
    ) -> None:
        instance = kwargs.get("instance")
        if system is None and instance is not None and instance.pk:
            system = instance.system
        # Set before ConfigForm reads the stored part (initial_from needs the tenant).
        self.system = system
        self.tenant = system.tenant if system is not None else self.page_tenant
        # A configuration function refused this row on the previous try (see PartInline).
        self.refusal = refusal
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

    def body(self, cleaned: dict[str, Any], tenant: Tenant) -> dict[str, Any]:
        body = super().body(cleaned, tenant)
        if self.instance.pk:
            for name in self.set_once:
                body.pop(self.api_keys[name], None)
        return body

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.refusal:
            self.add_error(None, self.refusal)
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

    create_serializer = LevelCreateSerializer
    update_serializer = LevelUpdateSerializer
    api_keys: ClassVar[dict[str, str]] = {
        "key": "key",
        "name": "name",
        "points": "points",
        "description": "description",
        "badge_url": "badge",
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

    def body(self, cleaned: dict[str, Any], tenant: Tenant) -> dict[str, Any]:
        return {**super().body(cleaned, tenant), "badge": _badge(cleaned["badge_url"])}


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

    create_serializer = BoostCreateSerializer
    update_serializer = BoostUpdateSerializer
    api_keys: ClassVar[dict[str, str]] = {
        "name": "name",
        "start": "start",
        "end": "end",
        "multiplier": "multiplier",
        "rounding": "rounding",
        "user_id": "userId",
        "user_attributes": "userAttributes",
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

    def body(self, cleaned: dict[str, Any], tenant: Tenant) -> dict[str, Any]:
        body = super().body(cleaned, tenant)
        if "userId" in body:
            body["userId"] = body["userId"] or None
        body["userAttributes"] = self.attribute_refs("user_attributes", tenant, AttributeType.USER)
        return body


# Trigger form field -> admin API key. The fields of each trigger type are those of
# configuration.TRIGGER_FIELDS, so the form shows, requires and sends what the API does.
TRIGGER_KEYS = {
    "type": "type",
    "points": "points",
    "status": "status",
    "metric": "metricId",
    "metric_threshold": "metricThreshold",
    "event_attributes": "eventAttributes",
    "achievement": "achievementId",
    "streak_length": "streakLength",
    "time_interval": "timeInterval",
    "time_unit": "timeUnit",
    "user_attributes": "userAttributes",
    "block_if_out_of_points": "blockIfOutOfPoints",
}
_FIELD_OF_KEY = {key: name for name, key in TRIGGER_KEYS.items()}


def type_fields() -> dict[str, list[str]]:
    """Each trigger type's own form fields, for the page's script and the form's checks."""
    return {
        str(kind): [_FIELD_OF_KEY[key] for key in keys]
        for kind, keys in configuration.TRIGGER_FIELDS.items()
    }


class TriggerTypeSelect(forms.Select):
    """The trigger type; points/trigger-form.js shows the fields of the chosen type only."""

    class Media:
        js = ("points/trigger-form.js",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.attrs.update({"data-trigger-type": "", "data-type-fields": json.dumps(type_fields())})


class TriggerForm(SystemPartForm):
    type = forms.ChoiceField(
        label="Type",
        choices=TriggerType.choices,
        widget=TriggerTypeSelect,
        help_text="The type of an active trigger cannot change: deactivate it first.",
    )
    points = forms.IntegerField(label="Points", help_text="Negative: a deduction.")
    # As in the admin API, a new trigger pays nothing until it is switched on.
    status = forms.ChoiceField(
        label="Status", choices=TriggerStatus.choices, initial=TriggerStatus.INACTIVE
    )
    metric = forms.ChoiceField(label="Metric", required=False)
    metric_threshold = forms.IntegerField(
        label="Threshold", required=False, help_text="Paid at every multiple of the total."
    )
    event_attributes = AttributePairsField(label="Event attributes")
    achievement = forms.ChoiceField(label="Achievement", required=False)
    streak_length = forms.IntegerField(
        label="Streak length", required=False, help_text="Paid at every multiple."
    )
    time_interval = forms.IntegerField(label="Every", required=False)
    time_unit = forms.TypedChoiceField(
        label="Unit",
        choices=[EMPTY, *TimeUnit.choices],
        required=False,
        empty_value=None,
        help_text="Counted from the user's first activity in the system.",
    )
    user_attributes = AttributePairsField(label="User attributes")
    block_if_out_of_points = forms.BooleanField(
        label="Block if out of points",
        required=False,
        help_text="Deductions only: refuse the event rather than go below 0.",
    )

    create_serializer = TriggerCreateSerializer
    update_serializer = TriggerUpdateSerializer
    api_keys = TRIGGER_KEYS

    class Meta:
        model = PointsTrigger
        fields = ("system",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fields: Any = self.fields
        fields["metric"].choices = [EMPTY, *self.choices.metrics]
        fields["achievement"].choices = [EMPTY, *self.choices.achievements]
        fields["user_attributes"].set_keys(self.choices.user_keys, "User attribute")
        fields["event_attributes"].set_keys(self.choices.event_keys, "Event attribute")

    def initial_from(self, obj: PointsTrigger) -> dict[str, Any]:
        tenant = self.stored_tenant()
        metrics = {m.pk: m.public_id for m in metric_definitions(tenant).values()}
        achievements = {a.pk: a.public_id for a in achievement_definitions(tenant).values()}
        return {
            "type": obj.type,
            "points": obj.points,
            "status": obj.status,
            "user_attributes": filter_pairs(tenant, obj.user_attributes, AttributeType.USER),
            "block_if_out_of_points": obj.block_if_out_of_points,
            "metric": metrics.get(obj.metric_id, "") if obj.metric_id else "",
            "metric_threshold": obj.metric_threshold,
            "event_attributes": filter_pairs(tenant, obj.event_attributes, AttributeType.EVENT),
            "achievement": achievements.get(obj.achievement_id, "") if obj.achievement_id else "",
            "streak_length": obj.streak_length,
            "time_unit": obj.time_unit,
            "time_interval": obj.time_interval,
        }

    def body(self, cleaned: dict[str, Any], tenant: Tenant) -> dict[str, Any]:
        body = super().body(cleaned, tenant)
        body["metricId"] = body["metricId"] or None
        body["achievementId"] = body["achievementId"] or None
        kind = TriggerType(cleaned["type"])
        # The form shows the whole trigger, so an empty field of its type was emptied on
        # purpose; the API would keep the stored value of a field sent as null.
        for key in configuration.REQUIRED[kind]:
            if body.get(key) in (None, ""):
                self.add_error(_FIELD_OF_KEY[key], f"Required for {kind.label.lower()} triggers.")
        own = configuration.TRIGGER_FIELDS[kind]
        body["userAttributes"] = self.attribute_refs("user_attributes", tenant, AttributeType.USER)
        if "eventAttributes" in own:
            body["eventAttributes"] = self.attribute_refs(
                "event_attributes", tenant, AttributeType.EVENT
            )
        # Fields of other types are hidden and not part of the trigger: what they still hold
        # (after switching type, or without JavaScript) is not sent, as the API would refuse it.
        other = {f for fields in configuration.TRIGGER_FIELDS.values() for f in fields} - set(own)
        return {key: value for key, value in body.items() if key not in other}
