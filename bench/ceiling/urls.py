from django.urls import path

from ceiling import same_work, views

urlpatterns = [
    path("event/<str:key>", views.event),
    path("event-full/<str:key>", same_work.event),
    path("leaderboard/<str:key>", views.top),
    path("users/<str:user_id>/points", views.points),
]
