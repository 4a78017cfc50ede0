"""Hand-written SQL of the event's record (apps/core/db.py says when): on PostgreSQL the
user's total, the event row and the daily rollup are one statement, data-modifying CTEs that
give the event the total the upsert returned."""

import functools

from django.db import connection

from apps.core.db import Table, statement
from apps.metrics.models import MetricDailyChange, MetricEvent, MetricTotal

# Templates of apps/core/db.py (`{t}` the table, `{t[field]}` a column).
TOTAL_UPSERT = (
    "INSERT INTO {t} ({t[tenant]}, {t[user]}, {t[metric]}, {t[total]}, {t[updated]}) "
    "VALUES (%s, %s, %s, %s, %s) "
    "ON CONFLICT ({t[user]}, {t[metric]}) DO UPDATE "
    "SET {t[total]} = {t}.{t[total]} + EXCLUDED.{t[total]}, {t[updated]} = EXCLUDED.{t[updated]} "
    "RETURNING {t[total]}"
)
DAILY_UPSERT = (
    "INSERT INTO {t} ({t[tenant]}, {t[user]}, {t[metric]}, {t[date]}, {t[change]}, {t[events]}) "
    "VALUES (%s, %s, %s, %s, %s, 1) "
    "ON CONFLICT ({t[user]}, {t[metric]}, {t[date]}) DO UPDATE "
    "SET {t[change]} = {t}.{t[change]} + EXCLUDED.{t[change]}, "
    "{t[events]} = {t}.{t[events]} + 1"
)

# The event's columns; total_after is the total the upsert returned.
EVENT_FIELDS = [f for f in MetricEvent._meta.concrete_fields if not f.primary_key]


@functools.cache
def record_statement() -> str:
    """PostgreSQL: total, daily rollup and event in one statement; parameters are the total
    upsert's, the daily upsert's, then the event's columns other than total_after. Returns
    the total and the event's id."""
    quote = connection.ops.quote_name
    event, total = Table(MetricEvent), Table(MetricTotal)
    columns = ", ".join(quote(str(f.column)) for f in EVENT_FIELDS)
    values = ", ".join(
        f"t.{total['total']}" if f.attname == "total_after" else "%s" for f in EVENT_FIELDS
    )
    # Identifiers from the models; values are parameters.
    return (
        f"WITH t AS ({statement(TOTAL_UPSERT, t=total)}), "  # noqa: S608
        f"d AS ({statement(DAILY_UPSERT, t=MetricDailyChange)}), "
        f"e AS (INSERT INTO {event} ({columns}) SELECT {values} FROM t "
        f"RETURNING {event['id']}) "
        f"SELECT t.{total['total']}, e.{event['id']} FROM t, e"
    )
