"""Dashboard fixtures: a logged-in superuser and helpers for admin URLs and messages."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.metrics.models import Metric, MetricDailyChange, MetricEvent, MetricTotal
from apps.users.models import EndUser


@pytest.fixture
def staff_client(db: Any) -> Client:
    user = get_user_model().objects.create_superuser(username="staff", password="unused-here")
    client = Client()
    client.force_login(user)
    return client


def org_staff(org: Any, **fields: Any) -> Any:
    """A staff member of `org` (not a superuser): sees its tenants, with no permissions yet."""
    user = get_user_model().objects.create_user(is_staff=True, **fields)
    org.organization.staff.add(user)
    return user


def switch_tenant(client: Client, tenant: Tenant) -> None:
    """Picks a tenant in the header's switcher: every page then shows that tenant only."""
    response = client.post(reverse("admin:tenant-switch"), {"tenant": tenant.pk})
    assert response.status_code == 302


def admin_url(model: type, view: str = "changelist", *args: Any) -> str:
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def message_texts(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def record_events(
    tenant: Tenant, user: EndUser, metric: Metric, count: int, start: dt.datetime | None = None
) -> list[MetricEvent]:
    """Events written directly, one per minute: the dashboard reads them, it never writes them."""
    start = start or timezone.now() - dt.timedelta(days=1)
    events = [
        MetricEvent(
            tenant=tenant,
            user=user,
            metric=metric,
            value=Decimal(1),
            total_after=Decimal(i + 1),
            occurred_at=start + dt.timedelta(minutes=i),
            local_date=(start + dt.timedelta(minutes=i)).date(),
        )
        for i in range(count)
    ]
    MetricEvent.objects.bulk_create(events)
    MetricTotal.objects.update_or_create(
        user=user, metric=metric, defaults={"tenant": tenant, "total": Decimal(count)}
    )
    MetricDailyChange.objects.get_or_create(
        tenant=tenant, user=user, metric=metric, date=start.date(), defaults={"change": count}
    )
    return events


def page_main(content: Any) -> Any:
    """The page's own content (bytes or text): from its #content-main to the end of the
    theme's layout, before the command palette every page carries (whose search form has a
    submit button of its own)."""
    marker, palette = ('id="content-main"', 'x-data="searchCommand()"')
    if isinstance(content, bytes):
        return content.split(marker.encode())[1].split(palette.encode())[0]
    return content.split(marker)[1].split(palette)[0]
