from apps.core.errors import NotFoundError, ValidationError


class TemplateRenderError(ValidationError):
    """A template that does not parse, reaches for something it may not, or renders too much.
    Raised at save time (admin API issues, dashboard form) and kept as the error of a message
    that fails at send time."""


class EmailTemplateNotFoundError(NotFoundError):
    def __init__(self) -> None:
        super().__init__("Email template not found by ID")


class MessageNotWaitingError(ValidationError):
    """Staff may cancel or send now only a message that still waits for its send time (queued,
    or retrying after a temporary failure): one being sent, sent, failed or skipped is history."""

    def __init__(self, status: str) -> None:
        super().__init__(
            f"The message is {status}: only a queued or retrying message can be cancelled or "
            "sent now",
            code="not_waiting",
        )


class MessageNotFoundError(NotFoundError):
    def __init__(self) -> None:
        super().__init__("Message not found")
