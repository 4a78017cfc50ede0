from apps.core.errors import NotFoundError, ValidationError


class MetricNotFoundError(NotFoundError):
    def __init__(self, key: str) -> None:
        super().__init__(f'Metric not found: "{key}"')


class MetricValueInvalidError(ValidationError):
    pass


class SummaryRangeInvalidError(ValidationError):
    pass
