"""Writes of a points system's boosts."""

import datetime as dt
from decimal import Decimal

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.arguments import UNSET, Unset, given
from apps.points import domain
from apps.points.configuration.archive import system_writable
from apps.points.errors import PointsConfigInvalidError
from apps.points.models import PointsBoost, PointsSystem
from apps.users.choices import AttributeType
from apps.users.configuration import attribute_refs_check
from apps.users.models import EndUser

# Attribute filters are {"attributeId", "attributeValue"} references, as stored.
Refs = list[dict[str, str]] | None


def points_boost_create(
    tenant: Tenant,
    system: PointsSystem,
    *,
    name: str,
    start: dt.date,
    multiplier: Decimal,
    end: dt.date | None = None,
    rounding: str = "down",
    user_id: str | None = None,  # a boost for one end-user; set for good
    user_attributes: Refs = None,
) -> PointsBoost:
    """A boost for one end-user (`user_id`) or for everyone matching the attribute filters."""
    system_writable(system)
    refs = user_attributes
    _multiplier_check(multiplier)
    problem = domain.boost_problem(start, end, user_id, refs)
    if problem is not None:
        raise problem
    boost = PointsBoost(
        system=system,
        name=name,
        start=start,
        end=end,
        multiplier=multiplier,
        rounding=rounding,
    )
    if user_id:
        user = EndUser.objects.filter(tenant=tenant, external_id=user_id).first()
        if user is None:
            raise PointsConfigInvalidError(
                "User does not exist", fields="user_id", code="not_found"
            )
        boost.user = user
    boost.user_attributes = attribute_refs_check(tenant, refs, AttributeType.USER)
    boost.save()
    tenant_config_changed(tenant)
    return boost


def _multiplier_check(multiplier: Decimal) -> None:
    if (problem := domain.multiplier_problem(multiplier)) is not None:
        raise PointsConfigInvalidError(problem, fields="multiplier", code="out_of_range")


def points_boost_update(
    tenant: Tenant,
    boost: PointsBoost,
    *,
    name: str | Unset = UNSET,
    start: dt.date | Unset = UNSET,
    end: dt.date | Unset | None = UNSET,
    multiplier: Decimal | Unset = UNSET,
    rounding: str | Unset = UNSET,
    user_attributes: Refs | Unset = UNSET,
) -> PointsBoost:
    """The end-user of a boost is set for good."""
    changes = given(
        name=name,
        start=start,
        end=end,
        multiplier=multiplier,
        rounding=rounding,
        user_attributes=user_attributes,
    )
    system_writable(boost.system)
    if "multiplier" in changes:
        _multiplier_check(changes["multiplier"])
    for name in ("name", "start", "end", "multiplier", "rounding"):
        if name in changes:
            setattr(boost, name, changes[name])
    if "user_attributes" in changes:
        if boost.user_id is not None and changes["user_attributes"]:
            raise PointsConfigInvalidError(
                "{user_attributes} do not apply to a user's boost",
                fields="user_attributes",
                code="not_allowed_for_kind",
            )
        boost.user_attributes = attribute_refs_check(
            tenant, changes["user_attributes"], AttributeType.USER
        )
    if boost.end is not None and boost.end < boost.start:
        raise PointsConfigInvalidError(
            "{end} must not be before {start}", fields=("end", "start"), code="out_of_range"
        )
    boost.save()
    tenant_config_changed(tenant)
    return boost


def points_boost_delete(tenant: Tenant, boost: PointsBoost) -> None:
    system_writable(boost.system)
    boost.delete()
    tenant_config_changed(tenant)
