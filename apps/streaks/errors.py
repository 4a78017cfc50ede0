from apps.core.errors import PermissionDeniedError, ValidationError


class StreakSettingsInvalidError(ValidationError):
    pass


class StreakCustomizationDisabledError(PermissionDeniedError):
    def __init__(self) -> None:
        super().__init__(
            "Streak customization is disabled for this tenant: only streak.enabled may be set"
        )


class StreakPauseInvalidError(ValidationError):
    pass
