"""Plans between two configurations, and the configuration file's layout. Pure: states in,
steps out (apps/core/portable.py makes the states, services.py carries the steps out).

A plan makes a tenant's configuration (`current`) into another (`wanted`): for each object,
matched by its kind and key, a step that creates it, changes the fields that differ (field by
field), or removes it. The same plan is the diff between two environments or two tenants, the
changes a promote applies, and what `config apply` prints.
"""

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

State = dict[str, Any]
States = Mapping[tuple[str, str], State]

CREATE, CHANGE, REMOVE = "create", "change", "remove"


@dataclasses.dataclass(frozen=True)
class Step:
    action: str  # create, change or remove
    kind: str
    key: str
    # change: name -> (current, wanted) of each field that differs; create: the fields given
    fields: Mapping[str, tuple[Any, Any]]
    wanted: State | None  # the state asked for (None: remove)

    @property
    def ref(self) -> str:
        """How a request names the step: "metric:words"."""
        return f"{self.kind}:{self.key}"

    def changes(self) -> State:
        return {name: wanted for name, (_, wanted) in self.fields.items()}


def plan(
    current: States,
    wanted: States,
    order: Mapping[str, int],
    *,
    managed: Iterable[str] | None = None,
    partial: bool = False,
) -> list[Step]:
    """The steps that make `current` into `wanted`, over the kinds of `order` (those `managed`
    only: a configuration file manages the kinds it has a section for). `partial`: a wanted
    state's missing fields are kept as they are (a hand-written file), not compared.

    Creates and changes come in the kinds' order (what others name first); removals after them
    in the reverse order (what names others first), and not for an object whose parent (the
    points system of a level) is removed with it."""
    kinds = set(order) if managed is None else set(managed) & set(order)
    steps: list[Step] = []
    for kind, key in sorted(
        (ref for ref in {*current, *wanted} if ref[0] in kinds),
        key=lambda ref: (order[ref[0]], ref[1]),
    ):
        now, then = current.get((kind, key)), wanted.get((kind, key))
        if then is None:
            continue
        if now is None:
            steps.append(Step(CREATE, kind, key, {n: (None, v) for n, v in then.items()}, then))
            continue
        names = then.keys() if partial else then.keys() | now.keys()
        fields = {
            name: (now.get(name), then.get(name))
            for name in sorted(names)
            if now.get(name) != then.get(name)
        }
        if fields:
            steps.append(Step(CHANGE, kind, key, fields, then))
    removed = {(kind, key) for kind, key in current if kind in kinds and (kind, key) not in wanted}
    for kind, key in sorted(removed, key=lambda ref: (-order[ref[0]], ref[1])):
        if kind in CHILDREN and (CHILD_PARENT, key.partition("/")[0]) in removed:
            continue
        steps.append(Step(REMOVE, kind, key, {}, None))
    return steps


def dependencies_first(steps: list[Step], self_refs: Mapping[str, Iterable[str]]) -> list[Step]:
    """The steps with each create that names other objects of its kind being created (an
    achievement's prerequisites: `self_refs` says which fields) after them; the rest stay in
    their order. A cycle keeps its order (the services then say what is missing)."""
    creates = {
        (step.kind, step.key): step for step in steps if step.action == CREATE and step.wanted
    }

    def needs(step: Step) -> set[tuple[str, str]]:
        named: set[tuple[str, str]] = set()
        for field in self_refs.get(step.kind, ()):
            value = (step.wanted or {}).get(field) or []
            named |= {(step.kind, key) for key in value if (step.kind, key) in creates}
        return named - {(step.kind, step.key)}

    done: set[tuple[str, str]] = set()
    ordered: list[Step] = []
    waiting = list(steps)
    while waiting:
        ready = [step for step in waiting if step.action != CREATE or needs(step) <= done]
        if not ready:  # a cycle
            ready = waiting[:1]
        for step in ready:
            ordered.append(step)
            done.add((step.kind, step.key))
        waiting = [step for step in waiting if step not in ready]
    return ordered


# --- the configuration file -------------------------------------------------------------------

VERSION = 1

# kind -> the file's section. Points levels, boosts and triggers are written inside their
# system, under "levels", "boosts" and "triggers".
SECTIONS = {
    "settings": "settings",
    "attribute": "attributes",
    "metric": "metrics",
    "streak_settings": "streaks",
    "friend_settings": "friends",
    "achievement": "achievements",
    "points_system": "pointsSystems",
    "leaderboard": "leaderboards",
    "league": "leagues",
    "quest": "quests",
    "quest_pool": "questPools",
    "anomaly_rule": "anomalyRules",
    "email_template": "emailTemplates",
    "push_template": "pushTemplates",
}
CHILDREN = {"points_level": "levels", "points_boost": "boosts", "points_trigger": "triggers"}
CHILD_PARENT = "points_system"
SINGLETONS = {"settings", "streak_settings", "friend_settings"}


def document(states: States, about: Mapping[str, Any]) -> dict[str, Any]:
    """The file of a tenant's configuration: keys sorted, so that the same configuration is
    the same text."""
    doc: dict[str, Any] = {"gamify": VERSION, **about}
    for (kind, key), state in sorted(states.items()):
        if kind in SINGLETONS:
            doc[SECTIONS[kind]] = state
        elif kind in SECTIONS:
            doc.setdefault(SECTIONS[kind], {})[key] = state
    systems = doc.get(SECTIONS[CHILD_PARENT], {})
    for (kind, key), state in sorted(states.items()):
        if kind in CHILDREN:
            parent, _, own = key.partition("/")
            if parent in systems:
                systems[parent].setdefault(CHILDREN[kind], {})[own] = state
    for system in systems.values():
        for section in CHILDREN.values():
            system.setdefault(section, {})
    return doc


def states_of(doc: Mapping[str, Any]) -> tuple[dict[tuple[str, str], State], set[str]]:
    """The states a file asks for, and the kinds it manages (those it has a section for; a
    points system section manages its levels, boosts and triggers too)."""
    states: dict[tuple[str, str], State] = {}
    managed: set[str] = set()
    for kind, section in SECTIONS.items():
        if section not in doc:
            continue
        managed.add(kind)
        if kind in SINGLETONS:
            states[(kind, "settings")] = dict(doc[section])
            continue
        for key, state in (doc[section] or {}).items():
            own = dict(state)
            if kind == CHILD_PARENT:
                managed.update(CHILDREN)
                for child, name in CHILDREN.items():
                    for child_key, child_state in (own.pop(name, None) or {}).items():
                        states[(child, f"{key}/{child_key}")] = dict(child_state)
            states[(kind, str(key))] = own
    return states, managed


# A state's field that names another object by its key, at any depth: the kind it names
# (apps/core/portable.py ID_FIELDS, as states spell them). The streak settings' metrics name
# theirs by "key".
KEY_FIELDS = {
    "attribute": "attribute",
    "metric": "metric",
    "pointsSystem": "points_system",
    "achievement": "achievement",
}


def _names(value: Any, kind: str, key: str, inside: str) -> bool:
    if isinstance(value, list):
        return any(_names(item, kind, key, inside) for item in value)
    if isinstance(value, dict):
        for name, item in value.items():
            if KEY_FIELDS.get(name) == kind and item == key:
                return True
            streak_metrics = inside == "streak_settings" and kind == "metric" and name == "metrics"
            if streak_metrics and any(isinstance(m, dict) and m.get("key") == key for m in item):
                return True
            if _names(item, kind, key, inside):
                return True
    return False


def dependents(
    states: States, kind: str, key: str, list_refs: Mapping[str, Mapping[str, str]]
) -> list[tuple[str, str]]:
    """The objects whose states name the object (kind, key), and those inside it (the levels
    of a points system)."""
    found = []
    for (other, other_key), state in sorted(states.items()):
        if (other, other_key) == (kind, key):
            continue
        inside = kind == CHILD_PARENT and other in CHILDREN and other_key.startswith(key + "/")
        listed = any(
            target == kind and key in (state.get(field) or [])
            for field, target in list_refs.get(other, {}).items()
        )
        if inside or listed or _names(state, kind, key, other):
            found.append((other, other_key))
    return found
