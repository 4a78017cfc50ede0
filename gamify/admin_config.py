"""The dashboard is Django's admin with gamify's own site (gamify/dashboard.py): a home page
for the selected tenant, the tenant switcher and the analytics pages."""

from django.contrib.admin.apps import AdminConfig


class DashboardAdminConfig(AdminConfig):
    default_site = "gamify.dashboard.DashboardSite"
