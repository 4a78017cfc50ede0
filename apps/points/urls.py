from django.urls import path

from apps.points import views

urlpatterns = [
    path("points/<str:key>", views.PointsSystemApi.as_view(), name="points-system"),
    path("points/<str:key>/boosts", views.PointsBoostsApi.as_view(), name="points-boosts"),
    path("points/<str:key>/levels", views.PointsLevelsApi.as_view(), name="points-levels"),
    path(
        "points/<str:key>/level-summary",
        views.PointsLevelSummaryApi.as_view(),
        name="points-level-summary",
    ),
    path("points/<str:key>/summary", views.PointsSummaryApi.as_view(), name="points-summary"),
    path("users/<str:user_id>/points/<str:key>", views.UserPointsApi.as_view(), name="user-points"),
    path(
        "users/<str:user_id>/points/<str:key>/boosts",
        views.UserPointsBoostsApi.as_view(),
        name="user-points-boosts",
    ),
    path(
        "users/<str:user_id>/points/<str:key>/event-summary",
        views.UserPointsEventSummaryApi.as_view(),
        name="user-points-event-summary",
    ),
]
