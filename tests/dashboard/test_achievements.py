"""Achievements in the dashboard: written through the admin API's services (what the dashboard
stores is what the admin API would store), every kind on one page, completions
and backdating on the change page, delete confirmations that count what goes, tenant scoping."""

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.achievements import configuration, services
from apps.achievements.domain import AchievementSettings
from apps.achievements.models import Achievement, AchievementCompletion
from apps.achievements.selectors import achievement_backdate_progress
from apps.metrics.models import Metric, MetricTotal
from apps.points.models import PointsSystem, PointsTrigger
from apps.streaks.models import StreakSettings
from apps.users.choices import AttributeType
from apps.users.models import Attribute, EndUser
from tests.dashboard.conftest import admin_url, message_texts, org_staff
from tests.factories import (
    AttributeFactory,
    EndUserFactory,
    MetricFactory,
    OrganizationWithKey,
    bump,
)

ADMIN_API = "/admin/v1/achievements"


def version_of(tenant: Tenant) -> int:
    return Tenant.objects.get(pk=tenant.pk).config_version


@pytest.fixture
def plan(tenant: Tenant) -> Attribute:
    attribute = AttributeFactory(tenant=tenant, key="plan", type=AttributeType.USER)
    bump(tenant)
    return attribute


@pytest.fixture
def source(tenant: Tenant) -> Attribute:
    attribute = AttributeFactory(tenant=tenant, key="source", type=AttributeType.EVENT)
    bump(tenant)
    return attribute


def save(tenant: Tenant, **data: Any) -> Achievement:
    """An achievement made by the admin API's service, inactive unless told otherwise."""
    return configuration.achievement_create(
        tenant, AchievementSettings(**{"status": "inactive", **data})
    )


def metric_achievement(
    tenant: Tenant, metric: Metric, value: int = 1000, **data: Any
) -> Achievement:
    data.setdefault("name", "Novelist")
    return save(
        tenant, trigger="metric", metric_id=str(metric.public_id), metric_value=value, **data
    )


def complete(achievement: Achievement, user: EndUser, backdated: bool = False) -> None:
    AchievementCompletion.objects.create(
        tenant=achievement.tenant,
        achievement=achievement,
        user=user,
        completed_at=timezone.now(),
        backdated=backdated,
    )


def form_data(kind: str = "metric", /, **changes: Any) -> dict[str, Any]:
    """The add/change form as a browser posts it: every kind's inputs, empty unless set."""
    data: dict[str, Any] = {
        "trigger": kind,
        "name": "Novelist",
        "description": "",
        "status": "inactive",
        "badge_url": "",
        "key": "",
        "metric_id": "",
        "metric_value": "",
        "streak_length": "",
        "anniversary_years": "",
        "achievement_ids": [],
    }
    for name in ("user_attributes", "event_attributes"):
        rows = changes.pop(name, [])
        for index, (attribute, value) in enumerate([*rows, ("", "")]):
            data[f"{name}-{index}-attribute"] = attribute
            data[f"{name}-{index}-value"] = value
    data.update(changes)
    return data


def stored_by_api(api_client: Any, achievement_id: Any) -> dict[str, Any]:
    response = api_client.get(f"{ADMIN_API}/{achievement_id}")
    assert response.status_code == 200, response.content
    body = response.json()
    del body["id"]
    return body


def assert_refused(response: Any, field: str | None, message: str) -> None:
    assert response.status_code == 200
    form = response.context["form"]
    errors = form.non_field_errors() if field is None else form.errors.get(field, [])
    assert message in " ".join(errors), form.errors.as_data()


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


# Pages


def test_achievement_pages_render(
    staff_client: Client, tenant: Tenant, metric: Metric, plan: Attribute
) -> None:
    achievement = metric_achievement(tenant, metric, status="active")
    alice = EndUserFactory(tenant=tenant, external_id="alice")
    complete(achievement, alice)
    completion = AchievementCompletion.objects.get()

    for url in (
        admin_url(Achievement),
        admin_url(Achievement, "add"),
        admin_url(Achievement, "change", achievement.pk),
        admin_url(Achievement, "delete", achievement.pk),
        admin_url(AchievementCompletion),
        admin_url(AchievementCompletion, "change", completion.pk),
    ):
        assert staff_client.get(url).status_code == 200, url
    index = staff_client.get("/dashboard/").content.decode()
    assert admin_url(Achievement) in index
    assert admin_url(AchievementCompletion) in index


def test_the_list_shows_kind_status_badge_completions_and_rarity(
    staff_client: Client, tenant: Tenant, metric: Metric
) -> None:
    novelist = metric_achievement(
        tenant, metric, status="active", badge_url="https://cdn.example/novelist.png"
    )
    save(tenant, name="Share", trigger="api", key="share", status="locked")
    save(tenant, name="Week", trigger="streak", streak_length=7)
    save(tenant, name="Birthday", trigger="anniversary", anniversary_years=2)
    save(
        tenant, name="Everything", trigger="achievement", achievement_ids=[str(novelist.public_id)]
    )
    users = EndUserFactory.create_batch(4, tenant=tenant)
    complete(novelist, users[0])

    response = staff_client.get(admin_url(Achievement))

    rows = {a.name: a for a in response.context["cl"].result_list}
    assert rows["Novelist"].completion_count == 1
    assert rows["Share"].completion_count == 0
    page = response.content.decode()
    assert '<img class="achievement-thumb" src="https://cdn.example/novelist.png"' in page
    for text in (
        "Words ≥ 1000",
        "<code>share</code>",
        "7 days in a row",
        "2 years after sign-up",
        "all of 1 achievement",
        "25.0%",
        ">Locked<",
        ">Active<",
        ">Inactive<",
    ):
        assert text in page, text


def test_the_list_queries_do_not_grow_with_rows(
    staff_client: Client, tenant: Tenant, metric: Metric
) -> None:
    first = metric_achievement(tenant, metric)
    complete(first, EndUserFactory(tenant=tenant))
    url = admin_url(Achievement)
    staff_client.get(url)  # warm per-process caches (content types, session, configuration)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    for i in range(6):
        other = MetricFactory(tenant=tenant)
        achievement = metric_achievement(tenant, other, name=f"A{i}", status="active")
        save(tenant, name=f"S{i}", trigger="streak", streak_length=i + 1)
        save(tenant, name=f"C{i}", trigger="achievement", achievement_ids=[str(first.public_id)])
        complete(achievement, EndUserFactory(tenant=tenant))
    with CaptureQueriesContext(connection) as many:
        response = staff_client.get(url)
    assert len(response.context["cl"].result_list) == 19
    # The list reads configuration once per version: the new rows changed the version, so the
    # second page may load the streak settings once more, never once per row.
    assert len(many) <= len(few) + 1, [q["sql"][:200] for q in many.captured_queries]


# Creating and editing through the service


KIND_CASES = {
    "metric": (
        {"metric_value": "250", "event_attributes": "source"},
        {"metricValue": 250, "eventAttributes": "source"},
    ),
    "streak": ({"streak_length": "30"}, {"streakLength": 30}),
    "api": ({"key": "shared-a-story"}, {"key": "shared-a-story"}),
    "anniversary": ({"anniversary_years": "1"}, {"anniversaryYears": 1}),
    "achievement": ({"achievement_ids": "both"}, {"achievementIds": "both"}),
}


@pytest.mark.parametrize("kind", list(KIND_CASES))
def test_each_kind_is_stored_as_the_admin_api_stores_it(
    staff_client: Client,
    api_client: Any,
    tenant: Tenant,
    metric: Metric,
    plan: Attribute,
    source: Attribute,
    kind: str,
) -> None:
    first = save(tenant, name="First", trigger="api", key="first")
    second = save(tenant, name="Second", trigger="streak", streak_length=3)
    fields, body = KIND_CASES[kind]
    fields, body = dict(fields), dict(body)
    if kind == "metric":
        fields.update(metric_id=metric.pk, event_attributes=[(str(source.public_id), "web")])
        body.update(
            metricId=str(metric.public_id),
            eventAttributes=[{"attributeId": str(source.public_id), "attributeValue": "web"}],
        )
    if kind == "achievement":
        fields["achievement_ids"] = [first.pk, second.pk]
        body["achievementIds"] = sorted([str(first.public_id), str(second.public_id)])
    badge = "https://cdn.example/badge.png"
    version = version_of(tenant)

    response = staff_client.post(
        admin_url(Achievement, "add"),
        form_data(
            kind,
            tenant=tenant.pk,
            name="Milestone",
            description="A milestone",
            badge_url=badge,
            user_attributes=[(str(plan.public_id), "pro")],
            **fields,
        ),
    )

    assert response.status_code == 302, response.context["form"].errors
    assert version_of(tenant) > version
    created = Achievement.objects.get(name="Milestone")
    assert created.tenant == tenant
    by_dashboard = stored_by_api(api_client, created.public_id)
    if kind == "achievement":
        by_dashboard["achievementIds"].sort()
    item = {
        "name": "Milestone",
        "description": "A milestone",
        "trigger": kind,
        "status": "inactive",
        "badge": {"url": badge},
        "userAttributes": [{"attributeId": str(plan.public_id), "attributeValue": "pro"}],
        **body,
    }
    assert by_dashboard == item
    # The same item sent to the admin API stores the same achievement.
    configuration.achievement_delete(tenant, created)
    posted = api_client.post(ADMIN_API, [item])
    assert posted.status_code == 201, posted.content
    by_api = stored_by_api(api_client, posted.json()["created"][0]["id"])
    if kind == "achievement":
        by_api["achievementIds"].sort()
    assert by_api == by_dashboard


def test_only_the_chosen_kinds_settings_are_saved(
    staff_client: Client, tenant: Tenant, metric: Metric
) -> None:
    # Without JavaScript every kind's inputs are on the page; a left-over value is not saved.
    response = staff_client.post(
        admin_url(Achievement, "add"),
        form_data(
            "streak", tenant=tenant.pk, streak_length="7", metric_id=metric.pk, metric_value="5"
        ),
    )

    assert response.status_code == 302, response.context["form"].errors
    stored = Achievement.objects.get()
    assert (stored.trigger, stored.streak_length) == ("streak", 7)
    assert (stored.metric, stored.metric_value, stored.key) == (None, None, None)


def test_a_mistake_in_another_kinds_input_does_not_block_the_save(
    staff_client: Client, tenant: Tenant
) -> None:
    # Hidden by the page's script once another kind is chosen, so staff could not correct it.
    response = staff_client.post(
        admin_url(Achievement, "add"),
        form_data("streak", tenant=tenant.pk, streak_length="7", metric_value="0", key="no spaces"),
    )

    assert response.status_code == 302, response.context["form"].errors
    stored = Achievement.objects.get()
    assert (stored.trigger, stored.streak_length, stored.metric_value, stored.key) == (
        "streak",
        7,
        None,
        None,
    )


def test_the_add_page_offers_the_selected_tenants_choices(
    staff_client: Client,
    tenant: Tenant,
    other_tenant: Tenant,
    metric: Metric,
    plan: Attribute,
) -> None:
    save(tenant, name="Mine", trigger="streak", streak_length=3)
    save(other_tenant, name="Theirs", trigger="streak", streak_length=3)
    foreign_metric = MetricFactory(tenant=other_tenant, key="steps", name="Steps")
    AttributeFactory(tenant=other_tenant, key="tier", type=AttributeType.USER)

    page = staff_client.get(admin_url(Achievement, "add"))

    form = page.context["form"]
    assert list(form.fields["metric_id"].queryset) == [metric]
    assert [a.name for a in form.fields["achievement_ids"].queryset] == ["Mine"]
    html = page.content.decode()
    # The tenant is the one selected in the header: the form has no input for it.
    assert 'type="hidden" name="tenant"' not in html
    assert f'<option value="{plan.public_id}">plan</option>' in html
    assert "tier" not in html
    assert foreign_metric.name not in html
    # The kind comes first, and the page knows which settings belong to which kind.
    assert html.index('name="trigger"') < html.index('name="name"')
    assert 'id="achievement-kind-fields"' in html
    assert "achievements/achievement-form.js" in html


def test_the_change_page_shows_the_achievement_as_stored(
    staff_client: Client, tenant: Tenant, metric: Metric, plan: Attribute, source: Attribute
) -> None:
    achievement = metric_achievement(
        tenant,
        metric,
        badge_url="https://cdn.example/novelist.png",
        user_attributes=[{"attributeId": str(plan.public_id), "attributeValue": "pro"}],
        event_attributes=[{"attributeId": str(source.public_id), "attributeValue": "web"}],
    )

    page = staff_client.get(admin_url(Achievement, "change", achievement.pk))

    initial = page.context["form"].initial
    assert (initial["trigger"], initial["metric_id"], initial["metric_value"]) == (
        "metric",
        metric.pk,
        "1000",
    )
    assert initial["user_attributes"] == [(str(plan.public_id), "pro")]
    html = page.content.decode()
    assert f'<option value="{plan.public_id}" selected>plan</option>' in html
    assert 'name="user_attributes-0-value" value="pro"' in html
    assert 'name="event_attributes-0-value" value="web"' in html
    assert '<img src="https://cdn.example/novelist.png" alt="Badge preview">' in html


def test_editing_sends_the_service_only_what_changed(
    staff_client: Client,
    tenant: Tenant,
    metric: Metric,
    django_capture_on_commit_callbacks: Any,
) -> None:
    achievement = metric_achievement(tenant, metric, status="active")
    url = admin_url(Achievement, "change", achievement.pk)
    stored = {"status": "active", "metric_id": metric.pk, "metric_value": "1000"}

    # A new description is no reason to backdate the achievement again.
    with django_capture_on_commit_callbacks() as callbacks:
        response = staff_client.post(url, form_data("metric", description="Write!", **stored))
    assert response.status_code == 302, response.context["form"].errors
    assert callbacks == []
    achievement.refresh_from_db()
    assert achievement.description == "Write!"

    # A new threshold is: users who reach it now complete it (backdating, after commit).
    with django_capture_on_commit_callbacks() as callbacks:
        response = staff_client.post(url, form_data("metric", **{**stored, "metric_value": "500"}))
    assert response.status_code == 302, response.context["form"].errors
    assert len(callbacks) == 1
    achievement.refresh_from_db()
    assert achievement.metric_value == 500


def test_changing_the_kind_replaces_the_settings(
    staff_client: Client, tenant: Tenant, metric: Metric
) -> None:
    achievement = metric_achievement(tenant, metric)

    response = staff_client.post(
        admin_url(Achievement, "change", achievement.pk),
        form_data("api", key="shared", metric_id=metric.pk, metric_value="1000"),
    )

    assert response.status_code == 302, response.context["form"].errors
    achievement.refresh_from_db()
    assert (achievement.trigger, achievement.key) == ("api", "shared")
    assert (achievement.metric, achievement.metric_value) == (None, None)


def test_activating_backdates_through_the_service(
    staff_client: Client,
    tenant: Tenant,
    metric: Metric,
    django_capture_on_commit_callbacks: Any,
) -> None:
    achievement = metric_achievement(tenant, metric, value=10)
    writer = EndUserFactory(tenant=tenant, external_id="writer")
    MetricTotal.objects.create(tenant=tenant, user=writer, metric=metric, total=Decimal(12))

    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            admin_url(Achievement, "change", achievement.pk),
            form_data("metric", status="active", metric_id=metric.pk, metric_value="10"),
        )

    assert response.status_code == 302, response.context["form"].errors
    completion = AchievementCompletion.objects.get()
    assert (completion.user, completion.backdated) == (writer, True)


# Validation: the API's rules, in the form's words


@pytest.mark.parametrize(
    ("kind", "changes", "field", "message"),
    [
        ("metric", {"name": ""}, "name", "This field is required."),
        ("metric", {"metric_id": None}, "metric_id", "Required for metric achievements."),
        ("metric", {"metric_value": ""}, "metric_value", "Required for metric achievements."),
        ("metric", {"metric_value": "0"}, "metric_value", "greater than or equal to 1"),
        ("streak", {}, "streak_length", "Required for streak achievements."),
        ("streak", {"streak_length": "0"}, "streak_length", "greater than or equal to 1"),
        ("anniversary", {"anniversary_years": "201"}, "anniversary_years", "less than or equal"),
        ("api", {}, "key", "Required for API achievements."),
        ("api", {"key": "no spaces"}, "key", "must contain only letters, digits, - and _"),
        ("api", {"key": "taken"}, "key", "Key already in use by another achievement"),
        ("achievement", {}, "achievement_ids", "Required for composite achievements."),
        ("metric", {"badge_url": "not a url"}, "badge_url", "Enter a valid URL."),
        (
            "metric",
            {"user_attributes": [("", "pro")]},
            "user_attributes",
            "Choose the attribute that must equal “pro”.",
        ),
        (
            "metric",
            {"user_attributes": [("plan", "")]},
            "user_attributes",
            "Enter the value plan must have.",
        ),
        (
            "metric",
            {"user_attributes": [("plan", "pro"), ("plan", "free")]},
            "user_attributes",
            "plan is filtered twice",
        ),
        (
            "metric",
            {"user_attributes": [("foreign", "pro")]},
            "user_attributes",
            "names an attribute that no longer exists",
        ),
        (
            "metric",
            {"event_attributes": [("plan", "pro")]},
            "event_attributes",
            "names an attribute that no longer exists",
        ),
    ],
)
def test_invalid_achievement_is_a_form_error(
    staff_client: Client,
    tenant: Tenant,
    other_tenant: Tenant,
    metric: Metric,
    plan: Attribute,
    kind: str,
    changes: dict[str, Any],
    field: str,
    message: str,
) -> None:
    save(tenant, name="Taken", trigger="api", key="taken")
    foreign = AttributeFactory(tenant=other_tenant, key="plan", type=AttributeType.USER)
    ids = {"plan": str(plan.public_id), "foreign": str(foreign.public_id), "": ""}
    for name in ("user_attributes", "event_attributes"):
        if name in changes:
            changes[name] = [(ids[key], value) for key, value in changes[name]]
    data = {"metric_id": metric.pk, "metric_value": "10", **changes}
    version = version_of(tenant)

    response = staff_client.post(
        admin_url(Achievement, "add"),
        form_data(kind, tenant=tenant.pk, **{k: v for k, v in data.items() if v is not None}),
    )

    assert_refused(response, field, message)
    assert version_of(tenant) == version
    assert list(Achievement.objects.values_list("name", flat=True)) == ["Taken"]


def test_a_refusal_of_the_service_is_shown_next_to_its_field(
    staff_client: Client, tenant: Tenant
) -> None:
    base = save(tenant, name="Base", trigger="streak", streak_length=3)
    upper = save(tenant, name="Upper", trigger="achievement", achievement_ids=[str(base.public_id)])
    top = save(tenant, name="Top", trigger="achievement", achievement_ids=[str(upper.public_id)])

    # Upper requiring Top would be a cycle: only the service knows (it walks the graph).
    response = staff_client.post(
        admin_url(Achievement, "change", upper.pk),
        form_data("achievement", name="Upper", achievement_ids=[base.pk, top.pk]),
    )

    assert_refused(response, "achievement_ids", "Prerequisites would form a cycle")
    assert "achievementIds" not in response.content.decode()
    assert list(upper.prerequisites.all()) == [base]


# The change page: completions and backdating


def test_the_change_page_shows_completions_and_rarity(
    staff_client: Client, tenant: Tenant, metric: Metric
) -> None:
    achievement = metric_achievement(tenant, metric)
    alice = EndUserFactory(tenant=tenant, external_id="alice")
    bob = EndUserFactory(tenant=tenant, external_id="bob")
    EndUserFactory.create_batch(2, tenant=tenant)
    complete(achievement, alice)
    complete(achievement, bob, backdated=True)

    page = staff_client.get(admin_url(Achievement, "change", achievement.pk))

    summary = page.context["summary"]
    assert (summary.completions, summary.users, summary.rarity) == (2, 4, 50.0)
    assert [c.user.external_id for c in summary.latest] == ["bob", "alice"]
    html = page.content.decode()
    for user in (alice, bob):
        assert f'href="{admin_url(EndUser, "change", user.pk)}">{user.external_id}</a>' in html
    assert f"?achievement__id__exact={achievement.pk}" in html
    # Inactive: nothing is backdated, so there is no progress to show.
    assert 'id="backdating"' not in html


def test_the_change_page_follows_backdating_until_it_finishes(
    staff_client: Client, tenant: Tenant, metric: Metric
) -> None:
    achievement = metric_achievement(tenant, metric, value=10)
    writers = EndUserFactory.create_batch(3, tenant=tenant)
    for writer in writers:
        MetricTotal.objects.create(tenant=tenant, user=writer, metric=metric, total=Decimal(20))
    # Activated: the backdating task is queued after commit and has not run yet.
    configuration.achievement_update(tenant, achievement, AchievementSettings(status="active"))
    complete(achievement, writers[0], backdated=True)
    url = admin_url(Achievement, "change", achievement.pk)

    page = staff_client.get(url)

    progress = page.context["summary"].backdating
    assert (progress.backdated, progress.pending, progress.percent) == (1, 2, 33)
    assert "backdating in progress: 1 completed, 2 qualifying users to go" in page.content.decode()

    services.achievement_backdate(achievement.pk)

    page = staff_client.get(url)
    assert page.context["summary"].backdating.finished
    assert "backdating: 3 users who already qualified completed it" in page.content.decode()


# Deleting


def test_the_delete_confirmation_counts_what_goes_with_it(
    staff_client: Client, tenant: Tenant, metric: Metric
) -> None:
    achievement = metric_achievement(tenant, metric)
    for user in EndUserFactory.create_batch(2, tenant=tenant):
        complete(achievement, user)
    system = PointsSystem.objects.create(tenant=tenant, key="xp", name="XP")
    trigger = PointsTrigger.objects.create(
        system=system, type="achievement", points=50, achievement=achievement
    )
    url = admin_url(Achievement, "delete", achievement.pk)

    confirm = staff_client.get(url)

    assert confirm.status_code == 200
    assert dict(confirm.context["model_count"]) == {
        "achievements": 1,
        "achievement completions (deleted with it)": 2,
        "points triggers (deleted with it)": 1,
    }
    page = confirm.content.decode()
    assert f'href="{admin_url(PointsTrigger, "change", trigger.pk)}"' in page
    version = version_of(tenant)
    # Two users completed it: the name is typed (it has no key), or nothing goes.
    assert staff_client.post(url, {"post": "yes"}).status_code == 200
    assert version_of(tenant) == version

    response = staff_client.post(
        url, {"post": "yes", f"confirm-{achievement.pk}": achievement.name}
    )

    assert response.status_code == 302
    assert version_of(tenant) > version
    assert not Achievement.objects.exists()
    assert not AchievementCompletion.objects.exists()
    assert not PointsTrigger.objects.exists()
    assert any("deleted successfully" in m for m in message_texts(response))


def test_a_prerequisite_cannot_be_deleted_while_a_composite_requires_it(
    staff_client: Client, tenant: Tenant
) -> None:
    base = save(tenant, name="Base", trigger="streak", streak_length=3)
    save(tenant, name="Composite", trigger="achievement", achievement_ids=[str(base.public_id)])
    url = admin_url(Achievement, "delete", base.pk)

    confirm = staff_client.get(url)

    assert confirm.status_code == 200
    protected = [str(p) for p in confirm.context["protected"]]
    assert len(protected) == 1
    assert "Achievement that requires it" in protected[0]
    assert "Composite" in protected[0]
    staff_client.post(url, {"post": "yes"})
    assert Achievement.objects.filter(pk=base.pk).exists()


def test_a_composite_and_its_prerequisite_are_deleted_together(
    staff_client: Client, tenant: Tenant
) -> None:
    base = save(tenant, name="Base", trigger="streak", streak_length=3)
    composite = save(
        tenant, name="Composite", trigger="achievement", achievement_ids=[str(base.public_id)]
    )

    response = staff_client.post(
        admin_url(Achievement),
        {"action": "delete_selected", "_selected_action": [base.pk, composite.pk], "post": "yes"},
    )

    assert response.status_code == 302
    assert not Achievement.objects.exists()


# Tenant scope


def test_another_tenants_achievement_is_not_found(
    staff_client: Client, tenant: Tenant, other_tenant: Tenant, metric: Metric
) -> None:
    mine = metric_achievement(tenant, metric)
    theirs = save(other_tenant, name="Theirs", trigger="api", key="theirs")
    complete(theirs, EndUserFactory(tenant=other_tenant))

    listed = staff_client.get(admin_url(Achievement)).context["cl"].result_list
    assert list(listed) == [mine]
    completions = staff_client.get(admin_url(AchievementCompletion)).context["cl"].result_list
    assert list(completions) == []
    # Exactly what a missing achievement gets: a 404, never the page.
    assert staff_client.get(admin_url(Achievement, "change", 999_999)).status_code == 404
    for view in ("change", "delete"):
        assert staff_client.get(admin_url(Achievement, view, theirs.pk)).status_code == 404
    staff_client.post(
        admin_url(Achievement, "change", theirs.pk), form_data("api", key="renamed", name="X")
    )
    staff_client.post(admin_url(Achievement, "delete", theirs.pk), {"post": "yes"})
    theirs.refresh_from_db()
    assert (theirs.name, theirs.key) == ("Theirs", "theirs")


def test_a_prerequisite_of_another_tenant_is_refused(
    staff_client: Client, tenant: Tenant, other_tenant: Tenant
) -> None:
    theirs = save(other_tenant, name="Theirs", trigger="streak", streak_length=3)

    response = staff_client.post(
        admin_url(Achievement, "add"),
        form_data("achievement", tenant=tenant.pk, achievement_ids=[theirs.pk]),
    )

    assert_refused(response, "achievement_ids", "Select a valid choice")
    assert list(Achievement.objects.all()) == [theirs]


def test_staff_see_only_their_organizations_achievements(
    org: OrganizationWithKey, tenant: Tenant, metric: Metric
) -> None:
    mine = metric_achievement(tenant, metric)
    rival = OrganizationWithKey("Zenith")
    theirs = save(rival.tenant, name="Theirs", trigger="api", key="theirs")
    view = Permission.objects.filter(codename__in=["view_achievement", "view_tenant"])

    member = org_staff(org, username="member")
    member.user_permissions.add(*view)
    client = logged_in(member)
    assert list(client.get(admin_url(Achievement)).context["cl"].result_list) == [mine]
    assert client.get(admin_url(Achievement, "change", theirs.pk)).status_code == 404

    # Staff of no organization see nothing, even with the permission.
    loner = get_user_model().objects.create_user(username="loner", is_staff=True)
    loner.user_permissions.add(*view)
    client = logged_in(loner)
    assert list(client.get(admin_url(Achievement)).context["cl"].result_list) == []
    for achievement in (mine, theirs):
        assert client.get(admin_url(Achievement, "change", achievement.pk)).status_code == 404


def test_completions_are_read_only(staff_client: Client, tenant: Tenant, metric: Metric) -> None:
    achievement = metric_achievement(tenant, metric)
    complete(achievement, EndUserFactory(tenant=tenant, external_id="alice"))
    completion = AchievementCompletion.objects.get()

    assert staff_client.get(admin_url(AchievementCompletion, "add")).status_code == 403
    assert (
        staff_client.get(admin_url(AchievementCompletion, "delete", completion.pk)).status_code
        == 403
    )
    assert (
        staff_client.post(admin_url(AchievementCompletion, "change", completion.pk), {}).status_code
        == 403
    )
    page = staff_client.get(admin_url(AchievementCompletion) + "?q=alice").content.decode()
    assert f'href="{admin_url(Achievement, "change", achievement.pk)}">Novelist</a>' in page
    assert AchievementCompletion.objects.filter(pk=completion.pk).exists()


def test_completions_are_listed_newest_first_and_filtered_by_achievement(
    staff_client: Client, tenant: Tenant, metric: Metric
) -> None:
    one = metric_achievement(tenant, metric, name="One")
    two = save(tenant, name="Two", trigger="api", key="two")
    alice, bob = EndUserFactory(tenant=tenant), EndUserFactory(tenant=tenant)
    complete(one, alice)
    complete(two, alice)
    complete(one, bob)
    url = admin_url(AchievementCompletion)

    rows = staff_client.get(url).context["cl"].result_list
    assert [(r.achievement.name, r.user) for r in rows] == [
        ("One", bob),
        ("Two", alice),
        ("One", alice),
    ]
    rows = staff_client.get(f"{url}?achievement__id__exact={one.pk}").context["cl"].result_list
    assert {r.user for r in rows} == {alice, bob}


def test_streak_lengths_are_named_in_the_tenants_frequency(
    staff_client: Client, tenant: Tenant
) -> None:
    StreakSettings.objects.create(tenant=tenant, frequency="weekly")
    bump(tenant)
    save(tenant, name="Month", trigger="streak", streak_length=4)

    page = staff_client.get(admin_url(Achievement)).content.decode()
    assert "4 weeks in a row" in page
    form = staff_client.get(admin_url(Achievement, "add")).context["form"]
    assert "many weeks in a row" in str(form.fields["streak_length"].help_text)


def test_backdating_counts_only_users_still_to_complete(tenant: Tenant, metric: Metric) -> None:
    """The progress selector asks the same question as backdating: who qualifies, matches the
    filters and has no completion."""
    achievement = metric_achievement(tenant, metric, value=5, status="active")
    done, waiting, short = EndUserFactory.create_batch(3, tenant=tenant)
    for user, total in ((done, 9), (waiting, 5), (short, 4)):
        MetricTotal.objects.create(tenant=tenant, user=user, metric=metric, total=Decimal(total))
    complete(achievement, done, backdated=True)

    progress = achievement_backdate_progress(tenant, achievement.pk, timezone.now().date())

    assert progress is not None
    assert (progress.backdated, progress.pending) == (1, 1)
