"""Dashboard pages of the configuration (README "The dashboard"), under
/dashboard/configuration/: the selected tenant's change history (or one object's, from the
"History" button of its page) with a revert button per change; promote from another
environment or tenant of the organization, its diff field by field with a checkbox per change;
and a new environment cloned from the selected tenant. Every write goes through
apps/changes/services.py, so through the admin API's validation and into the history."""

import json
from typing import Any
from urllib.parse import urlencode

from django.apps import apps as django_apps
from django.contrib import admin, messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from apps.accounts.admin.base import selected_tenant
from apps.accounts.models import ConfigChange, Tenant
from apps.accounts.staff import tenant_label, visible_tenants
from apps.changes import files, services
from apps.core import portable
from apps.core.api.params import is_uuid
from apps.core.errors import ApplicationError

PAGE = 25

# The dashboard's pages of configuration models -> their kind (the "History" button).
MODEL_KINDS = {
    "users.attribute": "attribute",
    "metrics.metric": "metric",
    "achievements.achievement": "achievement",
    "points.pointssystem": "points_system",
    "points.pointslevel": "points_level",
    "points.pointsboost": "points_boost",
    "points.pointstrigger": "points_trigger",
    "leaderboards.leaderboard": "leaderboard",
    "leagues.league": "league",
    "quests.quest": "quest",
    "quests.questpool": "quest_pool",
    "notifications.emailtemplate": "email_template",
    "notifications.pushtemplate": "push_template",
    "notifications.pushchannel": "push_channel",
    "webhooks.webhookendpoint": "webhook_endpoint",
}


def _tenant(request: HttpRequest) -> Tenant:
    tenant = selected_tenant(request)
    if tenant is None:
        raise Http404("No tenant")
    return tenant


def _object_key(tenant: Tenant, model_label: str, pk: str) -> tuple[str, str] | None:
    """The kind and key of a dashboard page's object, if it is configuration."""
    kind_name = MODEL_KINDS.get(model_label)
    if kind_name is None or not pk.isdigit():
        return None
    model = django_apps.get_model(model_label)
    obj = model._default_manager.filter(pk=int(pk)).first()
    kind = portable.kind(kind_name)
    if obj is None or not isinstance(kind, portable.CollectionKind):
        return None
    key = kind.key_of(obj)
    system = getattr(obj, "system", None)
    owner = system.tenant_id if system is not None else getattr(obj, "tenant_id", None)
    if owner != tenant.pk:
        return None
    return kind_name, f"{system.key}/{key}" if system is not None else key


def _fields(change: ConfigChange) -> list[dict[str, Any]]:
    before, after = change.before or {}, change.after or {}
    names = sorted(before.keys() | after.keys())
    return [
        {
            "name": name,
            "before": _shown(before.get(name)) if change.before is not None else None,
            "after": _shown(after.get(name)) if change.after is not None else None,
        }
        for name in names
        if before.get(name) != after.get(name)
    ]


def _shown(value: Any) -> str:
    if value is None:
        return "—"
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= 200 else text[:197] + "…"


def history(request: HttpRequest) -> HttpResponse:
    tenant = _tenant(request)
    kind = request.GET.get("kind", "")
    key = request.GET.get("key", "")
    if request.GET.get("model") and request.GET.get("object"):
        found = _object_key(tenant, request.GET["model"], request.GET["object"])
        if found is None:
            raise Http404("Not a configuration object of this tenant")
        return HttpResponseRedirect("?" + urlencode({"kind": found[0], "key": found[1]}))
    changes = ConfigChange.objects.filter(tenant=tenant).select_related("reverted_by")
    if kind:
        changes = changes.filter(kind=kind)
    if key:
        changes = changes.filter(key=key)
    page = Paginator(changes.order_by("-at", "-id"), PAGE).get_page(request.GET.get("page"))
    rows = [
        {
            "change": change,
            "label": _label(change.kind),
            "fields": _fields(change),
            "object_url": "?" + urlencode({"kind": change.kind, "key": change.key}),
        }
        for change in page
    ]
    query = urlencode({name: value for name, value in (("kind", kind), ("key", key)) if value})
    context = {
        **admin.site.each_context(request),
        "title": "Change history" + (f": {key}" if key else ""),
        "rows": rows,
        "page": page,
        "query": query,
        "kind": kind,
        "key": key,
        "kinds": [(each.name, each.label) for each in portable.kinds()],
        "tenant": tenant,
    }
    return TemplateResponse(request, "admin/changes/history.html", context)


def _label(kind: str) -> str:
    known = {each.name: each.label for each in portable.kinds()}
    return known.get(kind, kind)


@require_POST
def revert(request: HttpRequest, change_id: str) -> HttpResponse:
    tenant = _tenant(request)
    change = (
        ConfigChange.objects.filter(tenant=tenant, public_id=change_id).first()
        if is_uuid(change_id)
        else None
    )
    if change is None:
        raise Http404("No such change")
    try:
        services.change_revert(change)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        label = portable.kind(change.kind).label
        messages.success(request, f"Reverted: {label} {change.key} is back as it was before.")
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = reverse("admin:config-history")
    return HttpResponseRedirect(back)


def _sources(request: HttpRequest, tenant: Tenant) -> list[Tenant]:
    """The other tenants of the selected tenant's organization the staff member sees."""
    return [
        other
        for other in visible_tenants(request.user)
        if other.environment.organization_id == tenant.environment.organization_id
        and other.pk != tenant.pk
    ]


def promote(request: HttpRequest) -> HttpResponse:
    tenant = _tenant(request)
    sources = _sources(request, tenant)
    chosen = request.POST.get("source") or request.GET.get("source")
    source = next((other for other in sources if str(other.pk) == chosen), None)
    if request.method == "POST" and source is not None:
        selected = request.POST.getlist("change")
        if not selected:
            messages.error(request, "Choose at least one change to promote.")
        else:
            try:
                applied = services.promote(source, tenant, selected)
            except ApplicationError as exc:
                messages.error(request, f"Nothing was promoted: {exc.message}")
            else:
                messages.success(
                    request,
                    f"Promoted {len(applied.steps)} change{'s' if len(applied.steps) != 1 else ''} "
                    f"from {tenant_label(source)}.",
                )
                return HttpResponseRedirect(f"?source={source.pk}")
    steps = services.diff(source, tenant) if source is not None else []
    context = {
        **admin.site.each_context(request),
        "title": "Promote changes",
        "tenant": tenant,
        "tenant_text": tenant_label(tenant),
        "sources": [(other.pk, tenant_label(other)) for other in sources],
        "source": source,
        "source_text": tenant_label(source) if source is not None else "",
        "steps": [
            {
                "step": step,
                "label": portable.kind(step.kind).label,
                "removal": files.removal(step) if step.action == "remove" else "",
                "fields": [
                    {"name": name, "before": _shown(now), "after": _shown(then)}
                    for name, (now, then) in step.fields.items()
                ],
            }
            for step in steps
        ],
    }
    return TemplateResponse(request, "admin/changes/promote.html", context)


def clone(request: HttpRequest) -> HttpResponse:
    tenant = _tenant(request)
    context: dict[str, Any] = {
        "title": "Clone into a new environment",
        "tenant_text": tenant_label(tenant),
        "values": {"name": "", "key": "", "priority": "2"},
    }
    if request.method == "POST":
        values = {name: request.POST.get(name, "").strip() for name in ("name", "key", "priority")}
        context["values"] = values
        try:
            priority = int(values["priority"] or 2)
            if not 1 <= priority <= 1000:
                raise ValueError
        except ValueError:
            context["error"] = "Priority must be a whole number from 1 to 1000."
        else:
            try:
                cloned = services.environment_clone(
                    tenant, name=values["name"], key=values["key"], priority=priority
                )
            except ApplicationError as exc:
                context["error"] = exc.message
            else:
                context.update(
                    {
                        "cloned": cloned.environment,
                        "admin_key": cloned.admin_key,
                        "copied": len(cloned.applied.changes),
                    }
                )
    # After the clone: the switcher offers the new environment at once.
    context.update(admin.site.each_context(request))
    return TemplateResponse(request, "admin/changes/clone.html", context)
