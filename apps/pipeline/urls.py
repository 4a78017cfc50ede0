from django.urls import path

from apps.pipeline import views

urlpatterns = [
    # Completing an achievement also awards its points, and so does identifying a new user
    # (user_creation): the pipeline orders the steps.
    path(
        "achievements/<str:key>/complete",
        views.AchievementCompleteApi.as_view(),
        name="achievement-complete",
    ),
    path("metrics/<str:key>/event", views.MetricEventCreateApi.as_view(), name="metric-event"),
    path("users", views.UserCreateApi.as_view(), name="user-create"),
    path("users/<str:user_id>", views.UserApi.as_view(), name="user"),
]
