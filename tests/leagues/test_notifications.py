"""The league notification types: league_result in each member's morning after the week's
end, league_at_risk at 17:00 local on the last day to members in a demotion zone; with the
same control group, preferences and unsubscribe rules as every type, and out of Trophy's
preferences body."""

import datetime as dt
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.leagues.models import LeagueCohort, LeagueEntry
from apps.metrics.models import Metric
from apps.notifications import jobs
from apps.notifications.services import notification_unsubscribe
from apps.pipeline.leagues import leagues_week_end
from apps.users.models import EndUser
from tests.leagues.test_weeks_and_cohorts import league_of
from tests.notifications.conftest import activate, committed, messages, outbox_to, send_event

pytestmark = pytest.mark.django_db

UTC = dt.UTC
MONDAY = dt.datetime(2026, 11, 23, 12, tzinfo=UTC)
WEEK_END = dt.datetime(2026, 11, 30, tzinfo=UTC)
TOKYO, NEW_YORK = "Asia/Tokyo", "America/New_York"


def week(api_client: Any, scores: dict[str, tuple[int, str]]) -> None:
    for minute, (user, (value, tz)) in enumerate(scores.items()):
        send_event(api_client, MONDAY + dt.timedelta(minutes=minute), user, value, tz=tz)


def dispatch(when: dt.datetime) -> None:
    with time_machine.travel(when, tick=False), committed():
        jobs.notifications_dispatch(when)


def test_the_result_goes_out_in_each_members_morning(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league_of(tenant, metric)
    activate(api_client, "league_result")
    week(api_client, {"ada": (9, TOKYO), "bob": (5, NEW_YORK), "cy": (1, NEW_YORK)})
    with time_machine.travel(WEEK_END, tick=False), committed():
        leagues_week_end(WEEK_END)
    sent = {m.user.external_id: m for m in messages(type="league_result")}
    # The week ends at 09:00 Monday in Tokyo (sent then) and 19:00 Sunday in New York.
    assert sent["ada"].send_at == WEEK_END
    assert sent["bob"].send_at == dt.datetime(2026, 11, 30, 14, tzinfo=UTC)  # 09:00 EST
    assert sent["ada"].payload["league"]["placement"] == 1
    assert sent["ada"].payload["league"]["newTier"] == "Silver"
    dispatch(WEEK_END)
    [email] = outbox_to("ada@example.com")
    assert email.subject == "You're moving up to Silver!"
    assert "You finished #1 of 3 in the Bronze Weekly with a score of 9." in email.body
    assert outbox_to("bob@example.com") == []
    dispatch(dt.datetime(2026, 11, 30, 14, 1, tzinfo=UTC))
    assert len(outbox_to("bob@example.com")) == 1
    with time_machine.travel(WEEK_END, tick=False), committed():
        assert leagues_week_end(WEEK_END) == (0, 0)
    assert len(messages(type="league_result")) == 3  # once


def test_members_in_the_demotion_zone_are_warned_on_the_last_day_at_17_local(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    # Silver: 2 up, 2 down; five members, so places 4 and 5 are at risk.
    league_of(tenant, metric)
    activate(api_client, "league_at_risk")
    week(
        api_client,
        {
            "a": (50, "UTC"),
            "b": (40, "UTC"),
            "c": (30, "UTC"),
            "d": (20, NEW_YORK),
            "e": (10, "UTC"),
        },
    )
    LeagueEntry.objects.update(tier=1)  # as if they had all been promoted last week
    LeagueCohort.objects.update(tier=1)

    def sweep(when: dt.datetime) -> None:
        with time_machine.travel(when, tick=False), committed():
            jobs.notifications_league_at_risk(when)

    sweep(dt.datetime(2026, 11, 29, 16, 55, tzinfo=UTC))  # before 17:00 in London: nobody
    assert messages(type="league_at_risk") == []
    sweep(dt.datetime(2026, 11, 29, 17, 5, tzinfo=UTC))
    assert [m.user.external_id for m in messages(type="league_at_risk")] == ["e"]
    # e climbs out, which puts c in the zone (told: past 17:00 in London); d's 17:00 in New
    # York (22:00 UTC) comes; e is not told again.
    send_event(api_client, dt.datetime(2026, 11, 29, 20, tzinfo=UTC), "e", 100)
    sweep(dt.datetime(2026, 11, 29, 22, 5, tzinfo=UTC))
    told = sorted(m.user.external_id for m in messages(type="league_at_risk"))
    assert told == ["c", "d", "e"]
    [message] = messages(type="league_at_risk", user__external_id="d")
    assert message.payload["league"]["rank"] == 5
    assert message.payload["league"]["hoursLeft"] == 1


def test_the_control_group_and_unsubscribed_users_get_nothing(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league_of(tenant, metric)
    activate(api_client, "league_result")
    week(api_client, {"ada": (9, "UTC"), "bob": (5, "UTC"), "cy": (1, "UTC")})
    EndUser.objects.filter(external_id="bob").update(control=True)
    notification_unsubscribe(EndUser.objects.get(external_id="cy"), "league_result")
    with time_machine.travel(WEEK_END, tick=False), committed():
        leagues_week_end(WEEK_END)
    assert [m.user.external_id for m in messages(type="league_result")] == ["ada"]


def test_trophys_preferences_body_never_shows_the_league_types(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    send_event(api_client, MONDAY, "ada", 1)
    notification_unsubscribe(EndUser.objects.get(external_id="ada"), "league_result")
    notification_unsubscribe(EndUser.objects.get(external_id="ada"), "recap")
    response = api_client.get("/v1/users/ada/preferences")
    assert response.status_code == 200, response.content
    assert response.json()["notifications"] == {"recap": ["push"]}


def test_a_tenant_gets_the_league_templates_once_it_has_a_league(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    def types() -> list[str]:
        listed = api_client.get("/admin/v1/email-templates", {"limit": 100}).json()
        return sorted(t["type"] for t in listed)

    assert "league_result" not in types()  # seeded without them
    league_of(tenant, metric)
    assert [t for t in types() if t.startswith("league")] == ["league_at_risk", "league_result"]
    pushed = api_client.get("/admin/v1/push-templates", {"limit": 100}).json()
    assert {"league_result", "league_at_risk"} <= {t["type"] for t in pushed}


def test_the_preferences_page_offers_the_league_types_once_the_tenant_has_a_league(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    from django.test import Client

    from apps.notifications.tokens import preferences_url

    user = EndUser.objects.create(tenant=tenant, external_id="u1", email="u1@example.com")
    user.notification_preferences = {"league_result": ["push"]}
    user.save()
    path = preferences_url(user).removeprefix("http://testserver")
    browser = Client()
    assert "League result" not in browser.get(path).content.decode()
    browser.post(path, {"recap": ["email"]})  # saved without the league rows: kept as it was
    user.refresh_from_db()
    assert user.notification_preferences["league_result"] == ["push"]

    league_of(tenant, metric)
    page = browser.get(path).content.decode()
    assert "League result" in page
    assert "League at risk" in page
    browser.post(path, {"league_result": ["email", "push"]})
    user.refresh_from_db()
    assert user.notification_preferences["league_result"] == ["email", "push"]
    assert user.notification_preferences["league_at_risk"] == []
