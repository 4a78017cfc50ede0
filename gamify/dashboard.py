"""The staff dashboard's site: home page, tenant switcher, navigation order, analytics pages.

Pages themselves live in each app's admin module; this module only assembles them. It sits in
the project package because it shows numbers from analytics, the top layer.
"""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, URLResolver, include, path, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST
from unfold.sites import UnfoldAdminSite

from apps.accounts.staff import select_tenant, selected_tenant, switchable_tenants, tenant_label
from apps.core.shown_time import shown_zone

# The order of sections in the navigation: what staff come for first.
APP_ORDER = [
    "users",
    "metrics",
    "streaks",
    "points",
    "achievements",
    "leaderboards",
    "leagues",
    "quests",
    "fairplay",
    "notifications",
    "webhooks",
    "pipeline",
    "accounts",
    "auth",
]
# Framework and pipeline internals: the login lockouts (django-axes), permission groups, the
# streak and points state the pipeline keeps. Superusers
# find them under "System", apart from the features staff work with (README, "The dashboard").
SYSTEM_MODELS = {
    "axes.accessattempt",
    "axes.accesslog",
    "axes.accessfailurelog",
    "auth.group",
    "streaks.streakstate",
    "points.pointstotal",
}
# Sections named for what staff find there rather than for the framework's app.
SECTION_NAMES = {"auth": "Staff", "axes": "Login records", "fairplay": "Fair play"}
# Material Symbols names of each section's icon in the sidebar.
ICONS = {
    "analytics": "monitoring",
    "users": "group",
    "metrics": "speed",
    "streaks": "local_fire_department",
    "points": "stars",
    "achievements": "military_tech",
    "leaderboards": "leaderboard",
    "leagues": "trophy",
    "quests": "task_alt",
    "fairplay": "flag",
    "notifications": "mail",
    "webhooks": "webhook",
    "accounts": "apartment",
    "configuration": "history",
    "auth": "badge",
    "system": "settings",
}
# Tables the pipeline keeps for itself; reachable from the pages that explain them (a user's
# streak calendar, a leaderboard's rankings), not worth a place in the navigation.
HIDDEN_MODELS = {
    "pipeline.queuedevent",
    "streaks.streakperiod",
    "leaderboards.leaderboardentry",
    "leaderboards.leaderboardsnapshot",
    # Edited inline on their points system's page.
    "points.pointslevel",
    "points.pointsboost",
    "points.pointstrigger",
}


class DashboardSite(UnfoldAdminSite):
    site_header = "gamify dashboard"
    site_title = "gamify"
    index_title = "Home"
    index_template = "admin/dashboard_home.html"

    def get_urls(self) -> list[URLResolver | URLPattern]:
        own: list[URLResolver | URLPattern] = [
            path("tenant/", self.admin_view(tenant_switch), name="tenant-switch"),
            path("analytics/", include("apps.analytics.dashboard_urls")),
            path("configuration/", include("apps.changes.dashboard_urls")),
        ]
        return own + super().get_urls()

    def admin_view(self, view: Callable, cacheable: bool = False) -> Callable:
        """Every dashboard page writes its moments in the selected tenant's reporting zone
        (apps/core/shown_time.py) unless it names another."""
        checked = super().admin_view(view, cacheable)

        @wraps(checked)
        def in_reporting_zone(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            tenant = selected_tenant(request) if request.user.is_authenticated else None
            token = shown_zone.set(tenant.reporting_tz if tenant is not None else None)
            try:
                response = checked(request, *args, **kwargs)
                # A template response renders after the view returns: render it in the zone.
                if isinstance(response, TemplateResponse) and not response.is_rendered:
                    response.render()
                return response
            finally:
                shown_zone.reset(token)

        return in_reporting_zone

    def each_context(self, request: HttpRequest) -> dict[str, Any]:
        context = super().each_context(request)
        if request.user.is_active and getattr(request.user, "is_staff", False):
            tenant = selected_tenant(request)
            context["dashboard_tenant"] = tenant
            context["dashboard_tenant_label"] = tenant_label(tenant) if tenant else ""
            context["dashboard_tenants"] = [
                (choice.pk, tenant_label(choice)) for choice in switchable_tenants(request.user)
            ]
        return context

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[dict]:
        """The features' sections in APP_ORDER, analytics first, and the internals in a last
        "System" section, for superusers only (each page keeps its own permissions). Read
        once a request: the page's context and the sidebar both show it."""
        if app_label is None and hasattr(request, "_dashboard_apps"):
            cached: list[dict] = request._dashboard_apps
            return cached
        apps = super().get_app_list(request, app_label)
        system: list[dict] = []
        for app in apps:
            app["name"] = SECTION_NAMES.get(app["app_label"], app["name"])
            models = []
            for model in app["models"]:
                name = f"{app['app_label']}.{model['object_name'].lower()}"
                if name in SYSTEM_MODELS:
                    system.append({**model, "name": f"{model['name']} ({app['name']})"})
                elif name not in HIDDEN_MODELS:
                    models.append(model)
            app["models"] = models
        position = {label: index for index, label in enumerate(APP_ORDER)}
        ordered = sorted(
            (app for app in apps if app["models"]),
            key=lambda app: position.get(app["app_label"], len(position)),
        )
        if app_label is None and ordered:
            ordered.insert(0, _analytics_entry())
        if app_label is None and ordered:
            ordered.append(_configuration_entry())
        if app_label is None and system and getattr(request.user, "is_superuser", False):
            ordered.append(_system_entry(system))
        if app_label is None:
            request._dashboard_apps = ordered  # type: ignore[attr-defined]
        return ordered

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        from apps.analytics.home import home_context  # the top layer; loaded on first use

        tenant = selected_tenant(request)
        context = home_context(tenant) if tenant is not None else {}
        return super().index(request, {**context, **(extra_context or {})})


def _analytics_entry() -> dict[str, Any]:
    """The analytics page in the navigation, beside the models' pages."""
    url = reverse("admin:analytics")
    page = {
        "name": "Charts",
        "object_name": "Analytics",
        "admin_url": url,
        "add_url": None,
        "view_only": True,
        "perms": {"view": True},
    }
    return {
        "name": "Analytics",
        "app_label": "analytics",
        "app_url": url,
        "has_module_perms": True,
        "models": [page],
    }


def _configuration_entry() -> dict[str, Any]:
    """The configuration's history, promote and clone pages (apps/changes/dashboard.py)."""
    pages = [
        ("Change history", "admin:config-history"),
        ("Promote changes", "admin:config-promote"),
        ("Clone environment", "admin:config-clone"),
    ]
    models = [
        {
            "name": name,
            "object_name": name.replace(" ", ""),
            "admin_url": reverse(url),
            "add_url": None,
            "view_only": True,
            "perms": {"view": True},
        }
        for name, url in pages
    ]
    return {
        "name": "Configuration",
        "app_label": "configuration",
        "app_url": models[0]["admin_url"],
        "has_module_perms": True,
        "models": models,
    }


def _system_entry(models: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": "System",
        "app_label": "system",
        "app_url": models[0]["admin_url"],
        "has_module_perms": True,
        "models": models,
    }


def sidebar_navigation(request: HttpRequest) -> list[dict[str, Any]]:
    """The sidebar (UNFOLD["SIDEBAR"], gamify/settings.py): the home page, then each section
    of the site's app list with its pages, the "System" section last and for superusers only
    (get_app_list leaves it out for anyone else)."""
    site: DashboardSite = admin.site  # type: ignore[assignment]
    home = {"title": "Home", "icon": "home", "link": reverse("admin:index")}
    groups: list[dict[str, Any]] = [{"items": [home]}]
    for app in site.get_app_list(request):
        icon = ICONS.get(app["app_label"], "folder")
        items = [
            {"title": model["name"], "icon": icon, "link": model["admin_url"]}
            for model in app["models"]
            if model.get("admin_url")
        ]
        system = app["app_label"] == "system"
        groups.append(
            {
                "title": str(app["name"]),
                "separator": system,
                "collapsible": system,
                "items": items,
            }
        )
    return groups


@require_POST
def tenant_switch(request: HttpRequest) -> HttpResponse:
    """The header's tenant switcher; returns to the page it was used on."""
    try:
        tenant_id = int(request.POST.get("tenant", ""))
    except ValueError:
        tenant_id = 0
    if select_tenant(request, tenant_id) is None:
        messages.error(request, "That tenant does not exist or is not yours.")
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = reverse("admin:index")
    # A change page of the previous tenant's object would be a 404: go to its list instead.
    return HttpResponseRedirect(_list_of(target))


def _list_of(target: str) -> str:
    parts = target.split("?")[0].rstrip("/").split("/")
    # /dashboard/<app>/<model>/<id>/change -> /dashboard/<app>/<model>/ (and an object's own
    # pages: a leaderboard's rankings, a league's cohorts)
    if len(parts) >= 5 and parts[-1] in {"change", "delete", "history", "rankings", "cohorts"}:
        return "/".join(parts[:-2]) + "/"
    return target


def login_locked_out(
    request: HttpRequest, response: HttpResponse | None, credentials: dict | None
) -> HttpResponse:
    """The page django-axes shows instead of the login form after repeated failures: 429, how
    long the block lasts, and how an administrator lifts it."""
    minutes = max(1, round(settings.AXES_COOLOFF_TIME.total_seconds() / 60))
    locked = TemplateResponse(
        request,
        "admin/locked_out.html",
        {**admin.site.each_context(request), "title": "Login blocked", "minutes": minutes},
        status=429,
    )
    locked["Retry-After"] = str(minutes * 60)
    return locked.render()
