"""Admin API routes of quests, under /admin/ext/v1/ (gamify/ext_admin_api_urls.py)."""

from apps.core.bulk import collection_urls
from apps.quests import views

urlpatterns = [
    *collection_urls("quests", views.QuestCollection(), "quests"),
    *collection_urls("quest-pools", views.QuestPoolCollection(), "quest-pools"),
]
