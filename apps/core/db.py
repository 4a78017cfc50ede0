"""Hand-written statements of the hot path, where the ORM's query building costs more than the
query: single-statement upserts for counters (`INSERT ... ON CONFLICT DO UPDATE ... [RETURNING]`
works on PostgreSQL and SQLite >= 3.35; the ORM would need a read and then an update or an
insert), and aggregates the ORM compiles slowly. The SQL itself lives in each app's `sql.py`.
"""

import datetime as dt
from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models import Model


def upsert(sql: str, model: type[Model], params: list[Any]) -> tuple[Any, ...] | None:
    """Run `sql` with `{t}` replaced by the model's quoted table; returns the RETURNING row."""
    return fetch_one(sql, model, params)


def fetch_one(sql: str, model: type[Model], params: list[Any]) -> tuple[Any, ...] | None:
    """Run `sql` with `{t}` replaced by the model's quoted table, parameters adapted as the ORM
    adapts them; returns the first row, if the statement returns rows."""
    ops = connection.ops
    table = ops.quote_name(model._meta.db_table)
    adapted = [
        ops.adapt_decimalfield_value(p, 24, 6)
        if isinstance(p, Decimal)
        else ops.adapt_datetimefield_value(p)
        if isinstance(p, dt.datetime)
        else ops.adapt_datefield_value(p)
        if isinstance(p, dt.date)
        else p
        for p in params
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql.format(t=table), adapted)
        return cursor.fetchone() if cursor.description else None
