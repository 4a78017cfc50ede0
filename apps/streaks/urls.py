from django.urls import path

from apps.streaks import views

urlpatterns = [
    path("users/<str:user_id>/streak", views.UserStreakApi.as_view(), name="user-streak"),
    path("streaks", views.StreakListApi.as_view(), name="streaks"),
]
