from apps.achievements import views
from apps.core.bulk import collection_urls

urlpatterns = collection_urls("achievements", views.AchievementCollection(), "achievements")
