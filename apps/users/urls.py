from django.urls import path

from apps.users import views

urlpatterns = [
    # An identification that creates a user also pays its user_creation points: the pipeline
    # registers that with the service (USER_CREATED_HOOKS in apps/users/services.py).
    path("users", views.UserCreateApi.as_view(), name="user-create"),
    path("users/<str:user_id>", views.UserApi.as_view(), name="user"),
]
