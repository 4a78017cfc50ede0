"""The league pages: a league is created, changed and deleted through the configuration service
the admin API uses, with its tiers and rewards as rows in their order; refusals are shown next
to their input (or above the rows they are about); a week's cohorts show their members ranked,
with live zones, and a finished week its results; the league page shows its weeks in numbers;
the end-user page shows the user's league; another tenant's league is out of reach."""

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
import time_machine
from django import forms
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.accounts.models import Tenant
from apps.achievements import configuration as achievements
from apps.achievements.domain import AchievementSettings
from apps.leagues.choices import ScoreBy, Status
from apps.leagues.configuration import league_create, league_update
from apps.leagues.domain import LeagueSettings
from apps.leagues.models import League, LeagueEntry
from apps.leagues.services import cohorts_finish
from apps.metrics.models import Metric
from apps.points import configuration as points
from apps.points.domain import PointsSystemSettings
from apps.users.choices import AttributeType
from apps.users.forms import AttributePairsField
from apps.users.models import EndUser
from tests.dashboard.conftest import admin_url, message_texts, org_staff, switch_tenant
from tests.factories import AttributeFactory, MetricFactory, bump

pytestmark = pytest.mark.django_db

MONDAY = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)  # a week ending Sunday 24:00 UTC
NEXT_WEEK = dt.datetime(2026, 11, 30, 0, 0, tzinfo=dt.UTC)
TIERS = [
    {"name": "Bronze", "promote": 2, "demote": 0},
    {"name": "Silver", "promote": 2, "demote": 2},
    {"name": "Gold", "promote": 0, "demote": 2},
]


@pytest.fixture(autouse=True)
def clock() -> Iterator[Any]:
    with time_machine.travel(MONDAY, tick=False) as traveller:
        yield traveller


@pytest.fixture
def chosen(staff_client: Client, tenant: Tenant) -> Client:
    """The staff client looking at `tenant` (the header's switcher)."""
    switch_tenant(staff_client, tenant)
    return staff_client


def league_of(tenant: Tenant, metric: Metric, **settings: Any) -> League:
    values: dict[str, Any] = {
        "name": "Weekly",
        "key": "weekly",
        "score_by": ScoreBy.METRIC,
        "metric_id": str(metric.public_id),
        "status": Status.ACTIVE,
        "cohort_size": 5,
        "tiers": TIERS,
    }
    values.update(settings)
    return league_create(tenant, LeagueSettings(**values))


def send(api_client: Any, user: str, value: Any) -> None:
    response = api_client.post("/v1/metrics/words/event", {"user": {"id": user}, "value": value})
    assert response.status_code == 201, response.content


def rows(prefix: str, items: list[dict[str, Any]], initial: int = 0) -> dict[str, Any]:
    """A list of rows as the page posts it (`initial` of them shown from the league)."""
    data: dict[str, Any] = {
        f"{prefix}-TOTAL_FORMS": str(len(items)),
        f"{prefix}-INITIAL_FORMS": str(initial),
    }
    for index, item in enumerate(items):
        for name, value in item.items():
            data[f"{prefix}-{index}-{name}"] = "" if value is None else str(value)
    return data


def league_form(metric: Metric, tiers: list[dict[str, Any]] | None = None, **changes: Any) -> dict:
    data: dict[str, Any] = {
        "name": "Weekly writers",
        "key": "weekly",
        "status": "inactive",
        "description": "",
        "score_by": "metric",
        "metric_id": str(metric.public_id),
        "points_system_id": "",
        "week_ends_on": "sunday",
        "week_ends_at": "24:00",
        "cohort_size": "30",
        "zone_unit": "count",
        "idle": "demote",
        "absent": "keep",
        "user_attributes-key": [],
        "user_attributes-value": [],
        **rows("tiers", TIERS if tiers is None else tiers),
        **rows("rewards", []),
    }
    data.update(changes)
    return data


def form_data(form: forms.BaseForm) -> dict[str, Any]:
    """The form's current values as a browser posts them (disabled inputs are not sent)."""
    data: dict[str, Any] = {}
    for field in form:
        if field.field.disabled:
            continue
        name, value = field.html_name, field.value()
        if isinstance(field.field, AttributePairsField):
            pairs = field.field.to_python(value or [])
            data[f"{name}-key"] = [key for key, _ in pairs]
            data[f"{name}-value"] = [v for _, v in pairs]
        elif isinstance(field.field, forms.BooleanField):
            if value:
                data[name] = "on"
        else:
            data[name] = "" if value is None else str(value)
    return data


class LeaguePage:
    """The league's page as loaded, and what the browser posts back from it."""

    def __init__(self, client: Client, league: League) -> None:
        self.client = client
        self.url = admin_url(League, "change", league.pk)
        response = client.get(self.url)
        assert response.status_code == 200
        form = response.context["form"]
        self.data = form_data(form)
        for formset in form.row_sets:
            self.data.update(form_data(formset.management_form))
            for row in formset.forms:
                self.data.update(form_data(row))

    def row(self, prefix: str, index: int, **changes: Any) -> None:
        for name, value in changes.items():
            self.data[f"{prefix}-{index}-{name}"] = str(value)

    def add(self, prefix: str, **fields: Any) -> None:
        index = int(self.data[f"{prefix}-TOTAL_FORMS"])
        self.data[f"{prefix}-TOTAL_FORMS"] = str(index + 1)
        self.row(prefix, index, **fields)

    def post(self, **main: Any) -> Any:
        return self.client.post(self.url, {**self.data, **main})


def saved(response: Any) -> None:
    if response.status_code != 302:
        form = response.context["form"]
        found = [form.errors, *((r.refusals, r.errors, r.non_form_errors()) for r in form.row_sets)]
        pytest.fail(f"not saved: {found}")


def refusals(response: Any, prefix: str) -> str:
    assert response.status_code == 200
    form = response.context["form"]
    shown = {"tiers": form.tier_rows, "rewards": form.reward_rows}[prefix]
    return " ".join([*shown.refusals, *shown.non_form_errors()])


# The league's page


def test_league_pages_render(chosen: Client, tenant: Tenant, metric: Metric) -> None:
    league = league_of(tenant, metric)
    for view in ("changelist", "add"):
        assert chosen.get(admin_url(League, view)).status_code == 200
    for view in ("change", "cohorts", "delete", "history"):
        # The history page is the configuration's change history, filtered to the league.
        page = chosen.get(admin_url(League, view, league.pk), follow=True)
        assert page.status_code == 200, view
    listed = chosen.get(admin_url(League)).content.decode()
    assert "Weekly" in listed
    assert admin_url(League, "cohorts", league.pk) in listed


def test_the_add_page_starts_with_ten_tiers_bronze_to_diamond(chosen: Client) -> None:
    response = chosen.get(admin_url(League, "add"))
    tiers = response.context["form"].tier_rows
    names = [row.initial["name"] for row in tiers.forms]
    assert names[0] == "Bronze"
    assert names[-1] == "Diamond"
    assert len(names) == 10
    content = response.content.decode()
    assert 'id="tiers-group"' in content
    assert 'id="rewards-group"' in content


def test_a_league_is_created_with_its_tiers_in_their_order(
    chosen: Client, tenant: Tenant, metric: Metric
) -> None:
    tiers = [
        {"name": "Wood", "promote": 3, "demote": 0},
        {"name": "Stone", "promote": 3, "demote": 3},
        {"name": "Iron", "promote": 2, "demote": 3},
        {"name": "Crown", "promote": 0, "demote": 4},
    ]
    response = chosen.post(admin_url(League, "add"), league_form(metric, tiers, cohort_size="20"))
    saved(response)
    league = League.objects.get(tenant=tenant, key="weekly")
    assert league.tiers == tiers
    assert (league.name, league.metric, league.cohort_size) == ("Weekly writers", metric, 20)
    assert league.week_ends_at == 1440
    assert "was added successfully" in " ".join(message_texts(response))


def test_tier_rows_are_renamed_deleted_and_added_in_their_order(
    chosen: Client, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric, status=Status.INACTIVE)
    page = LeaguePage(chosen, league)
    page.row("tiers", 0, name="Copper")
    page.row("tiers", 1, DELETE="on")
    page.add("tiers", name="Platinum", promote=0, demote=1)
    page.row("tiers", 2, promote=3)  # Gold is no longer the top tier
    saved(page.post())
    league.refresh_from_db()
    assert league.tiers == [
        {"name": "Copper", "promote": 2, "demote": 0},
        {"name": "Gold", "promote": 3, "demote": 2},
        {"name": "Platinum", "promote": 0, "demote": 1},
    ]
    entry = LogEntry.objects.get(object_id=str(league.pk))
    assert "Tiers" in entry.get_change_message()


def test_participation_filters_are_rows_of_attribute_and_value(
    chosen: Client, tenant: Tenant, metric: Metric
) -> None:
    plan = AttributeFactory(tenant=tenant, key="plan", type=AttributeType.USER)
    bump(tenant)
    data = league_form(
        metric, **{"user_attributes-key": ["plan"], "user_attributes-value": ["pro"]}
    )
    saved(chosen.post(admin_url(League, "add"), data))
    league = League.objects.get(tenant=tenant)
    assert league.user_attributes == [{"attributeId": str(plan.public_id), "attributeValue": "pro"}]
    page = chosen.get(admin_url(League, "change", league.pk))
    assert page.context["form"]["user_attributes"].value() == [("plan", "pro")]
    assert ("Takes part", "End-users with plan = pro") in page.context["summary"]


def test_an_archived_league_keeps_its_pages_and_history(
    chosen: Client, api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric)
    send(api_client, "alice", 3)
    page = LeaguePage(chosen, league)
    saved(page.post(status="archived"))
    league.refresh_from_db()
    assert league.status == Status.ARCHIVED
    shown = cohorts(chosen, league)
    assert [r.user_id for r in shown.context["cohorts"][0].rows] == ["alice"]
    assert "This league is archived" in shown.content.decode()
    content = chosen.get(admin_url(League, "change", league.pk)).content.decode()
    assert "Archived" in content


def test_saving_an_unchanged_page_writes_nothing(
    chosen: Client, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric)
    version = Tenant.objects.get(pk=tenant.pk).config_version
    saved(LeaguePage(chosen, league).post())
    assert Tenant.objects.get(pk=tenant.pk).config_version == version
    assert not LogEntry.objects.exists()


def test_a_refusal_of_the_service_is_shown_next_to_its_input(
    chosen: Client, tenant: Tenant, metric: Metric
) -> None:
    league_of(tenant, metric, key="taken")
    response = chosen.post(admin_url(League, "add"), league_form(metric, key="taken"))
    assert response.status_code == 200
    form = response.context["form"]
    assert form.errors["key"] == ["Key already in use by another league"]
    assert form["key"].value() == "taken"  # what was typed is kept
    assert League.objects.filter(tenant=tenant).count() == 1


def test_an_active_league_keeps_its_week_and_says_so_next_to_the_input(
    chosen: Client, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric)
    page = LeaguePage(chosen, league)
    response = page.post(week_ends_on="friday")
    assert response.context["form"].errors["week_ends_on"] == [
        "“Week ends on” can only change while the league is inactive"
    ]
    assert "Please correct the error below." in response.content.decode()
    league.refresh_from_db()
    assert league.week_ends_on == "sunday"


def test_the_week_end_must_be_a_time_of_day(chosen: Client, metric: Metric) -> None:
    response = chosen.post(admin_url(League, "add"), league_form(metric, week_ends_at="25:00"))
    assert response.context["form"].errors["week_ends_at"] == [
        "“Week ends at” must be from 00:00 to 24:00"
    ]


def test_a_league_scored_by_points_needs_its_system_next_to_its_input(
    chosen: Client, metric: Metric
) -> None:
    response = chosen.post(admin_url(League, "add"), league_form(metric, score_by="points"))
    assert response.context["form"].errors["points_system_id"] == [
        "“Points system” is required to score by points"
    ]


def test_tier_rules_are_shown_above_the_tier_rows(
    chosen: Client, tenant: Tenant, metric: Metric
) -> None:
    tiers = [
        {"name": "Bronze", "promote": 2, "demote": 0},
        {"name": "Gold", "promote": 1, "demote": 2},
    ]
    response = chosen.post(admin_url(League, "add"), league_form(metric, tiers))
    assert "The top tier promotes nobody and the lowest demotes nobody" in refusals(
        response, "tiers"
    )
    assert "Please correct the errors below." in response.content.decode()
    same = [
        {"name": "Gold", "promote": 1, "demote": 0},
        {"name": "Gold", "promote": 0, "demote": 1},
    ]
    response = chosen.post(admin_url(League, "add"), league_form(metric, same))
    assert "Tier names must differ" in refusals(response, "tiers")
    assert not League.objects.exists()


def test_an_active_league_keeps_its_number_of_tiers(
    chosen: Client, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric)
    page = LeaguePage(chosen, league)
    page.row("tiers", 2, promote=1)
    page.add("tiers", name="Diamond", promote=0, demote=1)
    response = page.post()
    assert "The number of tiers can only change while the league is inactive" in refusals(
        response, "tiers"
    )
    league.refresh_from_db()
    assert league.tiers == TIERS


def test_a_tier_row_needs_a_name_and_counts_in_range(chosen: Client, metric: Metric) -> None:
    tiers = [{"name": "", "promote": 2, "demote": 0}, {"name": "Gold", "promote": 0, "demote": 101}]
    response = chosen.post(admin_url(League, "add"), league_form(metric, tiers))
    errors = response.context["form"].tier_rows.errors
    assert errors[0] == {"name": ["This field is required."]}
    assert errors[1] == {"demote": ["Ensure this value is less than or equal to 100."]}


def test_reward_rows_are_stored_as_the_service_takes_them(
    chosen: Client, tenant: Tenant, metric: Metric
) -> None:
    system, _ = points.points_system_create(tenant, PointsSystemSettings(key="xp", name="XP"))
    medal = achievements.achievement_create(
        tenant, AchievementSettings(name="Podium", key="podium", trigger="api", status="active")
    )
    data = league_form(metric)
    data.update(
        rows(
            "rewards",
            [
                {
                    "from_place": 1,
                    "to_place": 3,
                    "tier": "",
                    "points": 50,
                    "points_system_id": system.public_id,
                    "achievement_id": "",
                },
                {
                    "from_place": 1,
                    "to_place": "",
                    "tier": "Gold",
                    "points": "",
                    "points_system_id": "",
                    "achievement_id": medal.public_id,
                },
            ],
        )
    )
    saved(chosen.post(admin_url(League, "add"), data))
    league = League.objects.get(tenant=tenant)
    assert league.rewards == [
        {
            "from_place": 1,
            "to_place": 3,
            "tier": None,
            "points": 50,
            "points_system_id": str(system.public_id),
            "achievement_id": None,
        },
        {
            "from_place": 1,
            "to_place": 1,
            "tier": "Gold",
            "points": 0,
            "points_system_id": None,
            "achievement_id": str(medal.public_id),
        },
    ]
    # Shown again as rows, with their choices.
    page = chosen.get(admin_url(League, "change", league.pk))
    shown = page.context["form"].reward_rows.forms
    assert [row["tier"].value() for row in shown] == [None, "Gold"]
    assert shown[0]["points_system_id"].value() == str(system.public_id)


def test_a_refused_reward_is_shown_above_the_reward_rows(
    chosen: Client, tenant: Tenant, metric: Metric
) -> None:
    data = league_form(metric)
    reward = {
        "from_place": 1,
        "to_place": 1,
        "tier": "",
        "points": "",
        "points_system_id": "",
        "achievement_id": "",
    }
    data.update(rows("rewards", [reward]))
    response = chosen.post(admin_url(League, "add"), data)
    assert "A reward pays points or completes an achievement" in refusals(response, "rewards")
    assert not League.objects.exists()


def test_choices_are_the_selected_tenants(
    chosen: Client, tenant: Tenant, other_tenant: Tenant, metric: Metric
) -> None:
    MetricFactory(tenant=other_tenant, key="theirs")
    points.points_system_create(other_tenant, PointsSystemSettings(key="their-xp", name="Theirs"))
    bump(other_tenant)
    form = chosen.get(admin_url(League, "add")).context["form"]
    assert list(form.fields["metric_id"].queryset) == [metric]
    assert not form.fields["points_system_id"].queryset.exists()
    assert form.reward_rows.choices.systems == []
    theirs = Metric.objects.get(key="theirs")
    response = chosen.post(admin_url(League, "add"), league_form(theirs))
    assert response.context["form"].errors["metric_id"] == ["Choose a metric of this tenant."]


def test_viewers_see_the_league_and_its_rows_disabled(
    org: Any, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric)
    viewer = org_staff(org, username="viewer")
    viewer.user_permissions.add(Permission.objects.get(codename="view_league"))
    client = Client()
    client.force_login(viewer)
    url = admin_url(League, "change", league.pk)

    response = client.get(url)

    assert response.status_code == 200
    form = response.context["form"]
    assert all(field.disabled for field in form.fields.values())
    for rows in form.row_sets:
        assert all(f.disabled for row in rows.forms for f in row.fields.values())
    content = response.content.decode()
    assert 'name="_save"' not in content
    assert "js-inline-admin-formset" not in content
    assert "data-move" not in content
    assert client.get(admin_url(League, "cohorts", league.pk)).status_code == 200
    assert client.post(url, {"name": "Mine"}).status_code == 403


def test_the_league_page_costs_the_same_whatever_its_rows_and_weeks(
    chosen: Client, api_client: Any, clock: Any, tenant: Tenant, metric: Metric
) -> None:
    system, _ = points.points_system_create(tenant, PointsSystemSettings(key="xp", name="XP"))
    league = league_of(tenant, metric, status=Status.INACTIVE)
    url = admin_url(League, "change", league.pk)
    chosen.get(url)
    few = count_queries(chosen, url)
    reward = {
        "from_place": 1,
        "to_place": 1,
        "points": 5,
        "points_system_id": str(system.public_id),
    }
    league_update(
        tenant,
        league,
        LeagueSettings(
            tiers=[
                {"name": f"T{i}", "promote": 0 if i == 9 else 1, "demote": 1 if i else 0}
                for i in range(10)
            ],
            rewards=[{**reward, "from_place": i, "to_place": i} for i in range(1, 9)],
        ),
    )
    league_update(tenant, league, LeagueSettings(status=Status.ACTIVE))
    for week in range(3):
        clock.move_to(MONDAY + dt.timedelta(weeks=week))
        for i in range(7):
            send(api_client, f"u{i}", i + 1)
        cohorts_finish(MONDAY + dt.timedelta(weeks=week + 1))
    clock.move_to(MONDAY)  # where the staff member's session is still young
    chosen.get(url)  # the configuration changed: the cached definitions reload once
    assert count_queries(chosen, url) == few


def test_switching_tenant_on_a_cohorts_page_goes_to_the_list(
    chosen: Client, tenant: Tenant, other_tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric)
    page = admin_url(League, "cohorts", league.pk)
    response = chosen.post(
        reverse("admin:tenant-switch"), {"tenant": other_tenant.pk, "next": page}
    )
    assert response.status_code == 302
    assert response["Location"] == admin_url(League)


# Deleting


def test_a_league_nobody_took_part_in_is_deleted(
    chosen: Client, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric, status=Status.INACTIVE)
    page = chosen.get(admin_url(League, "delete", league.pk)).content.decode()
    assert 'name="post" value="yes"' in page  # the confirmation's button
    response = chosen.post(admin_url(League, "delete", league.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not League.objects.exists()


def test_a_league_with_history_cannot_be_deleted_and_the_page_says_why(
    chosen: Client, api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric)
    send(api_client, "alice", 3)
    page = chosen.get(admin_url(League, "delete", league.pk)).content.decode()
    assert "cannot be deleted" in page
    assert "Archive it instead" in page
    assert 'name="post"' not in page  # no button to confirm
    response = chosen.post(admin_url(League, "delete", league.pk), {"post": "yes"})
    assert response.status_code == 302
    assert message_texts(response) == ["A league with history cannot be deleted: archive it"]
    assert League.objects.filter(pk=league.pk).exists()


# This week's cohorts


def cohorts(client: Client, league: League, **params: Any) -> Any:
    response = client.get(admin_url(League, "cohorts", league.pk), params)
    assert response.status_code == 200
    return response


def test_this_weeks_cohorts_show_members_ranked_with_live_zones(
    chosen: Client, api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric)
    for i, value in enumerate([10, 50, 30, 40, 20, 5, 7]):
        send(api_client, f"u{i}", value)
    response = cohorts(chosen, league)
    context = response.context
    assert context["is_current"]
    bronze = {row.name: row for row in context["tiers"]}["Bronze"]
    assert (bronze.members, bronze.cohorts, bronze.open) == (7, 2, 1)
    first, second = context["cohorts"]
    assert (first.tier, first.number, first.members, first.open) == ("Bronze", 1, 5, False)
    assert [(r.rank, r.user_id, r.score, r.zone) for r in first.rows] == [
        (1, "u1", "50", "promotion"),
        (2, "u3", "40", "promotion"),
        (3, "u2", "30", "safe"),
        (4, "u4", "20", "safe"),
        (5, "u0", "10", "safe"),
    ]
    assert [r.user_id for r in second.rows] == ["u6", "u5"]
    content = response.content.decode()
    assert "Bronze · cohort 1" in content
    assert admin_url(EndUser, "change", EndUser.objects.get(external_id="u1").pk) in content


def test_a_cohort_and_a_tier_are_shown_alone(
    chosen: Client, api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric)
    for i in range(7):
        send(api_client, f"u{i}", i + 1)
    entry = LeagueEntry.objects.get(user__external_id="u6")
    shown = cohorts(chosen, league, cohort=str(entry.cohort.public_id)).context["cohorts"]
    assert [c.number for c in shown] == [2]
    assert cohorts(chosen, league, tier=2).context["cohorts"] == []
    assert len(cohorts(chosen, league, tier=0).context["cohorts"]) == 2
    # Nonsense parameters show this week, every tier.
    assert len(cohorts(chosen, league, tier="x", week="soon", page="z").context["cohorts"]) == 2
    for week in ("9999-12-31T23:59Z", "0001-01-01", "2026-11-24T00:00+25:00"):
        assert cohorts(chosen, league, week=week).context["is_current"], week


def test_a_finished_week_shows_its_results_and_the_league_page_counts_them(
    chosen: Client, api_client: Any, clock: Any, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric)
    for i, value in enumerate([50, 40, 30, 20, 0]):
        send(api_client, f"u{i}", value)
    assert cohorts_finish(NEXT_WEEK) == 1
    clock.move_to(NEXT_WEEK + dt.timedelta(hours=1))
    send(api_client, "u0", 1)
    send(api_client, "u9", 1)

    last_week = cohorts(chosen, league, week="2026-11-24T00:00Z").context
    assert not last_week["is_current"]
    (cohort,) = last_week["cohorts"]
    assert cohort.finished
    assert [(r.rank, r.user_id, r.zone, r.next_tier) for r in cohort.rows] == [
        (1, "u0", "promotion", "Silver"),
        (2, "u1", "promotion", "Silver"),
        (3, "u2", "safe", "Bronze"),
        (4, "u3", "safe", "Bronze"),
        (5, "u4", "safe", "Bronze"),
    ]
    this_week = cohorts(chosen, league).context
    assert {row.name: row.members for row in this_week["tiers"]} == {
        "Gold": 0,
        "Silver": 1,
        "Bronze": 1,
    }

    page = chosen.get(admin_url(League, "change", league.pk)).context
    counted = [(w.members, w.cohorts, w.promoted, w.demoted, w.left) for w, _, _ in page["weeks"]]
    assert counted == [(2, 2, 0, 0, 0), (5, 1, 2, 0, 0)]
    assert page["this_week_tiers"] == [("Gold", 0), ("Silver", 1), ("Bronze", 1)]


def count_queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_the_cohorts_page_costs_the_same_whatever_the_number_of_cohorts(
    chosen: Client, api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric)
    url = admin_url(League, "cohorts", league.pk)
    send(api_client, "first", 1)
    chosen.get(url)
    few = count_queries(chosen, url)
    for i in range(40):
        send(api_client, f"u{i}", i)
    assert count_queries(chosen, url) == few
    assert len(cohorts(chosen, league).context["cohorts"]) == 9  # 41 users, 5 a cohort: 9


# The end-user page


def test_the_user_page_shows_the_users_league(
    chosen: Client, api_client: Any, clock: Any, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric)
    for i, value in enumerate([50, 40, 30, 20, 10]):
        send(api_client, f"u{i}", value)
    cohorts_finish(NEXT_WEEK)
    clock.move_to(NEXT_WEEK + dt.timedelta(hours=1))
    send(api_client, "u1", 7)
    send(api_client, "u0", 3)

    user = EndUser.objects.get(external_id="u0")
    response = chosen.get(admin_url(EndUser, "change", user.pk))
    content = response.content.decode()
    assert 'id="user-leagues"' in content
    card = content.split('id="user-leagues"')[1].split("</section>")[0]
    assert "Silver" in card  # promoted last week
    assert "#2" in card  # u1 scored more this week
    assert (
        f"?cohort={LeagueEntry.objects.get(user=user, week_start=NEXT_WEEK).cohort.public_id}"
        in card
    )
    assert "promotion" in card
    assert admin_url(League, "change", league.pk) in card


def test_the_user_page_has_no_leagues_card_without_leagues(chosen: Client, tenant: Tenant) -> None:
    user = EndUser.objects.create(tenant=tenant, external_id="solo")
    content = chosen.get(admin_url(EndUser, "change", user.pk)).content.decode()
    assert 'id="user-leagues"' not in content


# Scope


def test_another_tenants_league_is_not_found(
    chosen: Client, other_tenant: Tenant, metric: Metric
) -> None:
    theirs_metric = MetricFactory(tenant=other_tenant, key="words")
    bump(other_tenant)
    theirs = league_of(other_tenant, theirs_metric)
    for view in ("change", "cohorts", "delete"):
        assert chosen.get(admin_url(League, view, theirs.pk)).status_code == 404, view
    assert "Weekly" not in chosen.get(admin_url(League)).content.decode()
    response = chosen.post(admin_url(League, "change", theirs.pk), league_form(theirs_metric))
    assert response.status_code == 404
