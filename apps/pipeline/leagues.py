"""A league week's end: the results of every finished cohort (apps/leagues/services.py), then
the rewards each placement earned, paid once, as points and achievements are paid outside an
event (the user's lock, the ledger's dedupe keys), with their notifications and webhooks."""

import datetime as dt

from apps.accounts.models import Tenant
from apps.achievements.errors import AchievementInvalidError
from apps.achievements.selectors import achievement_definitions
from apps.core.facts import Fact
from apps.leagues.facts import LeagueFinished
from apps.leagues.models import LeagueCohort, LeagueEntry
from apps.leagues.selectors import LeagueDef
from apps.leagues.services import Finished, cohorts_finish, rewards_due, rewards_take
from apps.notifications.choices import NotificationType
from apps.notifications.leagues import league_results_record
from apps.notifications.selectors import notification_config
from apps.pipeline.services import (
    achievement_complete,
    facts_publish,
    facts_tell,
    points_paid_outside_event,
)
from apps.points.ledger import Ledger
from apps.points.selectors import points_config
from apps.streams.services import enabled as streams_enabled
from apps.users.models import EndUser
from apps.users.services import user_job_lock
from apps.webhooks.selectors import endpoints_active

REWARDS_CHUNK = 500


def leagues_week_end(now: dt.datetime) -> tuple[int, int]:
    """Finish the cohorts whose week has ended, then pay what their placements earned:
    (cohorts finished, entries paid). Safe to run twice or at once: a cohort is finished once
    (its lock and `finished_at`), an entry's rewards are taken once under its lock, and the
    ledger's dedupe keys refuse points paid before (a run that died after paying but before
    committing paid nothing)."""
    finished = cohorts_finish(now, react=_results_tell(now))
    paid = 0
    while True:
        due = rewards_due(REWARDS_CHUNK)
        progressed = 0
        for entry_pk, user_pk in due:
            with user_job_lock(user_pk) as user:
                if user is None:
                    continue  # busy with an event: the next run pays them
                entry = rewards_take(entry_pk)
                if entry is not None:
                    league_rewards_pay(user.tenant, user, entry, now)
                    progressed += 1
        paid += progressed
        if progressed == 0 or len(due) < REWARDS_CHUNK:
            return finished, paid


def _results_tell(now: dt.datetime) -> Finished:
    """Each member's result to the webhooks (league.finished) and as a league_result
    notification, in the results' transaction; nothing is read for a tenant that has neither
    a webhook endpoint nor an active league_result template."""

    def react(
        tenant: Tenant, league: LeagueDef, cohort: LeagueCohort, entries: list[LeagueEntry]
    ) -> None:
        hooks = bool(endpoints_active(tenant)) or streams_enabled()
        notify = notification_config(tenant).enabled(NotificationType.LEAGUE_RESULT)
        if not entries or not (hooks or notify):
            return
        users = EndUser.objects.in_bulk([e.user_id for e in entries])
        if notify:
            league_results_record(tenant, league, cohort, entries, users, now)
        if hooks:
            for entry in entries:
                fact = LeagueFinished(entry.user_id, league, entry)
                facts_publish(tenant, users[entry.user_id], [fact], now)

    return react


def league_rewards_pay(tenant: Tenant, user: EndUser, entry: LeagueEntry, now: dt.datetime) -> None:
    """Pay an entry's rewards, for a user whose lock the caller holds: the points (one award
    per reward, keyed by the entry and the reward's place in the list), then the api
    achievements (a completion is once per user anyway). A points system or an achievement
    gone since, or an achievement the user cannot complete (locked, outside its filters),
    pays nothing."""
    systems = {s.public_id: s for s in points_config(tenant).values()}
    paying = [
        (index, systems[r["points_system_id"]], int(r["points"]))
        for index, r in enumerate(entry.rewards)
        if r.get("points") and r.get("points_system_id") in systems
    ]
    facts: list[Fact] = []
    if paying:
        ledger = Ledger(tenant, user, now)
        ledger.load([system for _, system, _ in paying])
        for index, system, points in paying:
            ledger.award(system, None, points, f"league:{entry.pk}:{index}")
        # A reward does not count in next week's points leagues (it would join the user).
        facts += points_paid_outside_event(tenant, user, ledger.flush(), now, leagues=False)
    facts_tell(tenant, user, facts, now)
    definitions = {d.public_id: d for d in achievement_definitions(tenant).values()}
    for reward in entry.rewards:
        definition = definitions.get(reward.get("achievement_id") or "")
        if definition is not None:
            try:
                achievement_complete(tenant, user, definition, now)
            except AchievementInvalidError:
                continue
