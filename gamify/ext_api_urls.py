"""Application API routes of gamify's extensions (features beyond the Trophy API), mounted
under /ext/v1/ and documented apart, at /ext/v1/openapi (docs/architecture.md §4)."""

from django.urls import include, path

urlpatterns = [
    path("", include("apps.leagues.urls")),
    path("", include("apps.quests.urls")),
    path("", include("apps.streams.urls")),
    path("", include("apps.social.urls")),
]
