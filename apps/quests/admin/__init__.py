"""Dashboard pages for quests: the quests with their figures and each quest's page with its
goals as rows and its last periods in numbers, and the pools (pages.py, forms.py). Progress
rows have no list of their own: the pipeline writes them; the end-user page shows a user's
(apps/pipeline/dashboard_user/quests.py)."""

from apps.quests.admin import pages

__all__ = ["pages"]
