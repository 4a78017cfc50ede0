"""Writes of a points system's boosts."""

import datetime as dt
from decimal import Decimal
from typing import Required, TypedDict, Unpack

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.arguments import arguments_check
from apps.points import domain
from apps.points.configuration.archive import system_writable
from apps.points.errors import PointsConfigInvalidError
from apps.points.models import PointsBoost, PointsSystem
from apps.users.choices import AttributeType
from apps.users.models import EndUser
from apps.users.services import attribute_refs_check

# Attribute filters are {"attributeId", "attributeValue"} references, as stored.
Refs = list[dict[str, str]] | None


class BoostSettings(TypedDict, total=False):
    end: dt.date | None
    rounding: str
    user_id: str | None  # a boost for one end-user; set for good
    user_attributes: Refs


class BoostChanges(TypedDict, total=False):
    name: str
    start: dt.date
    end: dt.date | None
    multiplier: Decimal
    rounding: str
    user_attributes: Refs


class BoostFields(BoostSettings, total=False):
    name: Required[str]
    start: Required[dt.date]
    multiplier: Required[Decimal]


def points_boost_create(
    tenant: Tenant,
    system: PointsSystem,
    *,
    name: str,
    start: dt.date,
    multiplier: Decimal,
    **settings: Unpack[BoostSettings],
) -> PointsBoost:
    """A boost for one end-user (`user_id`) or for everyone matching the attribute filters."""
    arguments_check("points_boost_create", settings, BoostSettings)
    system_writable(system)
    user_id, refs = settings.get("user_id"), settings.get("user_attributes")
    problem = domain.multiplier_problem(multiplier) or domain.boost_problem(
        start, settings.get("end"), user_id, refs
    )
    if problem is not None:
        raise PointsConfigInvalidError(problem)
    boost = PointsBoost(
        system=system,
        name=name,
        start=start,
        end=settings.get("end"),
        multiplier=multiplier,
        rounding=settings.get("rounding", "down"),
    )
    if user_id:
        user = EndUser.objects.filter(tenant=tenant, external_id=user_id).first()
        if user is None:
            raise PointsConfigInvalidError("User does not exist")
        boost.user = user
    boost.user_attributes = attribute_refs_check(tenant, refs, AttributeType.USER)
    boost.save()
    tenant_config_changed(tenant)
    return boost


def points_boost_update(
    tenant: Tenant, boost: PointsBoost, **changes: Unpack[BoostChanges]
) -> PointsBoost:
    """The end-user of a boost is set for good."""
    arguments_check("points_boost_update", changes, BoostChanges)
    system_writable(boost.system)
    if "multiplier" in changes and (problem := domain.multiplier_problem(changes["multiplier"])):
        raise PointsConfigInvalidError(problem)
    for name in ("name", "start", "end", "multiplier", "rounding"):
        if name in changes:
            setattr(boost, name, changes[name])
    if "user_attributes" in changes:
        if boost.user_id is not None and changes["user_attributes"]:
            raise PointsConfigInvalidError("userAttributes do not apply to a user's boost")
        boost.user_attributes = attribute_refs_check(
            tenant, changes["user_attributes"], AttributeType.USER
        )
    if boost.end is not None and boost.end < boost.start:
        raise PointsConfigInvalidError("end must not be before start")
    boost.save()
    tenant_config_changed(tenant)
    return boost


def points_boost_delete(tenant: Tenant, boost: PointsBoost) -> None:
    system_writable(boost.system)
    boost.delete()
    tenant_config_changed(tenant)
