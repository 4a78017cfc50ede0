"""Admin API routes of friends, under /admin/ext/v1/ (gamify/ext_admin_api_urls.py)."""

from django.urls import path

from apps.social import views

urlpatterns = [
    path(
        "users/<str:user_id>/friends",
        views.AdminUserFriendsApi.as_view(),
        name="admin-ext-user-friends",
    ),
    path("friends/settings", views.FriendSettingsApi.as_view(), name="admin-ext-friend-settings"),
]
