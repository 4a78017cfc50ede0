"""Writes of a points system's boosts."""

from decimal import Decimal

from apps.accounts.history import recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.declarations import given_values, required_check
from apps.points import domain
from apps.points.configuration.archive import system_writable
from apps.points.domain import PointsBoostSettings
from apps.points.errors import PointsConfigInvalidError
from apps.points.models import PointsBoost, PointsSystem
from apps.users.choices import AttributeType
from apps.users.configuration import attribute_refs_check
from apps.users.models import EndUser

# Attribute filters are {"attributeId", "attributeValue"} references, as stored (triggers take
# them too).
Refs = list[dict[str, str]] | None


@recorded("points_boost")
def points_boost_create(
    tenant: Tenant, system: PointsSystem, settings: PointsBoostSettings
) -> PointsBoost:
    """A boost for one end-user (`user_id`) or for everyone matching the attribute filters
    (`user_attributes`, {"attributeId", "attributeValue"} references as stored)."""
    system_writable(system)
    required_check(settings, PointsConfigInvalidError)
    values = given_values(settings)
    user_id = values.pop("user_id", None)
    refs = values.pop("user_attributes", None)
    _multiplier_check(values["multiplier"])
    problem = domain.boost_problem(values["start"], values.get("end"), user_id, refs)
    if problem is not None:
        raise problem
    boost = PointsBoost(system=system, **values)
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


@recorded("points_boost")
def points_boost_update(
    tenant: Tenant, boost: PointsBoost, changes: PointsBoostSettings
) -> PointsBoost:
    """Change the given settings; the others are kept. The end-user of a boost is set for
    good."""
    values = given_values(changes)
    system_writable(boost.system)
    stored_user = boost.user.external_id if boost.user is not None else None
    if values.pop("user_id", stored_user) != stored_user:
        raise domain.set_for_good_problem("user_id")
    if "multiplier" in values:
        _multiplier_check(values["multiplier"])
    if "user_attributes" in values:
        if boost.user_id is not None and values["user_attributes"]:
            raise PointsConfigInvalidError(
                "{user_attributes} do not apply to a user's boost",
                fields="user_attributes",
                code="not_allowed_for_kind",
            )
        values["user_attributes"] = attribute_refs_check(
            tenant, values["user_attributes"], AttributeType.USER
        )
    for name, value in values.items():
        setattr(boost, name, value)
    if boost.end is not None and boost.end < boost.start:
        raise PointsConfigInvalidError(
            "{end} must not be before {start}", fields=("end", "start"), code="out_of_range"
        )
    boost.save()
    tenant_config_changed(tenant)
    return boost


@recorded("points_boost")
def points_boost_delete(tenant: Tenant, boost: PointsBoost) -> None:
    system_writable(boost.system)
    boost.delete()
    tenant_config_changed(tenant)
