"""Which tenants a dashboard staff member may see, and which one the dashboard is showing.

Staff members belong to organizations (Organization.staff); superusers see every organization.
The header's tenant switcher stores the chosen tenant in the session; every dashboard page shows
that tenant only, and a staff member with a single tenant simply has it selected.
"""

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from apps.accounts.models import Organization, Tenant
from apps.cells.middleware import SESSION_ORGANIZATION
from apps.core.cells import cell_alias, cells, cells_configured, current_cell

SESSION_KEY = "dashboard_tenant"
# Cached on the request: every page asks several times (queryset, forms, header).
_REQUEST_ATTR = "_dashboard_tenant"


def tenant_label(tenant: Tenant) -> str:
    """The tenant's name first, then where it is: customer ids are unique only within one
    environment, so the dashboard names the path ("Acme EU · Acme / Production / acme-eu")."""
    return f"{tenant.name} · {tenant.environment} / {tenant.customer_id or 'default tenant'}"


def visible_organizations(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Organization]:
    if not user.is_active or not getattr(user, "is_staff", False):
        return Organization.objects.none()
    if getattr(user, "is_superuser", False):
        return Organization.objects.all()
    return Organization.objects.filter(staff__pk=user.pk)


def visible_tenants(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Tenant]:
    tenants = Tenant.objects.select_related("environment__organization").order_by(
        "environment__organization__name", "environment__priority", "-is_default", "customer_id"
    )
    if getattr(user, "is_superuser", False) and user.is_active:
        return tenants
    return tenants.filter(Q(environment__organization__in=visible_organizations(user)))


def selected_tenant(request: HttpRequest) -> Tenant | None:
    """The tenant the dashboard shows: the one picked in the header if the staff member may still
    see it, else their first tenant; None when they can see none."""
    if hasattr(request, _REQUEST_ATTR):
        cached: Tenant | None = getattr(request, _REQUEST_ATTR)
        return cached
    tenants = visible_tenants(request.user)
    chosen = request.session.get(SESSION_KEY)
    tenant = tenants.filter(pk=chosen).first() if chosen is not None else None
    if tenant is None:
        tenant = tenants.first()
    setattr(request, _REQUEST_ATTR, tenant)
    if tenant is None and cells_configured():
        # Nothing to show in this cell: the next page opens the staff member's first tenant
        # in another (the session names its organization, apps/cells/middleware.py).
        elsewhere = switchable_tenants(request.user)
        _organization_remember(request, elsewhere[0] if elsewhere else None)
    _organization_remember(request, tenant)
    return tenant


def _organization_remember(request: HttpRequest, tenant: Tenant | None) -> None:
    """The session names the shown tenant's organization, whose cell the next request enters
    (apps/cells/middleware.py); the tenant switcher lists the tenants of that cell."""
    if tenant is None or not cells_configured():
        return
    organization = str(tenant.environment.organization.public_id)
    if request.session.get(SESSION_ORGANIZATION) != organization:
        request.session[SESSION_ORGANIZATION] = organization


def switchable_tenants(user: AbstractBaseUser | AnonymousUser) -> list[Tenant]:
    """The tenants the header's switcher offers: those of every cell (apps/cells), each cell
    read on its own (ids are unique across cells)."""
    if not cells_configured():
        return list(visible_tenants(user))
    here = current_cell()
    found = [
        tenant
        for cell in cells()
        for tenant in (
            visible_tenants(user) if cell == here else visible_tenants(user).using(cell_alias(cell))
        )
    ]
    return sorted(
        found,
        key=lambda t: (
            t.environment.organization.name,
            t.environment.priority,
            not t.is_default,
            t.customer_id or "",
        ),
    )


def select_tenant(request: HttpRequest, tenant_id: int) -> Tenant | None:
    """Switches the dashboard to a tenant the staff member may see; None if they may not. A
    tenant of another cell is looked for there; the next request enters that cell."""
    tenant = visible_tenants(request.user).filter(pk=tenant_id).first()
    if tenant is None and cells_configured():
        for cell in cells():
            if cell == current_cell():
                continue
            tenant = (
                visible_tenants(request.user).using(cell_alias(cell)).filter(pk=tenant_id).first()
            )
            if tenant is not None:
                break
    if tenant is not None:
        request.session[SESSION_KEY] = tenant.pk
        setattr(request, _REQUEST_ATTR, tenant)
        _organization_remember(request, tenant)
    return tenant
