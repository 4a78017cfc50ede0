from apps.core.errors import NotFoundError


class LeagueNotFoundError(NotFoundError):
    """An unknown league key, or an archived league, or another tenant's."""


class CohortNotFoundError(NotFoundError):
    """An unknown cohort id, or one of another league."""
