"""The hand-written statement of fair play's event path (docs/architecture.md §9)."""

import datetime as dt
from decimal import Decimal

from apps.core.db import fetch_one
from apps.fairplay.models import AnomalyCount

# Add to the user's total in a rule's window, and return the total after it: one statement.
COUNT_ADD = """
INSERT INTO {t} ({t[rule]}, {t[user]}, {t[window_start]}, {t[total]})
VALUES (%s, %s, %s, %s)
ON CONFLICT ({t[rule]}, {t[user]}, {t[window_start]})
DO UPDATE SET {t[total]} = {t}.{t[total]} + excluded.{t[total]}
RETURNING {t[total]}
"""


def count_add(rule_pk: int, user_pk: int, window_start: dt.datetime, amount: Decimal) -> Decimal:
    row = fetch_one(COUNT_ADD, AnomalyCount, [rule_pk, user_pk, window_start, amount])
    if row is None:  # an upsert with RETURNING always returns its row
        raise RuntimeError("the count's upsert returned no row")
    return Decimal(str(row[0]))
