"""Writes of league configuration, for the admin API and the dashboard alike: creating,
changing (status changes are the `status` setting) and deleting a league. Every change bumps
the tenant's configuration version."""

from typing import Any

from django.db.models import ProtectedError

from apps.accounts.history import ALL, recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.achievements.choices import Trigger
from apps.achievements.models import Achievement
from apps.core.declarations import given_values, required_check
from apps.core.errors import ValidationError
from apps.core.wording import listed
from apps.leagues import domain
from apps.leagues.choices import ScoreBy, Status
from apps.leagues.domain import FROZEN_ONCE_ACTIVE, LeagueSettings
from apps.leagues.models import League, LeagueEntry
from apps.metrics.models import Metric
from apps.points.models import PointsSystem
from apps.users.choices import AttributeType
from apps.users.configuration import attribute_refs_check

_PLAIN = (
    "name",
    "description",
    "score_by",
    "week_ends_on",
    "cohort_size",
    "zone_unit",
    "idle",
    "absent",
)


@recorded("league")
def league_create(tenant: Tenant, settings: LeagueSettings) -> League:
    """A new league, inactive unless `status` says otherwise, with ten tiers unless `tiers`
    says otherwise."""
    required_check(settings)
    league = League(tenant=tenant, tiers=domain.default_tiers())
    return _save(tenant, league, given_values(settings))


@recorded("league")
def league_update(tenant: Tenant, league: League, changes: LeagueSettings) -> League:
    """Change the given settings; the others are kept. An active league keeps what its weeks
    are made of (FROZEN_ONCE_ACTIVE) and its number of tiers (resending the stored value is
    not a change)."""
    values = given_values(changes)
    if league.status == Status.ACTIVE:
        stored = league_settings_stored(league)
        frozen = [n for n in FROZEN_ONCE_ACTIVE if n in values and values[n] != stored[n]]
        if frozen:
            raise ValidationError(
                f"{listed(['{' + n + '}' for n in frozen])} can only change while the league "
                "is inactive",
                fields=frozen,
                code="frozen",
            )
        if "tiers" in values and len(values["tiers"] or []) not in (0, len(league.tiers)):
            raise ValidationError(
                "{tiers}: the number of tiers can only change while the league is inactive",
                fields="tiers",
                code="frozen",
            )
    return _save(tenant, league, values)


def league_settings_stored(league: League) -> dict[str, Any]:
    """The stored settings as a LeagueSettings holds them (for comparisons and forms)."""
    return {
        "name": league.name,
        "key": league.key,
        "description": league.description,
        "status": league.status,
        "score_by": league.score_by,
        "metric_id": str(league.metric.public_id) if league.metric else None,
        "points_system_id": str(league.points_system.public_id) if league.points_system else None,
        "week_ends_on": league.week_ends_on,
        "week_ends_at": domain.minutes_render(league.week_ends_at),
        "cohort_size": league.cohort_size,
        "tiers": league.tiers,
        "zone_unit": league.zone_unit,
        "idle": league.idle,
        "absent": league.absent,
        "rewards": league.rewards,
        "user_attributes": league.user_attributes,
    }


def _save(tenant: Tenant, league: League, values: dict[str, Any]) -> League:
    if "key" in values:
        if League.objects.filter(tenant=tenant, key=values["key"]).exclude(pk=league.pk).exists():
            raise ValidationError(
                "Key already in use by another league", fields="key", code="unique"
            )
        league.key = values["key"]
    for name in _PLAIN:
        if name in values:
            setattr(league, name, values[name])
    if "status" in values:
        league.status = values["status"]
    if "week_ends_at" in values:
        league.week_ends_at = domain.minutes_parse(values["week_ends_at"])
    if values.get("metric_id") is not None:
        league.metric = Metric.objects.filter(tenant=tenant, public_id=values["metric_id"]).first()
        if league.metric is None:
            raise ValidationError(
                "{metric_id}: Metric not found by ID", fields="metric_id", code="not_found"
            )
    if values.get("points_system_id") is not None:
        league.points_system = _system(tenant, values["points_system_id"], "points_system_id")
    if values.get("tiers"):
        league.tiers = _tiers(values["tiers"])
    if "rewards" in values:
        league.rewards = _rewards(tenant, values["rewards"] or [], league)
    if "user_attributes" in values:
        league.user_attributes = attribute_refs_check(
            tenant, values["user_attributes"], AttributeType.USER
        )
    _validate(league)
    league.save()
    tenant_config_changed(tenant)
    return league


def _system(tenant: Tenant, public_id: str, field: str) -> PointsSystem:
    system = PointsSystem.objects.filter(tenant=tenant, public_id=public_id).first()
    if system is None:
        raise ValidationError(
            f"{{{field}}}: Points system not found by ID", fields=field, code="not_found"
        )
    return system


def _tiers(tiers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    stored = [
        {"name": t["name"], "promote": int(t.get("promote", 0)), "demote": int(t.get("demote", 0))}
        for t in tiers
    ]
    problem = domain.tiers_problem(stored)
    if problem is not None:
        raise problem
    return stored


def _rewards(tenant: Tenant, rewards: list[dict[str, Any]], league: League) -> list[dict[str, Any]]:
    """Each reward's places, tier and what it pays, checked against the tenant's systems and
    achievements (stored by public id; a reward names its tier by name)."""
    stored = []
    for reward in rewards:
        first, last = reward["from_place"], reward.get("to_place") or reward["from_place"]
        if last < first:
            raise ValidationError(
                "{rewards}: a reward's last place must not be before its first", fields="rewards"
            )
        points = reward.get("points") or 0
        system_id = reward.get("points_system_id")
        achievement_id = reward.get("achievement_id")
        if points and system_id is None:
            raise ValidationError(
                "{rewards}: a reward's points need a points system", fields="rewards"
            )
        if not points and achievement_id is None:
            raise ValidationError(
                "{rewards}: a reward pays points or completes an achievement", fields="rewards"
            )
        if system_id is not None:
            _system(tenant, str(system_id), "rewards")
        if achievement_id is not None:
            found = Achievement.objects.filter(
                tenant=tenant, public_id=achievement_id, trigger=Trigger.API
            ).exists()
            if not found:
                raise ValidationError(
                    "{rewards}: a reward's achievement is not an api achievement of this tenant",
                    fields="rewards",
                    code="not_found",
                )
        stored.append(
            {
                "from_place": first,
                "to_place": last,
                "tier": reward.get("tier"),
                "points": points,
                "points_system_id": str(system_id) if system_id else None,
                "achievement_id": str(achievement_id) if achievement_id else None,
            }
        )
    return stored


def _validate(league: League) -> None:
    if league.score_by == ScoreBy.METRIC and league.metric is None:
        raise ValidationError(
            "{metric_id} is required to score by a metric", fields="metric_id", code="required"
        )
    if league.score_by == ScoreBy.POINTS and league.points_system is None:
        raise ValidationError(
            "{points_system_id} is required to score by points",
            fields="points_system_id",
            code="required",
        )
    if league.score_by != ScoreBy.METRIC:
        league.metric = None
    if league.score_by != ScoreBy.POINTS:
        league.points_system = None
    names = {t["name"] for t in league.tiers}
    unknown = sorted({r["tier"] for r in league.rewards if r.get("tier")} - names)
    if unknown:
        raise ValidationError(
            f"{{rewards}}: no tier named {listed(unknown)}", fields="rewards", code="not_found"
        )


@recorded(ALL)
def league_delete(tenant: Tenant, league: League) -> None:
    """Delete a league that never ran; one with history is archived instead (status)."""
    if LeagueEntry.objects.filter(league=league).exists():
        raise ValidationError(
            "A league with history cannot be deleted: archive it", code="protected"
        )
    try:
        league.delete()
    except ProtectedError as exc:  # pragma: no cover - nothing protects a league today
        raise ValidationError("The league is in use") from exc
    tenant_config_changed(tenant)
