"""Admin API routes of leagues, under /admin/ext/v1/ (gamify/ext_admin_api_urls.py)."""

from apps.core.bulk import collection_urls
from apps.leagues import views

urlpatterns = collection_urls("leagues", views.LeagueCollection(), "leagues")
