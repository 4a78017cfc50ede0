"""Reads of metrics, totals and event summaries. Every read starts from the tenant."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Max, Sum

from apps.accounts.models import Tenant
from apps.core.config_cache import tenant_cached
from apps.core.guards import Consequence, Impact, registered_consequences
from apps.core.wording import counted
from apps.metrics.domain import SummaryBucket, summary_buckets, summary_range_check
from apps.metrics.errors import MetricNotFoundError
from apps.metrics.models import Metric, MetricDailyChange, MetricEvent, MetricTotal
from apps.users.models import EndUser
from apps.users.selectors import attributes_q


@dataclass(frozen=True)
class MetricDef:
    """What the hot path needs of a metric, cached per tenant configuration version."""

    pk: int
    public_id: str
    key: str
    name: str
    unit_type: str
    units: str


def metric_definitions(tenant: Tenant) -> dict[str, MetricDef]:
    def load() -> dict[str, MetricDef]:
        return {
            m.key: MetricDef(
                pk=m.pk,
                public_id=str(m.public_id),
                key=m.key,
                name=m.name,
                unit_type=m.unit_type,
                units=m.units,
            )
            for m in Metric.objects.filter(tenant=tenant).order_by("created", "id")
        }

    return tenant_cached(tenant, "metrics", load)


def metric_by_key(tenant: Tenant, key: str) -> MetricDef:
    metric = metric_definitions(tenant).get(key)
    if metric is None:
        raise MetricNotFoundError(key)
    return metric


def metrics_list(tenant: Tenant, limit: int, skip: int) -> Sequence[Metric]:
    return list(Metric.objects.filter(tenant=tenant).order_by("created", "id")[skip : skip + limit])


def metric_get(tenant: Tenant, public_id: str) -> Metric | None:
    return Metric.objects.filter(tenant=tenant, public_id=public_id).first()


def latest_event_at(users: Sequence[EndUser]) -> dict[int, dt.datetime]:
    """The moment of each user's latest event, for a page of users in one query. Every event
    sets its metric total's `updated` to the event's moment (TOTAL_UPSERT, apps/metrics/sql.py),
    so the latest of a user's few totals is their latest event, read through the totals'
    (user, metric) index instead of the user's events."""
    rows = (
        MetricTotal.objects.filter(user__in=list(users))
        .values("user_id")
        .annotate(at=Max("updated"))
        .values_list("user_id", "at")
    )
    return dict(rows)


def metric_deletion_impact(tenant: Tenant, metric: Metric) -> Impact:
    """What deleting the metric does: its events go (with the totals and rollups they make), and
    what the apps above tell (achievements, leaderboards, points triggers, the streak, leagues:
    apps/core/guards.py)."""
    events = MetricEvent.objects.filter(tenant=tenant, metric=metric).count()
    users = MetricTotal.objects.filter(tenant=tenant, metric=metric).count()
    own = []
    if events or users:
        text = f"{counted(events, 'event')} of {counted(users, 'user')} are deleted"
        own.append(Consequence(text, users=max(users, 1)))
    return Impact(
        noun="metric",
        name=metric.name,
        key=metric.key,
        public_id=str(metric.public_id),
        consequences=(*own, *registered_consequences("metric", metric)),
    )


def user_metric_totals(user: EndUser) -> dict[int, Decimal]:
    """metric pk -> the user's total; metrics without events are absent (total 0)."""
    return dict(MetricTotal.objects.filter(user=user).values_list("metric_id", "total"))


def user_metric_total(user: EndUser, metric_pk: int) -> Decimal:
    total = (
        MetricTotal.objects.filter(user=user, metric_id=metric_pk)
        .values_list("total", flat=True)
        .first()
    )
    return total if total is not None else Decimal(0)


def event_by_idempotency_key(user: EndUser, metric_pk: int, key: str) -> MetricEvent | None:
    return MetricEvent.objects.filter(
        tenant_id=user.tenant_id, user=user, metric_id=metric_pk, idempotency_key=key
    ).first()


def metric_event_summary(
    user: EndUser, metric_pk: int, aggregation: str, start: dt.date, end: dt.date
) -> list[SummaryBucket]:
    """Per bucket of the user's local calendar: the change and the running total at its end."""
    summary_range_check(start, end)
    rollups = MetricDailyChange.objects.filter(user=user, metric_id=metric_pk)
    before = rollups.filter(date__lt=start).aggregate(total=Sum("change"))["total"] or Decimal(0)
    changes = rollups.filter(date__gte=start, date__lte=end).values_list("date", "change")
    return summary_buckets(start, end, aggregation, before, changes)


def metric_filtered_total(user: EndUser, metric_pk: int, filters: dict[str, str]) -> Decimal:
    """The user's total of the events of this metric carrying all these attribute values."""
    events = MetricEvent.objects.filter(
        attributes_q(filters), user=user, metric_id=metric_pk, undone__isnull=True
    )
    return events.aggregate(total=Sum("value"))["total"] or Decimal(0)


def totals_of(user_pks: list[int]) -> dict[tuple[int, int], Decimal]:
    """Every metric total of these users, by (user pk, metric pk): one statement."""
    rows = MetricTotal.objects.filter(user_id__in=user_pks).values_list(
        "user_id", "metric_id", "total"
    )
    return {(user_pk, metric_pk): total for user_pk, metric_pk, total in rows}


def daily_changes_of(
    user_pks: list[int], since: dt.date
) -> list[tuple[int, int, dt.date, Decimal]]:
    """These users' daily rollups (user pk, metric pk, date, change) from `since`: one
    statement."""
    return list(
        MetricDailyChange.objects.filter(user_id__in=user_pks, date__gte=since).values_list(
            "user_id", "metric_id", "date", "change"
        )
    )
