from apps.core.errors import ValidationError


class FriendsInvalidError(ValidationError):
    """A friends list change that breaks a rule: the user themself, unknown users, too many."""
