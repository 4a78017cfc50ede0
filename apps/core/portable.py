"""Configuration as portable states: each object of a tenant's configuration as its admin API
renders it, with database ids replaced by keys (issue 28; README "Configuration as code").

A `Kind` is one sort of configuration object (metrics, achievements, the streak settings...).
Each app declares its kinds in its own `portable.py` (registered when Django starts, by the
app's AppConfig), built on the app's admin `Collection` (apps/core/bulk.py): a state is what
the admin API returns, less what the server decides (ids, timestamps, statistics), and a state
is written back through the same input serializers and configuration services as an admin API
request, so a configuration file, a promote and a revert are validated exactly like the API.

What reads states: the change history (apps/accounts/history.py: an object's state before and
after each write), and apps/changes (the configuration file, the diff between two tenants,
promote, clone and revert).
"""

import dataclasses
import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson
from rest_framework import serializers

from apps.core.api.renderers import json_dumps
from apps.core.bulk import Collection, DeleteAsked
from apps.core.errors import ValidationError
from apps.core.scope import Scope

State = dict[str, Any]
# A list of references: its wire name -> (its name in a state, the kind it names)
Refs = Mapping[str, tuple[str, str]]

_KINDS: dict[str, "Kind"] = {}


def register(kind: "Kind") -> "Kind":
    _KINDS[kind.name] = kind
    return kind


def kinds() -> list["Kind"]:
    """Every kind, in the order a configuration is written (what others name comes first)."""
    return sorted(_KINDS.values(), key=lambda kind: kind.order)


def kind(name: str) -> "Kind":
    return _KINDS[name]


class Context:
    """One tenant's configuration being read or written: the scope the admin collections take,
    and the maps between objects' public ids and their keys, read once per kind and forgotten
    when the kind is written."""

    def __init__(self, tenant: Any) -> None:
        self.tenant = tenant
        self.scope = Scope(
            environment=tenant.environment, tenant=tenant, key_kind="admin", key_id=None
        )
        self._keys: dict[str, dict[str, str]] = {}

    def keys(self, kind_name: str) -> dict[str, str]:
        """public id -> key of every object of the kind."""
        if kind_name not in self._keys:
            self._keys[kind_name] = _KINDS[kind_name].index(self)
        return self._keys[kind_name]

    def key_of(self, kind_name: str, public_id: Any) -> str | None:
        return self.keys(kind_name).get(str(public_id))

    def id_of(self, kind_name: str, key: str) -> str:
        for public_id, known in self.keys(kind_name).items():
            if known == key:
                return public_id
        raise ValidationError(f"There is no {_KINDS[kind_name].label} {key!r}")

    def written(self, kind_name: str) -> None:
        self._keys.pop(kind_name, None)


class Kind(ABC):
    name: str
    label: str  # for people: "metric", "points level"
    order: int
    # Part of configuration files, diffs and promotes (False: history only, as webhook
    # endpoints and push channels, whose secrets and addresses belong to one environment).
    portable: bool = True

    @abstractmethod
    def export(self, ctx: Context) -> dict[str, State]:
        """key -> state of every object of the kind."""

    def index(self, ctx: Context) -> dict[str, str]:
        """public id -> key (for the kinds others refer to)."""
        return {}

    @abstractmethod
    def create(self, ctx: Context, key: str, state: State) -> None: ...

    @abstractmethod
    def change(self, ctx: Context, key: str, changes: State) -> None:
        """Apply the fields of `changes` (those that differ) to the object."""

    @abstractmethod
    def remove(self, ctx: Context, key: str) -> str:
        """Archive the object where its kind can be archived, else delete it; what was done."""

    @abstractmethod
    def delete(self, ctx: Context, key: str) -> None:
        """Delete the object, as the admin API's DELETE does (with its refusals)."""


# Fields that name another object by its public id on the wire, at any depth (user attribute
# filters' attributeId, a league reward's pointsSystemId): in a state, the field without "Id",
# naming the object by its key.
ID_FIELDS: Mapping[str, tuple[str, str]] = {
    "attributeId": ("attribute", "attribute"),
    "metricId": ("metric", "metric"),
    "pointsSystemId": ("pointsSystem", "points_system"),
    "achievementId": ("achievement", "achievement"),
    "rewardPointsSystemId": ("rewardPointsSystem", "points_system"),
    "rewardAchievementId": ("rewardAchievement", "achievement"),
    "questId": ("quest", "quest"),
}
_STATE_FIELDS = {field: (wire, target) for wire, (field, target) in ID_FIELDS.items()}


def _translate(value: Any, ctx: Context, outward: bool) -> Any:
    """A rendered value with ids as keys (outward), or a state's value with keys as this
    tenant's ids."""
    if isinstance(value, list):
        return [_translate(item, ctx, outward) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for name, item in value.items():
        if outward and name in ID_FIELDS:
            field, target = ID_FIELDS[name]
            out[field] = None if item is None else ctx.key_of(target, item) or str(item)
        elif not outward and name in _STATE_FIELDS:
            wire, target = _STATE_FIELDS[name]
            out[wire] = None if item is None else ctx.id_of(target, item)
        else:
            out[name] = _translate(item, ctx, outward)
    return out


@dataclasses.dataclass
class CollectionKind(Kind):
    """A kind written through an admin Collection: export is its list and render, a create its
    create serializer and service, a change its update serializer and service."""

    name: str
    label: str
    order: int
    collection: Collection
    key_of: Callable[[Any], str] = lambda obj: obj.key
    refs: Refs = dataclasses.field(default_factory=dict)
    # Fields of the render the server decides (besides id, created, updated).
    drop: frozenset[str] = frozenset()
    # Its model: a write of one object reads that object's state only (the history).
    model: type[Any] | None = None
    # What archives an object (a status), or None: removing deletes it.
    archived: State | None = None
    # Its deletion archives it (a points system keeps its ledger): what removing it is called.
    deletion_archives: bool = False
    portable: bool = True
    # Kinds whose objects live in a parent (levels of a points system): the parent's kind, how
    # an object names its parent's key, and the parents to list.
    parent_kind: str | None = None
    parents: Callable[[Context], Iterable[Any]] | None = None
    parent_kwarg: str = "system_id"  # the URL's name of the parent, as collection.parent takes it
    # What a state keeps of the render beyond `drop`, when that depends on the object (the HTML a
    # template's blocks generate).
    tidy: Callable[[State], State] = lambda state: state
    # Which objects are configuration (a boost for one user is that user's, not the tenant's).
    include: Callable[[Any], bool] = lambda obj: True

    def _objects(self, ctx: Context) -> Iterable[tuple[Any, Any]]:
        for parent in self.parents(ctx) if self.parents else [None]:
            for obj in self.collection.list(ctx.scope, parent, 1_000_000, 0):
                if self.include(obj):
                    yield parent, obj

    def _key(self, parent: Any, obj: Any) -> str:
        own = self.key_of(obj)
        return f"{parent.key}/{own}" if parent is not None else own

    def index(self, ctx: Context) -> dict[str, str]:
        return {str(obj.public_id): self._key(parent, obj) for parent, obj in self._objects(ctx)}

    def one(self, ctx: Context, pk: Any) -> tuple[str, State] | None:
        """The key and state of one object, read again; None when it is gone."""
        assert self.model is not None  # noqa: S101 - only kinds that name their model
        obj = self.model._default_manager.filter(pk=pk).first()
        if obj is None or not self.include(obj):
            return None
        parent = getattr(obj, "system", None) if self.parent_kind else None
        return self._key(parent, obj), plain(
            self.tidy(self.state(ctx, self.collection.render(obj)))
        )

    def export(self, ctx: Context) -> dict[str, State]:
        states: dict[str, State] = {}
        for parent, obj in self._objects(ctx):
            key = self._key(parent, obj)
            while key in states:  # two objects the same key describes (templates' names)
                key += "+"
            states[key] = plain(self.tidy(self.state(ctx, self.collection.render(obj))))
        return states

    @functools.cached_property
    def settable(self) -> frozenset[str]:
        """The wire names a create or an update takes: what the server decides is no setting."""
        names: set[str] = set()
        for serializer in (self.collection.create_serializer, self.collection.update_serializer):
            if serializer is not None:
                names |= set(serializer().fields)
        return frozenset(names - {"id"} - self.drop)

    @functools.cached_property
    def changeable(self) -> frozenset[str]:
        serializer = self.collection.update_serializer
        return frozenset(serializer().fields) - {"id"} if serializer else frozenset()

    def state(self, ctx: Context, rendered: Mapping[str, Any]) -> State:
        kept = {name: value for name, value in rendered.items() if name in self.settable}
        state: State = _translate(
            {name: value for name, value in kept.items() if name not in self.refs}, ctx, True
        )
        for wire, (field, target) in self.refs.items():  # lists of ids
            if wire in kept:
                ids = kept[wire]
                state[field] = (
                    None if ids is None else sorted(ctx.key_of(target, i) or str(i) for i in ids)
                )
        return state

    def wire(self, ctx: Context, state: Mapping[str, Any]) -> dict[str, Any]:
        """A state as the admin API takes it: keys back to this tenant's ids."""
        back = {field: (wire, target) for wire, (field, target) in self.refs.items()}
        data: dict[str, Any] = _translate(
            {name: value for name, value in state.items() if name not in back}, ctx, False
        )
        for field, (wire, target) in back.items():
            if field in state:
                keys = state[field]
                data[wire] = None if keys is None else [ctx.id_of(target, key) for key in keys]
        return data

    def _parent(self, ctx: Context, key: str) -> tuple[Any, str]:
        if self.parent_kind is None:
            return None, key
        parent_key, _, own = key.partition("/")
        parent_id = ctx.id_of(self.parent_kind, parent_key)
        return self.collection.parent(ctx.scope, {self.parent_kwarg: parent_id}), own

    def _object(self, ctx: Context, key: str) -> tuple[Any, Any]:
        parent, _ = self._parent(ctx, key)
        return parent, self.collection.get_or_404(ctx.scope, parent, ctx.id_of(self.name, key))

    def create(self, ctx: Context, key: str, state: State) -> None:
        parent, _ = self._parent(ctx, key)
        data = validated_data(
            self.collection.create_serializer,
            self.wire(ctx, state),
            scope=ctx.scope,
            parent=parent,
        )
        self.collection.create(ctx.scope, parent, data)
        ctx.written(self.name)

    def change(self, ctx: Context, key: str, changes: State) -> None:
        parent, obj = self._object(ctx, key)
        data = {"id": str(obj.public_id), **self.wire(ctx, changes)}
        fixed = sorted(name for name in data if name != "id" and name not in self.changeable)
        if fixed:
            raise ValidationError(
                f"{', '.join(fixed)} cannot change once the {self.label} exists: remove it and "
                "create it again"
            )
        validated = validated_data(
            self.collection.update_serializer, data, scope=ctx.scope, parent=parent, instance=obj
        )
        self.collection.update(ctx.scope, parent, obj, validated)
        ctx.written(self.name)

    def remove(self, ctx: Context, key: str) -> str:
        if self.archived is not None:
            self.change(ctx, key, self.archived)
            return "archived"
        self.delete(ctx, key)
        return "deleted"

    def delete(self, ctx: Context, key: str) -> None:
        parent, obj = self._object(ctx, key)
        self.collection.delete_asked(ctx.scope, parent, obj, DeleteAsked())
        ctx.written(self.name)


def plain(state: State) -> State:
    """A state as JSON has it (numbers, strings, lists, objects), as the API writes it."""
    loaded: State = orjson.loads(json_dumps(state))
    return loaded


def _message(detail: Any) -> str:
    if isinstance(detail, dict):
        return "; ".join(f"{name}: {_message(value)}" for name, value in detail.items())
    if isinstance(detail, list):
        return "; ".join(_message(item) for item in detail)
    return str(detail)


def model_of(kind_name: str) -> type[Any] | None:
    found = _KINDS.get(kind_name)
    return found.model if isinstance(found, CollectionKind) else None


def state_of(tenant: Any, kind_name: str, pk: Any) -> tuple[str, State] | None:
    """(key, state) of one object of the kind, as `export` has it, or None when it is gone."""
    found = _KINDS[kind_name]
    assert isinstance(found, CollectionKind)  # noqa: S101 - model_of said so
    return found.one(Context(tenant), pk)


def export(tenant: Any, of: Iterable[str] | None = None) -> dict[tuple[str, str], State]:
    """(kind, key) -> state of the tenant's objects of the given kinds (all: None)."""
    ctx = Context(tenant)
    wanted = None if of is None else set(of)
    states: dict[tuple[str, str], State] = {}
    for each in kinds():
        if wanted is None or each.name in wanted:
            for key, state in each.export(ctx).items():
                states[(each.name, key)] = state
    return states


@dataclasses.dataclass
class SingletonKind(Kind):
    """Settings a tenant always has exactly one of (the streak settings, the tenant's settings):
    never created or removed, only changed."""

    name: str
    label: str
    order: int
    read: Callable[[Context], State]
    write: Callable[[Context, State], None]  # the changed fields, as the admin API takes them
    shape: type[serializers.Serializer]  # what `read` returns, as the admin API documents it
    more: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # schemas of fields it adds
    key: str = "settings"
    portable: bool = True

    def export(self, ctx: Context) -> dict[str, State]:
        return {self.key: plain(self.read(ctx))}

    def create(self, ctx: Context, key: str, state: State) -> None:
        self.change(ctx, key, state)

    def change(self, ctx: Context, key: str, changes: State) -> None:
        self.write(ctx, dict(changes))

    def remove(self, ctx: Context, key: str) -> str:
        return "kept"

    def delete(self, ctx: Context, key: str) -> None:
        raise ValidationError(f"The {self.label} cannot be deleted, only changed")


def validated_data(serializer_class: Any, data: Mapping[str, Any], **context: Any) -> Any:
    """What the admin API's input serializer makes of `data`, or its refusal as one message."""
    serializer = serializer_class(data=dict(data), context=context)
    try:
        serializer.is_valid(raise_exception=True)
    except serializers.ValidationError as exc:
        raise ValidationError(_message(exc.detail)) from None
    return serializer.validated_data
