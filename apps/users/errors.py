from apps.core.errors import NotFoundError, ValidationError


class UserNotFoundError(NotFoundError):
    def __init__(self, external_id: str) -> None:
        super().__init__(f'User not found: "{external_id}"')


class AttributeKeysInvalidError(ValidationError):
    def __init__(self, keys: list[str], kind: str) -> None:
        super().__init__(
            f"Invalid attribute keys: {', '.join(keys)}. Please ensure all attribute keys match "
            f"those of the {kind} attributes defined for this tenant."
        )
        self.keys = keys
