"""Admin API routes of analytics: the dashboard's series as JSON (a gamify extension)."""


urlpatterns: list = []
