"""Errors raised by services and selectors. The API layer maps each to one HTTP status.

Services raise these instead of HTTP exceptions so the same code serves the API, the dashboard
and management commands.
"""


class ApplicationError(Exception):
    status_code = 422

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


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
    """Well-formed but breaks a rule (a field, a limit, a state). Never 409: SDKs retry 409."""

    status_code = 422


class PayloadTooLargeError(ApplicationError):
    status_code = 413
