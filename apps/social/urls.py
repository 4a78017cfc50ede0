"""Application API routes of neighbours and friends, under /ext/v1/ (gamify/ext_api_urls.py)."""

from django.urls import path

from apps.social import views

urlpatterns = [
    path(
        "users/<str:user_id>/leaderboards/<str:key>/neighbours",
        views.UserLeaderboardNeighboursApi.as_view(),
        name="ext-user-leaderboard-neighbours",
    ),
    path(
        "users/<str:user_id>/leaderboards/<str:key>/friends",
        views.UserLeaderboardFriendsApi.as_view(),
        name="ext-user-leaderboard-friends",
    ),
    path(
        "users/<str:user_id>/leagues/<str:key>/friends",
        views.UserLeagueFriendsApi.as_view(),
        name="ext-user-league-friends",
    ),
    path("users/<str:user_id>/friends", views.UserFriendsApi.as_view(), name="ext-user-friends"),
]
