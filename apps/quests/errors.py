from apps.core.errors import NotFoundError


class QuestNotFoundError(NotFoundError):
    """An unknown quest key, or an archived quest, or another tenant's."""
