"""Application API routes of leagues, under /ext/v1/ (gamify/ext_api_urls.py)."""

from django.urls import path

from apps.leagues import views

urlpatterns = [
    path("leagues", views.LeagueListApi.as_view(), name="ext-leagues"),
    path(
        "leagues/<str:key>/cohorts/<str:cohort_id>",
        views.LeagueCohortApi.as_view(),
        name="ext-league-cohort",
    ),
    path(
        "users/<str:user_id>/leagues/<str:key>",
        views.UserLeagueApi.as_view(),
        name="ext-user-league",
    ),
    path(
        "users/<str:user_id>/leagues/<str:key>/neighbours",
        views.UserLeagueNeighboursApi.as_view(),
        name="ext-user-league-neighbours",
    ),
    path(
        "users/<str:user_id>/leagues/<str:key>/history",
        views.UserLeagueHistoryApi.as_view(),
        name="ext-user-league-history",
    ),
]
