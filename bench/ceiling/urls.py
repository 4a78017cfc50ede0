from django.urls import path

from ceiling import views

urlpatterns = [
    path("event/<str:key>", views.event),
    path("leaderboard/<str:key>", views.top),
    path("users/<str:user_id>/points", views.points),
]
