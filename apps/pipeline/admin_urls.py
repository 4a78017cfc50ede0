from django.urls import path

from apps.pipeline import views

urlpatterns = [
    path("metrics/events", views.BatchEventsApi.as_view(), name="admin-metric-events"),
]
