"""Application API routes of the streams, under /ext/v1/ (gamify/ext_api_urls.py)."""

from django.urls import path

from apps.streams import api, views

urlpatterns = [
    path(
        "users/<str:user_id>/stream",
        api.documented(views.user_stream, api.UserStreamDocs),
        name="ext-user-stream",
    ),
    path(
        "leaderboards/<str:key>/stream",
        api.documented(views.board_stream, api.BoardStreamDocs),
        name="ext-leaderboard-stream",
    ),
]
