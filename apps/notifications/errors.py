from apps.core.errors import NotFoundError, ValidationError


class TemplateRenderError(ValidationError):
    """A template that does not parse, reaches for something it may not, or renders too much.
    Raised at save time (admin API issues, dashboard form) and kept as the error of a message
    that fails at send time."""


class EmailTemplateNotFoundError(NotFoundError):
    def __init__(self) -> None:
        super().__init__("Email template not found by ID")
