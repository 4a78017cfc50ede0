from django.urls import path

from apps.achievements import views

urlpatterns = [
    path("achievements", views.AchievementListApi.as_view(), name="achievements"),
    # POST achievements/<key>/complete is served by apps.pipeline: it also awards points.
    path(
        "users/<str:user_id>/achievements",
        views.UserAchievementsApi.as_view(),
        name="user-achievements",
    ),
    # A user's metrics with the achievements of each metric.
    path("users/<str:user_id>/metrics", views.UserMetricListApi.as_view(), name="user-metrics"),
    path(
        "users/<str:user_id>/metrics/<str:key>", views.UserMetricApi.as_view(), name="user-metric"
    ),
]
