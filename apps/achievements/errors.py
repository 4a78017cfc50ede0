from apps.core.errors import NotFoundError, ValidationError


class AchievementNotFoundError(NotFoundError):
    def __init__(self, key: str) -> None:
        super().__init__(f'Achievement not found: "{key}"')


class AchievementInvalidError(ValidationError):
    pass
