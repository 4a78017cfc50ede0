from apps.core.errors import NotFoundError, ValidationError


class PointsSystemNotFoundError(NotFoundError):
    def __init__(self, key: str) -> None:
        super().__init__(f'Points system not found: "{key}"')


class PointsBlockedError(ValidationError):
    """A deduction of a blockIfOutOfPoints trigger would take the balance below zero: the
    whole event is refused and nothing is written."""

    def __init__(self, system_key: str) -> None:
        super().__init__(
            f'Not enough points in "{system_key}": this event would take the balance below zero'
        )


class PointsConfigInvalidError(ValidationError):
    pass
