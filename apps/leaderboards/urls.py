from django.urls import path

from apps.leaderboards import views

urlpatterns = [
    path("leaderboards", views.LeaderboardListApi.as_view(), name="leaderboards"),
    path("leaderboards/<str:key>", views.LeaderboardApi.as_view(), name="leaderboard"),
    path(
        "users/<str:user_id>/leaderboards/<str:key>",
        views.UserLeaderboardApi.as_view(),
        name="user-leaderboard",
    ),
]
