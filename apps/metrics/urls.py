from django.urls import path

from apps.metrics import views

urlpatterns = [
    path("users/<str:user_id>/metrics", views.UserMetricListApi.as_view(), name="user-metrics"),
    path(
        "users/<str:user_id>/metrics/<str:key>", views.UserMetricApi.as_view(), name="user-metric"
    ),
    path(
        "users/<str:user_id>/metrics/<str:key>/event-summary",
        views.UserMetricEventSummaryApi.as_view(),
        name="user-metric-event-summary",
    ),
]
