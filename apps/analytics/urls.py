"""Application API routes of analytics: a user's year in review."""

urlpatterns: list = []
