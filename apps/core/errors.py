"""Errors raised by services and selectors. The API layer maps each to one HTTP status.

Services raise these instead of HTTP exceptions so the same code serves the API, the dashboard
and management commands. A refusal about input names its fields in Python's words, as the
service's keyword arguments do, and lets each edge spell them (Saleor's
`ValidationError({"field": ValidationError(msg, code=...)})`): the message is a template in
which `{max_points}` stands for the field, `fields` lists the fields it is about and `code`
says which rule failed. The admin API writes the field as its input serializer names it
("maxPoints", `apps/core/api/naming.py`), the dashboard puts the message next to the input of
that name and writes its label ("“Maximum points”"), and `message` keeps Python's name (logs,
management commands)."""

from collections.abc import Callable, Sequence


class ApplicationError(Exception):
    status_code = 422

    def __init__(
        self, message: str, *, fields: str | Sequence[str] = (), code: str = "invalid"
    ) -> None:
        self.template = message
        self.fields: tuple[str, ...] = (fields,) if isinstance(fields, str) else tuple(fields)
        self.code = code
        self.message = self.worded(lambda field: field)
        super().__init__(self.message)

    def worded(self, name: Callable[[str], str]) -> str:
        """The message with each of its fields written as `name` spells it. Only the
        placeholders of `fields` are replaced, so other braces (a template's syntax error, a
        JSON example) are left as they are."""
        text = self.template
        for field in self.fields:
            text = text.replace("{" + field + "}", name(field))
        return text


class BadRequestError(ApplicationError):
    """The request cannot be understood (malformed body, wrong shape)."""

    status_code = 400


class AuthenticationError(ApplicationError):
    status_code = 401


class PermissionDeniedError(ApplicationError):
    status_code = 403


class NotFoundError(ApplicationError):
    """Missing or belonging to another tenant: the two are indistinguishable by design."""

    status_code = 404


class ValidationError(ApplicationError):
    """Well-formed but breaks a rule (a field, a limit, a state). Never 409: SDKs retry 409.

    Codes in use: "required", "invalid", "not_found", "out_of_range", "not_allowed_for_kind",
    "conflict" (two settings that contradict each other), "frozen" (cannot change once live)."""

    status_code = 422


class PayloadTooLargeError(ApplicationError):
    status_code = 413
