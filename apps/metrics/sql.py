"""Hand-written SQL of the event's record (apps/core/db.py says when): on PostgreSQL the
user's total, the event row and the daily rollup are one statement, data-modifying CTEs that
give the event the total the upsert returned."""

import functools

from django.db import connection

from apps.metrics.models import MetricDailyChange, MetricEvent, MetricTotal

TOTAL_UPSERT = (
    "INSERT INTO {t} (tenant_id, user_id, metric_id, total, updated) VALUES (%s, %s, %s, %s, %s) "
    "ON CONFLICT (user_id, metric_id) DO UPDATE "
    "SET total = {t}.total + EXCLUDED.total, updated = EXCLUDED.updated RETURNING total"
)
DAILY_UPSERT = (
    "INSERT INTO {t} (tenant_id, user_id, metric_id, date, change, events) "
    "VALUES (%s, %s, %s, %s, %s, 1) "
    "ON CONFLICT (user_id, metric_id, date) DO UPDATE "
    "SET change = {t}.change + EXCLUDED.change, events = {t}.events + 1"
)

# The event's columns; total_after is the total the upsert returned.
EVENT_FIELDS = [f for f in MetricEvent._meta.concrete_fields if not f.primary_key]


@functools.cache
def record_statement() -> str:
    """PostgreSQL: total, daily rollup and event in one statement; parameters are the total
    upsert's, the daily upsert's, then the event's columns other than total_after. Returns
    the total and the event's id."""
    quote = connection.ops.quote_name

    def table(model: type) -> str:
        return str(quote(model._meta.db_table))  # type: ignore[attr-defined]

    columns = ", ".join(quote(str(f.column)) for f in EVENT_FIELDS)
    values = ", ".join("t.total" if f.attname == "total_after" else "%s" for f in EVENT_FIELDS)
    pk = quote(str(MetricEvent._meta.pk.column))
    # Identifiers from the models; values are parameters.
    return (
        f"WITH t AS ({TOTAL_UPSERT.format(t=table(MetricTotal))}), "  # noqa: S608
        f"d AS ({DAILY_UPSERT.format(t=table(MetricDailyChange))}), "
        f"e AS (INSERT INTO {table(MetricEvent)} ({columns}) SELECT {values} FROM t "
        f"RETURNING {pk}) "
        "SELECT t.total, e.id FROM t, e"
    )
