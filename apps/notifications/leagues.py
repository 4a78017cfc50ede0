"""The league notification types (README, "Leagues"): a member's result, due in their morning
after the week's end (recorded by the week-end job in its results' transaction), and a warning
to the members in a demotion zone on the week's last day (a sweep). Who may receive them, and
on which channel, is decided as for every type (`messages_due`: templates, the control group,
preferences, unsubscribes); the messages' dedupe keys make each once per user and week."""

import datetime as dt
from collections import defaultdict
from decimal import Decimal
from typing import Any

from django.db import transaction

from apps.accounts.models import Tenant
from apps.leagues import domain as league_domain
from apps.leagues.choices import Zone
from apps.leagues.models import LeagueCohort, LeagueEntry
from apps.leagues.selectors import LeagueDef, leagues_active
from apps.notifications import domain
from apps.notifications.choices import NotificationType
from apps.notifications.models import Message
from apps.notifications.selectors import notification_config, tenants_with_type
from apps.notifications.services import messages_due, messages_save
from apps.users.models import EndUser

# The sweep looks at weeks ending within this horizon: every user's last-day slot is in it.
AT_RISK_HORIZON = dt.timedelta(hours=26)
COHORTS_PER_READ = 200


def _number(value: Decimal) -> int | str:
    """A score as a template shows it: 1250, not 1250.000000."""
    return int(value) if value == value.to_integral_value() else str(value.normalize())


def _league_part(league: LeagueDef, cohort: LeagueCohort, entry: LeagueEntry) -> dict[str, Any]:
    return {
        "key": league.key,
        "name": league.name,
        "tier": league.tier_name(entry.tier),
        "members": cohort.members,
        "score": _number(entry.score),
        "weekEnd": cohort.week_end.isoformat(),
    }


def league_results_record(
    tenant: Tenant,
    league: LeagueDef,
    cohort: LeagueCohort,
    entries: list[LeagueEntry],
    users: dict[int, EndUser],
    now: dt.datetime,
) -> int:
    """league_result for each member of a finished cohort, due at 09:00 in their morning
    after the week's end. Returns how many messages were recorded."""
    type = NotificationType.LEAGUE_RESULT
    config = notification_config(tenant)
    if not config.enabled(type):
        return 0
    key = domain.league_key(type, league.pk, cohort.week_start)
    messages: list[Message] = []
    for entry in entries:
        user = users[entry.user_id]
        payload = {
            "league": {
                **_league_part(league, cohort, entry),
                "placement": entry.placement,
                "zone": entry.zone,
                "newTier": league.tier_name(entry.next_tier or 0),
                "left": entry.left,
            }
        }
        send_at = max(now, domain.league_result_send_at(cohort.week_end, user.tz))
        messages += messages_due(config, user, type, key, send_at, payload)
    return messages_save(messages, now)


def league_at_risk_schedule(now: dt.datetime) -> int:
    """league_at_risk to each member of a running week who is in their cohort's demotion zone
    now and whose last-day slot (17:00 local, domain.league_at_risk_send_at) has come, for the
    tenants with an active template of the type. A member who climbs out before their slot
    is not told; one told is not told again that week."""
    recorded = 0
    for tenant in tenants_with_type(NotificationType.LEAGUE_AT_RISK):
        for league in leagues_active(tenant):
            week = league.week(now)
            if week.end - now <= AT_RISK_HORIZON:
                recorded += _at_risk_week(tenant, league, week, now)
    return recorded


def _at_risk_week(
    tenant: Tenant, league: LeagueDef, week: league_domain.Week, now: dt.datetime
) -> int:
    type = NotificationType.LEAGUE_AT_RISK
    config = notification_config(tenant)
    key = domain.league_key(type, league.pk, week.start)
    cohorts = LeagueCohort.objects.filter(league_id=league.pk, week_start=week.start)
    recorded, last_pk = 0, 0
    while True:
        chunk = list(cohorts.filter(pk__gt=last_pk).order_by("pk")[:COHORTS_PER_READ])
        if not chunk:
            return recorded
        last_pk = chunk[-1].pk
        members: dict[int, list[LeagueEntry]] = defaultdict(list)
        for entry in LeagueEntry.objects.filter(cohort__in=chunk).select_related("user"):
            members[entry.cohort_id].append(entry)
        messages: list[Message] = []
        for cohort in chunk:
            messages += _at_risk_cohort(config, league, cohort, members[cohort.pk], key, now)
        with transaction.atomic():
            recorded += messages_save(messages, now)


def _at_risk_cohort(
    config: Any,
    league: LeagueDef,
    cohort: LeagueCohort,
    entries: list[LeagueEntry],
    key: str,
    now: dt.datetime,
) -> list[Message]:
    by_user = {e.user_id: e for e in entries}
    standings = [league_domain.Standing(e.user_id, e.score, e.reached_at) for e in entries]
    results = league_domain.results(
        standings, tier=cohort.tier, tiers=league.tiers, unit=league.zone_unit, idle=league.idle
    )
    messages: list[Message] = []
    hours_left = max(int((cohort.week_end - now).total_seconds() // 3600), 0)
    for result in results:
        entry = by_user[result.user_pk]
        user = entry.user
        if result.zone != Zone.DEMOTION:
            continue
        if domain.league_at_risk_send_at(cohort.week_end, user.tz) > now:
            continue  # not yet their last-day slot
        payload = {
            "league": {
                **_league_part(league, cohort, entry),
                "rank": result.placement,
                "zone": result.zone,
                "hoursLeft": hours_left,
            }
        }
        type = NotificationType.LEAGUE_AT_RISK
        messages += messages_due(config, user, type, key, now, payload)
    return messages
