from apps.core.bulk import collection_urls
from apps.points import views

urlpatterns = [
    *collection_urls("points/<str:system_id>/levels", views.LevelCollection(), "points-levels"),
    *collection_urls("points/<str:system_id>/boosts", views.BoostCollection(), "points-boosts"),
    *collection_urls(
        "points/<str:system_id>/triggers", views.TriggerCollection(), "points-triggers"
    ),
    *collection_urls("points", views.SystemCollection(), "points"),
]
