from django.urls import path

from apps.notifications import views

urlpatterns = [
    path(
        "users/<str:user_id>/preferences",
        views.UserPreferencesApi.as_view(),
        name="user-preferences",
    ),
]
