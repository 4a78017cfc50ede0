"""Dashboard pages of analytics, included by the dashboard site under /dashboard/analytics/."""

urlpatterns: list = []
