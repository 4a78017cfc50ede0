"""One declaration per configurable resource (docs/style.md, "Declaring a resource").

A resource's settings are a frozen, keyword-only dataclass in its app's `domain.py`
(`LeaderboardSettings`), one field per setting, each made by one of the functions below, which
states once what every interface needs to know about it: its kind, its label and help for
people, whether a new object needs it, whether None (the API's null) clears it, and its bounds
and choices. Every field defaults to `UNSET`: the same class is what a create is given (the
settings a new object starts with) and what an update is given (the settings that change).

The configuration services take the object (`leaderboard_create(tenant, settings)`), so
Python refuses a misspelt or wire-spelt name where the object is built (a TypeError of the
dataclass) and mypy checks every construction it can see. From the declaration:

- the dashboard's forms derive their inputs (`apps/accounts/admin/declared.py`);
- the admin API's input serializers and the response shapes are checked against it by one test
  per resource (`tests/core/test_declarations.py`, with `apps/core/api/declared.py`): the wire
  names, requiredness, nullability, bounds and choices must agree;
- `wire` is the API's name where it is not the camelCase of the Python name.

This module is pure: no ORM, no forms, no serializers.
"""

import dataclasses
import enum
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, Protocol, TypeVar

from apps.core.api.fields import camel_case
from apps.core.arguments import UNSET
from apps.core.errors import ValidationError
from apps.core.wording import listed

Bound = int | Callable[[], int] | None


class Kind(enum.StrEnum):
    """What a setting holds, in the terms both interfaces translate from."""

    TEXT = "text"  # a string (`multiline`: free text with line breaks)
    KEY = "key"  # a configuration key (apps/core/api/fields.py KEY_PATTERN), at most 100
    INTEGER = "integer"
    DECIMAL = "decimal"
    FLAG = "flag"  # a bool
    CHOICE = "choice"  # one value of `choices`
    CHOICES = "choices"  # a list of values of `choices`
    DATE = "date"
    TIME = "time"  # a time of day, HH:mm
    URL = "url"
    EMAIL = "email"
    REFERENCE = "reference"  # the public id of another object of the tenant
    REFERENCES = "references"  # a list of public ids
    STRUCTURE = "structure"  # lists or objects of their own shape (a form of its own)


@dataclasses.dataclass(frozen=True)
class Setting:
    """One setting as every interface sees it."""

    kind: Kind
    label: str
    help: str = ""
    required: bool = False  # a new object needs it
    nullable: bool = False  # None is a value: it clears (the API's null)
    fixed: bool = False  # set for good when the object is made: an update does not take it
    max_length: int | None = None  # characters of a text, items of a list
    min_value: Bound = None  # a callable is read when checked (an operator's setting)
    max_value: Bound = None
    choices: type[enum.Enum] | None = None
    multiline: bool = False
    wire: str = ""  # the API's name, when not the camelCase of `name`
    name: str = ""  # the Python name; filled in by `settings_of`

    @property
    def wire_name(self) -> str:
        return self.wire or camel_case(self.name)

    def bounds(self) -> tuple[int | None, int | None]:
        """(min, max) as they are now."""
        return _resolved(self.min_value), _resolved(self.max_value)

    def choice_values(self) -> list[str]:
        return [member.value for member in self.choices] if self.choices else []


def _resolved(bound: Bound) -> int | None:
    return bound() if callable(bound) else bound


def _setting(kind: Kind, label: str, **rest: Any) -> Any:
    """A dataclass field of a declaration: UNSET unless given."""
    return dataclasses.field(default=UNSET, metadata={"setting": Setting(kind, label, **rest)})


def text(label: str, *, max_length: int, **rest: Any) -> Any:
    return _setting(Kind.TEXT, label, max_length=max_length, **rest)


def key(label: str = "Key", **rest: Any) -> Any:
    return _setting(Kind.KEY, label, max_length=100, **rest)


def integer(label: str, *, min_value: Bound = None, max_value: Bound = None, **rest: Any) -> Any:
    return _setting(Kind.INTEGER, label, min_value=min_value, max_value=max_value, **rest)


def decimal(label: str, *, min_value: Bound = None, max_value: Bound = None, **rest: Any) -> Any:
    return _setting(Kind.DECIMAL, label, min_value=min_value, max_value=max_value, **rest)


def flag(label: str, **rest: Any) -> Any:
    return _setting(Kind.FLAG, label, **rest)


def choice(label: str, choices: type[enum.Enum], **rest: Any) -> Any:
    return _setting(Kind.CHOICE, label, choices=choices, **rest)


def choices(label: str, choices: type[enum.Enum], **rest: Any) -> Any:
    return _setting(Kind.CHOICES, label, choices=choices, **rest)


def date(label: str, **rest: Any) -> Any:
    return _setting(Kind.DATE, label, **rest)


def time(label: str, **rest: Any) -> Any:
    return _setting(Kind.TIME, label, **rest)


def url(label: str, *, max_length: int = 2000, **rest: Any) -> Any:
    return _setting(Kind.URL, label, max_length=max_length, **rest)


def email(label: str, *, max_length: int = 254, **rest: Any) -> Any:
    return _setting(Kind.EMAIL, label, max_length=max_length, **rest)


def reference(label: str, **rest: Any) -> Any:
    return _setting(Kind.REFERENCE, label, **rest)


def references(label: str, **rest: Any) -> Any:
    return _setting(Kind.REFERENCES, label, **rest)


def structure(label: str, **rest: Any) -> Any:
    return _setting(Kind.STRUCTURE, label, **rest)


class Declaration(Protocol):
    """A resource's settings: a dataclass made of the fields above."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]


D = TypeVar("D", bound=Declaration)


def settings_of(declaration: type[Declaration] | Declaration) -> dict[str, Setting]:
    """Python name -> its Setting, in the declaration's order."""
    return {
        field.name: dataclasses.replace(field.metadata["setting"], name=field.name)
        for field in dataclasses.fields(declaration)
        if "setting" in field.metadata
    }


def given_values(settings: Declaration) -> dict[str, Any]:
    """The settings given (those not left UNSET), by Python name, in the declaration's order."""
    return dict(_given(settings))


def _given(settings: Declaration) -> Iterator[tuple[str, Any]]:
    for name in settings_of(settings):
        value = getattr(settings, name)
        if value is not UNSET:
            yield name, value


def without(settings: D, names: Sequence[str]) -> D:
    """The same settings with `names` left UNSET (not changed)."""
    return dataclasses.replace(settings, **dict.fromkeys(names, UNSET))


def required_check(settings: Declaration, error: type[ValidationError] = ValidationError) -> None:
    """What a new object needs: every required setting given, and not None."""
    missing = [
        name
        for name, setting in settings_of(settings).items()
        if setting.required and getattr(settings, name) in (UNSET, None)
    ]
    if missing:
        placeholders = listed(["{" + name + "}" for name in missing])
        verb = "is" if len(missing) == 1 else "are"
        raise error(f"{placeholders} {verb} required", fields=missing, code="required")
