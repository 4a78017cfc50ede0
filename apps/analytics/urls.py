"""Application API routes of analytics: a user's year in review."""

from django.urls import path

from apps.analytics import views

urlpatterns = [
    path("users/<str:user_id>/wrapped", views.UserWrappedApi.as_view(), name="user-wrapped"),
]
