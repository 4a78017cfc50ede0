from django.urls import path

from apps.pipeline import views

urlpatterns = [
    # Completing an achievement also awards its points: the pipeline orders the two.
    path(
        "achievements/<str:key>/complete",
        views.AchievementCompleteApi.as_view(),
        name="achievement-complete",
    ),
    path("metrics/<str:key>/event", views.MetricEventCreateApi.as_view(), name="metric-event"),
]
