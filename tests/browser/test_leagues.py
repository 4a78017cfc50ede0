"""Leagues in the browser: a staff member sets up a league on its page (the ten default tiers,
one more added as a row and moved into place), sees a refusal above the reward rows, then, once
users have sent events with the official SDK for two weeks, this week's cohorts with their live
standings, the league's weeks in numbers and a user's league on their page. Screenshots of each
step are saved (conftest.py)."""

import datetime as dt
from typing import Any

import time_machine
from django.utils import timezone
from trophy import UpsertedUser

from apps.leagues.models import League, LeagueEntry
from apps.leagues.services import cohorts_finish
from apps.metrics.configuration import metric_create
from apps.metrics.domain import MetricSettings
from apps.users.models import EndUser
from tests.browser.conftest import Staff
from tests.factories import OrganizationWithKey

WRITERS = [
    ("alice", "Alice Moreau", 420),
    ("bob", "Bob Stone", 380),
    ("chloe", "Chloé Martin", 310),
    ("dan", "Dan Okafor", 75),
    ("eve", "Eve Laurent", 260),
    ("farid", "Farid Haddad", 540),
    ("grace", "Grace Liu", 90),
    ("hugo", "Hugo Silva", 180),
]


def saved(staff: Staff) -> None:
    assert not staff.errors(), staff.errors()
    assert staff.all("ul.messagelist li.success"), staff.messages()


def test_a_league_is_set_up_and_its_cohorts_followed(staff: Staff, make_client: Any) -> None:
    org = OrganizationWithKey("Acme")
    metric_create(
        org.tenant,
        MetricSettings(name="Words written", key="words", unit_type="number", units="words"),
    )

    # The league: ten tiers to start from, one more added as a row.
    staff.go("/dashboard/leagues/league/add/")
    assert len(staff.all("#tiers-group tbody tr.form-row:not(.empty-form)")) == 10
    staff.fill("name", "Weekly writers")
    staff.fill("key", "weekly-writers")
    staff.pick("status", "active")
    staff.pick("score_by", "metric")
    staff.pick("metric_id", "Words written")
    staff.fill("cohort_size", "5")
    staff.fill("tiers-0-promote", "2")
    # A tier added at the top, then moved below Diamond.
    staff.click("#tiers-group .add-row a")
    staff.fill("tiers-10-name", "Master")
    staff.fill("tiers-10-promote", "7")
    staff.fill("tiers-10-demote", "5")
    staff.click("#tiers-10 [data-move='up']")
    assert staff.field("tiers-9-name").get_attribute("value") == "Master"
    assert staff.field("tiers-10-name").get_attribute("value") == "Diamond"
    assert staff.field("tiers-10-promote").get_attribute("value") == "0"
    staff.click("#rewards-group .add-row a")
    staff.fill("rewards-0-from_place", "1")
    staff.fill("rewards-0-to_place", "1")
    staff.pick("rewards-0-tier", "Master")
    staff.fill("rewards-0-points", "0")
    assert staff.no_horizontal_scroll()
    staff.shot("league-form")
    staff.submit('input[name="_continue"]')
    # A reward must pay something: refused above the reward rows, with the input kept.
    assert "A reward pays points or completes an achievement" in staff.text("#rewards-group")
    assert staff.field("tiers-9-name").get_attribute("value") == "Master"
    staff.shot("league-refused")
    staff.click("#rewards-0 .inline-deletelink")
    staff.submit('input[name="_continue"]')
    saved(staff)
    league = League.objects.get(key="weekly-writers")
    assert [tier["name"] for tier in league.tiers][-3:] == ["Obsidian", "Master", "Diamond"]
    assert league.cohort_size == 5

    # Last week, writers sent words with the official SDK: they joined the lowest tier in join
    # order, and the week's end promoted the top two of each cohort.
    client = make_client(org.admin_key)
    with time_machine.travel(timezone.now() - dt.timedelta(weeks=1)):
        for user, name, words in WRITERS:
            user_ = UpsertedUser(id=user, name=name, tz="UTC")
            client.metrics.event(key="words", user=user_, value=words)
    assert cohorts_finish(timezone.now()) == 2
    # This week, they write again (Bob, promoted, in Silver).
    for user, _name, words in WRITERS[:5]:
        client.metrics.event(key="words", user=UpsertedUser(id=user), value=words // 2)
    client.metrics.event(key="words", user=UpsertedUser(id="bob"), value=500)

    # This week's cohorts, ranked, with their zones.
    staff.go(f"/dashboard/leagues/league/{league.pk}/cohorts/")
    sections = staff.all("section.league-cohort")
    assert len(sections) == 2
    assert "Silver · cohort 1" in sections[0].text
    first = [row.text for row in sections[0].find_elements("css selector", "tbody tr")]
    assert first[0].startswith("1 bob"), first
    assert "690" in first[0]
    assert "promotion" in first[0]
    assert staff.no_horizontal_scroll()
    staff.shot("league-cohorts")

    # The league's page: the summary, the rows and this week in numbers.
    staff.go(f"/dashboard/leagues/league/{league.pk}/change/")
    assert "5" in staff.text(".league-week-tiers tfoot")
    staff.driver.execute_script("document.getElementById('tiers-group').scrollIntoView()")
    staff.shot("league-tiers", full_page=False)
    weeks = [row.text for row in staff.all(".league-weeks tbody tr")]
    assert len(weeks) == 2, weeks
    assert weeks[1].endswith("8 2 4 0 0 final"), weeks
    assert staff.no_horizontal_scroll()
    staff.shot("league-page")

    # A writer's league on their page.
    bob = EndUser.objects.get(external_id="bob")
    entry = LeagueEntry.objects.filter(user=bob).latest("week_start")
    staff.go(f"/dashboard/users/enduser/{bob.pk}/change/")
    card = staff.text("#user-leagues")
    assert "Silver\ntier this week" in card
    assert "#1" in card
    assert "promotion" in card
    assert "Bronze 380 2 promotion Silver" in card
    staff.driver.execute_script("document.getElementById('user-leagues').scrollIntoView()")
    assert staff.no_horizontal_scroll()
    staff.shot("user-league", full_page=False)
    staff.click("#user-leagues a[href*='cohort=']")
    assert len(staff.all("section.league-cohort")) == 1
    assert str(entry.cohort.public_id) in staff.driver.current_url
