"""Keyword arguments of services. Those typed with a TypedDict (`**changes: Unpack[...]`) are
checked by mypy, not when the code runs: a misspelt name, such as a wire name where the service
takes Python's, would be ignored without a word. `arguments_check` refuses it as Python refuses
an unexpected keyword argument. `wire_list` names arguments in a message as the admin API names
them, since its callers read the messages; `kind_problem` is the rule of settings that belong
to one kind of object only (a points trigger's type, an achievement's trigger)."""

from collections.abc import Iterable, Mapping
from typing import Any

from apps.core.wording import agreeing, listed


def arguments_check(function: str, given: Mapping[str, Any], allowed: Any) -> None:
    """`allowed`: the TypedDict class that types the arguments."""
    unknown = sorted(set(given) - set(allowed.__annotations__))
    if unknown:
        raise TypeError(f"{function}() got unexpected keyword arguments: {', '.join(unknown)}")


def wire_list(names: Iterable[str], wire_names: Mapping[str, str]) -> str:
    """ "metricId and metricThreshold" for ["metric_id", "metric_threshold"]."""
    return listed([wire_names[name] for name in names])


def kind_problem(
    kind: str,
    values: Mapping[str, Any],
    fields_by_kind: Mapping[Any, tuple[str, ...]],
    required_by_kind: Mapping[Any, tuple[str, ...]],
    wire_names: Mapping[str, str],
    *,
    noun: str,
    new: bool,
    unset: tuple[Any, ...] = (None,),
) -> str | None:
    """What is wrong with `values` for an object of `kind` (None: nothing): a setting of
    another kind given (a value in `unset` counts as not given), or, for a new kind, one of its
    required settings missing."""
    for other, fields in fields_by_kind.items():
        if other != kind:
            given = [f for f in fields if values.get(f) not in unset]
            if given:
                applies = agreeing(len(given), "applies", "apply")
                return f"{wire_list(given, wire_names)} only {applies} to {other} {noun}"
    if new:
        missing = [f for f in required_by_kind[kind] if values.get(f) is None]
        if missing:
            return f"{kind} {noun} need {wire_list(missing, wire_names)}"
    return None
