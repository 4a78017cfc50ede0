"""The user routes (POST users, users/<id>) are served by apps.pipeline, whose subclasses of
these views award user_creation points when an identify creates the user."""

urlpatterns: list = []
