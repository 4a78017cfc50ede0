from django.urls import path

from apps.pipeline import views

urlpatterns = [
    path("metrics/<str:key>/event", views.MetricEventCreateApi.as_view(), name="metric-event"),
]
