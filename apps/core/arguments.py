"""Keyword arguments of services: `UNSET`, the default of a setting that an update changes only
when it is given (None can still mean "clear"), and the rule of settings that belong to one kind
of object only (a points trigger's type, an achievement's trigger).

Such an update names each setting as a keyword-only parameter (docs/style.md, "Writing services
and selectors"), so Python refuses a misspelt or unknown name (a wire name where the service
takes Python's) with a TypeError even when the call unpacks a dict, and mypy checks the names
and types of the calls it can see. The refusals of `kind_problem` name the settings in Python's
words; each interface spells them its own way (apps/core/errors.py)."""

import enum
from collections.abc import Mapping
from typing import Any, Final, Literal

from apps.core.errors import ValidationError
from apps.core.wording import agreeing, listed


class Unset(enum.Enum):
    """A value the caller did not supply: left as it is. (None is a value: it clears.) False,
    so `if fields.email:` reads "supplied and not empty"."""

    UNSET = "UNSET"

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET


def given(**arguments: Any) -> dict[str, Any]:
    """The settings a caller gave: those not left `UNSET`."""
    return {name: value for name, value in arguments.items() if value is not UNSET}


def _placeholders(fields: list[str]) -> str:
    """ "{team_id} and {key_id}": the fields as the message template names them."""
    return listed(["{" + field + "}" for field in fields])


def kind_problem(
    kind: str,
    values: Mapping[str, Any],
    fields_by_kind: Mapping[Any, tuple[str, ...]],
    required_by_kind: Mapping[Any, tuple[str, ...]],
    *,
    noun: str,
    new: bool,
    error: type[ValidationError] = ValidationError,
    unset: tuple[Any, ...] = (None,),
) -> ValidationError | None:
    """What is wrong with `values` for an object of `kind` (None: nothing), as an `error` to
    raise: a setting of another kind given (a value in `unset` counts as not given), or, for a
    new kind, one of its required settings missing."""
    for other, fields in fields_by_kind.items():
        if other != kind:
            given = [f for f in fields if values.get(f) not in unset]
            if given:
                applies = agreeing(len(given), "applies", "apply")
                return error(
                    f"{_placeholders(given)} only {applies} to {other} {noun}",
                    fields=given,
                    code="not_allowed_for_kind",
                )
    if new:
        missing = [f for f in required_by_kind[kind] if values.get(f) is None]
        if missing:
            return error(
                f"{kind} {noun} need {_placeholders(missing)}", fields=missing, code="required"
            )
    return None
