"""Guard rails of destructive configuration changes: what deleting (or archiving) an object takes
from users, in words, and what forbids it (issue 27, docs/architecture.md §10).

A lower app's delete cannot import the apps above it, whose configuration and user data depend on
the object: achievements, leaderboards, points triggers, the streak and leagues on a metric;
leaderboards and leagues on a points system; points triggers on an achievement. They register here,
each with a function of the object that returns their part of the consequences
(`consequences_of`, in the app's `guards.py`, imported by its AppConfig), and the lower app's
`<resource>_deletion_impact` selector adds its own and collects theirs into an `Impact`.

The service applies the impact before it writes (`Impact.check`), so that the admin API and the
dashboard refuse the same changes with the same words (docs/style.md principle 1):

- a blocker refuses the change with its reason (a streak nobody could extend, a league that keeps
  its metric), unless it can be resolved in the same step and the caller asked for that
  (`resolve`: the leaderboard that ranks by an archived points system is deactivated with it);
- a change that takes data from users needs the object's key as confirmation (`confirm`), and its
  refusal says what would be lost.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from apps.core.errors import ValidationError
from apps.core.wording import listed


@dataclass(frozen=True)
class Consequence:
    """One thing a change does besides removing the object, in words."""

    # "60 users lose the achievement Week warrior"; for a blocker, why the change is refused.
    text: str
    # Users who lose something with it: a change with any needs the object's key.
    users: int = 0
    blocks: bool = False
    # A blocker the change may resolve in the same step when asked: what that does, in words
    # ("the leaderboard Weekly coins is deactivated"), and the write that does it.
    resolution: str = ""
    resolve: Callable[[], Any] | None = field(default=None, compare=False)


# The verb of a change: its infinitive and its gerund.
DELETE = ("delete", "Deleting")
ARCHIVE = ("archive", "Archiving")


@dataclass(frozen=True)
class Impact:
    """What one change of one object does: the consequences its own app and the apps above it
    tell. Its `key` confirms it (staff type it; `key_label` says what it is: an achievement
    without a key is confirmed by its name), and so does its public id (the admin API's
    `confirm` may name either)."""

    noun: str  # "metric", "points system"
    name: str
    key: str
    public_id: str
    consequences: tuple[Consequence, ...]
    verb: tuple[str, str] = DELETE
    key_label: str = "key"

    @property
    def losses(self) -> list[Consequence]:
        return [c for c in self.consequences if not c.blocks]

    @property
    def blockers(self) -> list[Consequence]:
        return [c for c in self.consequences if c.blocks]

    @property
    def user_data(self) -> bool:
        """Whether the change takes anything from users: then it needs the key."""
        return any(c.users for c in self.consequences)

    def stuck(self, *, resolve: bool) -> list[Consequence]:
        """The blockers that refuse the change (with `resolve`, those it cannot resolve)."""
        return [c for c in self.blockers if not (resolve and c.resolve is not None)]

    def check(self, *, confirm: str = "", resolve: bool = False) -> None:
        """Refuse the change (a ValidationError whose message says why), or run the resolutions
        asked for. Call it in the change's transaction, before the change itself."""
        verb, gerund = self.verb
        stuck = self.stuck(resolve=resolve)
        if stuck:
            reasons = listed([c.text for c in stuck])
            resolutions = [c.resolution for c in stuck if c.resolve is not None]
            then = ""
            if resolutions:
                then = (
                    f"; asked to deactivate its dependants in the same step, {listed(resolutions)}"
                )
            raise ValidationError(
                f"The {self.noun} {self.key} cannot be {verb}d: {reasons}{then}", code="in_use"
            )
        if self.user_data and confirm not in (self.key, self.public_id):
            raise ValidationError(
                f"{gerund} the {self.noun} {self.key} takes data from users: "
                f"{listed([c.text for c in self.losses if c.users])}; confirm with its "
                f"{self.key_label} {self.key} to {verb} it",
                code="unconfirmed",
            )
        for blocker in self.blockers:
            if blocker.resolve is not None:
                blocker.resolve()


Consequences = Callable[[Any], Iterable[Consequence]]
_REGISTERED: dict[str, list[Consequences]] = {}


def consequences_of(noun: str) -> Callable[[Consequences], Consequences]:
    """Register, for a change of an object of that noun ("metric"), a function of the object
    returning the consequences in the registering app."""

    def register(function: Consequences) -> Consequences:
        _REGISTERED.setdefault(noun, []).append(function)
        return function

    return register


def registered_consequences(noun: str, obj: Any) -> list[Consequence]:
    """What the apps above say a change of `obj` does to them."""
    return [c for function in _REGISTERED.get(noun, []) for c in function(obj)]
