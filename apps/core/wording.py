"""The words of generated messages, so that one name or one thing reads as well as several:
"key only applies to api achievements" but "metricId and metricValue only apply to metric
achievements", "1 API key" but "2 API keys". Every message that names a list of things or a
count builds its words here rather than with a local ", ".join or an "(s)"."""

from collections.abc import Sequence


def counted(number: int, one: str, many: str | None = None) -> str:
    """'1 user', '2 users', '1,200 ranking entries' (`many` for a plural that is not one + s)."""
    return f"{number:,} {one if number == 1 else (many or one + 's')}"


def listed(names: Sequence[str], conjunction: str = "and") -> str:
    """'a', 'a and b', 'a, b and c' ('or' for alternatives)."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} {conjunction} {names[-1]}"


def agreeing(number: int, one: str, many: str) -> str:
    """The word that agrees with that many things: agreeing(2, "applies", "apply")."""
    return one if number == 1 else many
