from django.urls import path

from apps.accounts import views
from apps.core.bulk import collection_urls

urlpatterns = [
    *collection_urls("tenants", views.TenantCollection(), "tenants"),
    *collection_urls(
        "application-api-keys", views.ApplicationKeyCollection(), "application-keys", readable=False
    ),
    path("environments", views.EnvironmentListApi.as_view(), name="admin-environments"),
    path("settings", views.SettingsApi.as_view(), name="admin-settings"),
]
