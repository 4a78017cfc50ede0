"""Hand-written SQL of API-key authentication, the one query of every request (apps/core/db.py
says when): the ORM compiled the key with its environment, default tenant and tenant, three
joins, in about four times the query's own time. The statement and the column converters are
built once per process from the models, so the rows become the same model instances the ORM
would have made."""

import functools
from typing import Any

from django.db import connection
from django.db.models import Model

from apps.accounts.models import ApiKey, Environment, Tenant
from apps.core.db import Converter, Table, model_columns, model_from_row, statement

# (alias, model) of each part of the row, in order; the tenants are LEFT JOINs (may be absent).
_PARTS: tuple[tuple[str, type[Model]], ...] = (
    ("k", ApiKey),
    ("e", Environment),
    ("d", Tenant),
    ("t", Tenant),
)


@functools.cache
def _statement(vendor: str) -> tuple[str, tuple[tuple[list[str], list[list[Converter]]], ...]]:
    """The SELECT and, per part, its field attnames and each field's converters."""
    columns: list[str] = []
    parts = []
    for alias, model in _PARTS:
        part_columns, names, converters = model_columns(model, alias)
        columns += part_columns
        parts.append((names, converters))
    # Identifiers from the models only; the prefix is a parameter.
    sql = statement(
        f"SELECT {', '.join(columns)} FROM {{k}} k"  # noqa: S608
        " JOIN {e} e ON {e[id]} = {k[environment]}"
        " LEFT JOIN {d} d ON {d[id]} = {e[default_tenant]}"
        " LEFT JOIN {t} t ON {t[id]} = {k[tenant]}"
        " WHERE {k[prefix]} = %s AND {k[is_active]} LIMIT 1",
        **{alias: Table(model, alias) for alias, model in _PARTS},
    )
    return sql, tuple(parts)


def api_key_with_tenants(prefix: str) -> ApiKey | None:
    """The active key with this prefix, its environment (and that one's default tenant) and
    its own tenant loaded, as select_related would: one statement."""
    sql, parts = _statement(connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(sql, [prefix])
        row = cursor.fetchone()
    if row is None:
        return None
    objects: list[Any] = []
    start = 0
    for (alias, model), (names, converters) in zip(_PARTS, parts, strict=True):
        values = row[start : start + len(names)]
        start += len(names)
        absent = alias in ("d", "t") and values[names.index("id")] is None
        objects.append(None if absent else model_from_row(model, names, converters, values))
    api_key, environment, default_tenant, tenant = objects
    environment.default_tenant = default_tenant
    api_key.environment = environment
    api_key.tenant = tenant
    return api_key
