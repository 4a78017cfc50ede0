from django.urls import path

from apps.metrics import views

# A user's metrics themselves are served by apps.achievements (they list achievements).
urlpatterns = [
    path(
        "users/<str:user_id>/metrics/<str:key>/event-summary",
        views.UserMetricEventSummaryApi.as_view(),
        name="user-metric-event-summary",
    ),
]
