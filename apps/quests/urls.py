"""Application API routes of quests, under /ext/v1/ (gamify/ext_api_urls.py)."""

from django.urls import path

from apps.quests import views

urlpatterns = [
    path("users/<str:user_id>/quests", views.UserQuestsApi.as_view(), name="ext-user-quests"),
    path(
        "users/<str:user_id>/quests/history",
        views.UserQuestHistoryApi.as_view(),
        name="ext-user-quest-history",
    ),
]
