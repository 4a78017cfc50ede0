from apps.core.bulk import collection_urls
from apps.leaderboards import views

urlpatterns = collection_urls("leaderboards", views.LeaderboardCollection(), "leaderboards")
