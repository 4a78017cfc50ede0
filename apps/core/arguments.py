"""Keyword arguments typed with a TypedDict (`**changes: Unpack[...]`) are checked by mypy, not
when the code runs: a misspelt name, such as a wire name where the service takes Python's, would
be ignored without a word. `arguments_check` refuses it as Python refuses an unexpected keyword
argument."""

from collections.abc import Mapping
from typing import Any


def arguments_check(function: str, given: Mapping[str, Any], allowed: Any) -> None:
    """`allowed`: the TypedDict class that types the arguments."""
    unknown = sorted(set(given) - set(allowed.__annotations__))
    if unknown:
        raise TypeError(f"{function}() got unexpected keyword arguments: {', '.join(unknown)}")
