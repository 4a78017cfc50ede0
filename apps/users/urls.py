from django.urls import path

from apps.users import views

urlpatterns = [
    path("users", views.UserCreateApi.as_view(), name="user-create"),
    path("users/<str:user_id>", views.UserApi.as_view(), name="user"),
]
