"""Staff of one organization find nothing of another anywhere in the dashboard: no page, list
filter, choice list or form of theirs shows another organization's names, URLs, keys or ids, and
no form of theirs creates anything inside it.

The crawl reads every URL the dashboard's site routes (each page of each model, with each of its
list filters, and every page an object id opens, for the ids of both organizations) as a staff
member of the rival organization who holds every permission of gamify's own pages.
"""

import datetime as dt
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import models
from django.test import Client
from django.urls import URLPattern, URLResolver, reverse
from django.utils import timezone

from apps.accounts.models import ApiKey, Environment, Organization, Tenant
from apps.accounts.services import tenant_create
from apps.leaderboards.models import LeaderboardEntry, LeaderboardSnapshot
from apps.leagues.configuration import league_create
from apps.leagues.domain import LeagueSettings
from apps.metrics.models import Metric
from apps.notifications.choices import MessageStatus, NotificationType
from apps.notifications.models import Message
from apps.pipeline.models import QueuedEvent
from apps.streaks.models import StreakLoss, StreakState
from apps.users.models import EndUser
from apps.webhooks.choices import DeliveryStatus, EventType
from apps.webhooks.configuration import webhook_endpoint_create
from apps.webhooks.domain import WebhookEndpointSettings
from apps.webhooks.models import WebhookDelivery, WebhookEvent
from tests.conftest import Client as ApiClient
from tests.dashboard.conftest import admin_url
from tests.factories import OrganizationWithKey

pytestmark = pytest.mark.django_db


def our_models() -> list[type[models.Model]]:
    return [model for model in apps.get_models() if model.__module__.startswith("apps.")]


def rows() -> dict[type[models.Model], set[Any]]:
    return {model: set(model._base_manager.values_list("pk", flat=True)) for model in our_models()}


def created(client: ApiClient, path: str, items: Any) -> list[dict[str, Any]]:
    response = client.post(path, items)
    assert response.status_code == 201, response.content
    assert not response.json().get("issues"), response.content
    return list(response.json()["created"])


def populate(org: OrganizationWithKey, marker: str) -> None:
    """One row of every kind the dashboard shows, in the organization's default tenant, each
    with `marker` in whatever it names (keys, names, URLs, user ids, emails)."""
    client = ApiClient()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    tenant = org.tenant
    words = f"{marker}-words"
    created(client, "/admin/v1/metrics", [{"key": words, "name": f"{marker} words"}])
    metric_id = str(Metric.objects.get(tenant=tenant).public_id)
    created(
        client,
        "/admin/v1/attributes",
        [{"key": f"{marker}-plan", "name": f"{marker} plan", "type": "user"}],
    )
    response = client.patch(
        "/admin/v1/streaks/settings",
        {"frequency": "daily", "metrics": [{"key": words, "threshold": 1}]},
    )
    assert response.status_code == 200, response.content
    (system,) = created(client, "/admin/v1/points", [{"name": f"{marker} xp", "key": f"{marker}"}])
    points = f"/admin/v1/points/{system['id']}"
    created(
        client,
        f"{points}/triggers",
        [
            {
                "type": "metric",
                "metricId": metric_id,
                "points": 1,
                "metricThreshold": 1,
                "status": "active",
            }
        ],
    )
    created(client, f"{points}/levels", [{"key": marker, "name": f"{marker} level", "points": 1}])
    created(
        client,
        f"{points}/boosts",
        [{"name": f"{marker} boost", "start": "2020-01-01", "multiplier": 2}],
    )
    achievement = {"trigger": "metric", "metricId": metric_id, "metricValue": 1}
    created(
        client,
        "/admin/v1/achievements",
        [{"name": f"{marker} first", **achievement, "status": "active"}],
    )
    board = {"rankBy": "metric", "metricId": metric_id, "status": "active"}
    created(client, "/admin/v1/leaderboards", [{"name": f"{marker} board", "key": marker, **board}])
    # A league, which the event below joins (a cohort and an entry), with a reward.
    league_create(
        tenant,
        LeagueSettings(
            name=f"{marker} league",
            key=marker,
            score_by="metric",
            metric_id=metric_id,
            status="active",
            rewards=[{"from_place": 1, "points": 5, "points_system_id": system["id"]}],
        ),
    )
    # A quest, which the event below moves (a progress row), in a pool.
    (quest,) = created(
        client,
        "/admin/ext/v1/quests",
        [
            {
                "name": f"{marker} quest",
                "key": marker,
                "cadence": "daily",
                "status": "active",
                "goals": [{"kind": "metric", "metricId": metric_id, "target": 10}],
                "rewardPoints": 5,
                "rewardPointsSystemId": system["id"],
            }
        ],
    )
    pool = {"name": f"{marker} pool", "key": marker, "cadence": "daily", "size": 1}
    created(client, "/admin/ext/v1/quest-pools", [{**pool, "quests": [{"questId": quest["id"]}]}])
    # An anomaly rule every event passes, so the event below flags the user.
    rule = {"name": f"{marker} rule", "key": marker, "kind": "events", "threshold": 0}
    created(client, "/admin/ext/v1/anomaly-rules", [{**rule, "windowMinutes": 60}])
    created(client, "/admin/v1/push-channels", [{"kind": "expo"}])
    for templates in ("/admin/v1/email-templates", "/admin/v1/push-templates"):
        assert client.get(templates).status_code == 200  # seeds the built-in ones
    user = {"id": f"{marker}-alice", "email": f"alice@{marker}.example", "name": f"{marker} A"}
    response = client.post(f"/v1/metrics/{words}/event", {"user": user, "value": 3})
    assert response.status_code == 201, response.content
    tomorrow = timezone.localdate() + dt.timedelta(days=1)
    pause = {"userId": user["id"], "start": str(tomorrow), "end": str(tomorrow)}
    created(client, "/admin/v1/streaks/pauses", {"pauses": [pause]})
    org.application_key(user["id"])

    # What the pipeline, the jobs and the senders record, written directly.
    end_user = EndUser.objects.get(tenant=tenant)
    entry = LeaderboardEntry.objects.get(leaderboard__tenant=tenant)
    LeaderboardSnapshot.objects.create(
        leaderboard=entry.leaderboard,
        run_start=entry.run_start,
        user=end_user,
        date=timezone.localdate(),
        rank=1,
    )
    endpoint, _secret = webhook_endpoint_create(
        tenant,
        WebhookEndpointSettings(
            url=f"http://127.0.0.1:9/{marker}-hook", events=[EventType.STREAK_LOST]
        ),
    )
    now = timezone.now()
    event = WebhookEvent.objects.create(
        tenant=tenant,
        type=EventType.STREAK_LOST,
        body=f'{{"user":"{marker}"}}',
        created=now,
        due_at=now,
    )
    WebhookDelivery.objects.create(
        tenant=tenant,
        event=event,
        endpoint=endpoint,
        status=DeliveryStatus.FAILED,
        next_attempt_at=now,
        created=now,
        last_error=f"{marker} refused",
    )
    Message.objects.create(
        tenant=tenant,
        user=end_user,
        type=NotificationType.RECAP,
        dedupe_key=f"{marker}-recap",
        send_at=now,
        status=MessageStatus.SENT,
        recipient=end_user.email,
        subject=f"{marker} recap",
    )
    QueuedEvent.objects.create(
        tenant=tenant, seq=0, payload={"metric": words, "user": {"id": user["id"]}}, accepted_at=now
    )
    StreakLoss.objects.create(
        tenant=tenant,
        user=end_user,
        frequency="daily",
        length=3,
        missed_period=timezone.localdate() - dt.timedelta(days=1),
        lost_at=now - dt.timedelta(hours=1),
    )
    Message.objects.create(
        tenant=tenant,
        user=end_user,
        type=NotificationType.REACTIVATION,
        dedupe_key=f"{marker}-reactivation",
        send_at=now + dt.timedelta(days=1),
        recipient=end_user.email,
    )


@pytest.fixture(autouse=True)
def _local_urls(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_HTTP = True
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]


class World:
    """Quokka, with a row of every kind, and what it held before its rival Zenith existed."""

    def __init__(self) -> None:
        self.quokka = OrganizationWithKey("Quokka")
        populate(self.quokka, "quokka")
        # A second tenant that nobody has looked at yet (its templates not seeded).
        self.quokka_other = tenant_create(
            self.quokka.environment, customer_id="quokka-b", name="Quokka B"
        )
        self.quokka_rows = rows()
        self.quokka_secrets = self._secrets()
        self.zenith = OrganizationWithKey("Zenith")
        populate(self.zenith, "zenith")
        self.staff = get_user_model().objects.create_user(username="zenith-staff", is_staff=True)
        self.zenith.organization.staff.add(self.staff)
        # Every permission of gamify's own pages; users, groups and login records are the
        # superusers' (README, "The dashboard").
        labels = {
            config.label for config in apps.get_app_configs() if config.name.startswith("apps.")
        }
        self.staff.user_permissions.add(
            *Permission.objects.filter(content_type__app_label__in=labels)
        )
        self.client = Client()
        self.client.force_login(self.staff)

    def _secrets(self) -> set[str]:
        """What would betray Quokka on a page: its name, every public id and key prefix."""
        found = {"quokka", *ApiKey.objects.values_list("prefix", flat=True)}
        for model in our_models():
            if any(field.name == "public_id" for field in model._meta.fields):
                found.update(
                    str(v) for v in model._base_manager.values_list("public_id", flat=True)
                )
        return found

    def leaks(self, page: str) -> set[str]:
        text = page.lower()
        return {secret for secret in self.quokka_secrets if secret.lower() in text}

    def quokka_choices(self, form: Any) -> list[str]:
        """Fields of a rendered form that would accept one of Quokka's rows."""
        offered = []
        for name, field in form.fields.items():
            queryset = getattr(field, "queryset", None)
            meta = getattr(form, "_meta", None)  # plain forms (config_pages.py) have none
            if queryset is None or (meta is not None and name == meta.model._meta.pk.name):
                # A row's hidden id: Django checks it against every row, but a formset edits
                # only the rows of the page's object (BaseModelFormSet._existing_object).
                continue
            theirs = self.quokka_rows.get(queryset.model, set())
            if queryset.filter(pk__in=theirs).exists():
                offered.append(name)
        return offered


@pytest.fixture
def world(db: Any) -> World:
    return World()


def _patterns(
    resolver: URLResolver | URLPattern, prefix: str = ""
) -> Iterator[tuple[str, URLPattern]]:
    if isinstance(resolver, URLPattern):
        yield prefix + str(resolver.pattern), resolver
        return
    for child in resolver.url_patterns:
        yield from _patterns(child, prefix + str(resolver.pattern))


_CONVERTER = re.compile(r"<(?:(\w+):)?(\w+)>")


def _admin_for(pattern: URLPattern) -> admin.ModelAdmin | None:
    view = pattern.callback
    owner = getattr(view, "model_admin", None) or getattr(
        getattr(view, "__wrapped__", None), "__self__", None
    )
    return owner if isinstance(owner, admin.ModelAdmin) else None


def crawl_urls(world: World) -> Iterator[str]:
    """Every GET-able address of the dashboard's site: paths without parameters as they are;
    a model's paths with an object id for each of Quokka's and Zenith's objects of that model."""
    base = reverse("admin:index")
    routes = [found for entry in admin.site.urls[0] for found in _patterns(entry)]
    for route, pattern in routes:
        if route.startswith(("auth/", "axes/", "logout", "password_change", "r/")) or "^" in route:
            continue
        parameters = _CONVERTER.findall(route)
        if not parameters:
            yield base + route
            continue
        model_admin = _admin_for(pattern)
        if model_admin is None or len(parameters) != 1:
            continue
        model = model_admin.model
        if not model.__module__.startswith("apps."):
            continue
        for pk in model._base_manager.values_list("pk", flat=True):
            yield base + _CONVERTER.sub(str(pk), route)


def filtered_lists(world: World, url: str) -> Iterator[str]:
    """The list at `url` with each choice of each of its filters."""
    response = world.client.get(url)
    changelist = response.context and response.context.get("cl")
    if changelist is None:
        return
    for spec in changelist.filter_specs:
        for choice in spec.choices(changelist):
            yield url + choice["query_string"]


def test_another_organizations_staff_find_nothing_of_it(world: World) -> None:
    # Quokka has a row of every kind the dashboard shows: the crawl opens each one's pages.
    shown = {model for model in admin.site._registry if model.__module__.startswith("apps.")}
    assert {model for model in shown if not world.quokka_rows[model]} == set()
    before = {model: model._base_manager.count() for model in our_models()}
    leaks: dict[str, set[str]] = {}
    offered: dict[str, list[str]] = {}
    pages = list(crawl_urls(world))
    lists = [
        admin_url(model) for model in admin.site._registry if model.__module__.startswith("apps.")
    ]
    for url in lists:
        pages.extend(filtered_lists(world, url))
    for url in pages:
        response = world.client.get(url)
        assert response.status_code < 500, url
        if response.status_code != 200 or not hasattr(response, "content"):
            continue
        page = response.content.decode(errors="replace")
        if found := world.leaks(page):
            leaks[url] = found
        context = response.context or {}
        adminform = context.get("adminform")
        forms = [adminform.form] if adminform is not None else []
        if context.get("form") is not None and hasattr(context["form"], "fields"):
            forms.append(context["form"])  # a configuration page's plain form
        for formset in context.get("inline_admin_formsets", []):
            forms.extend(formset.formset.forms)
            forms.append(formset.formset.empty_form)
        for form in forms:
            if found_fields := world.quokka_choices(form):
                offered[url] = found_fields
    assert leaks == {}, "\n".join(f"{url}: {sorted(found)}" for url, found in leaks.items())
    assert offered == {}, "\n".join(f"{url}: {fields}" for url, fields in offered.items())
    # Reading pages wrote nothing (nor seeded Quokka's second tenant's templates).
    assert {model: model._base_manager.count() for model in our_models()} == before


def test_another_organizations_staff_cannot_create_inside_it(world: World) -> None:
    quokka = world.quokka
    client = world.client
    attempts = {
        Environment: {
            "organization": quokka.organization.pk,
            "name": "Z",
            "key": "z",
            "priority": 2,
        },
        Tenant: {"environment": quokka.environment.pk, "customer_id": "z", "name": "Z"},
        ApiKey: {"kind": "admin", "environment": quokka.environment.pk, "name": "Z"},
    }
    for model, data in attempts.items():
        response = client.post(admin_url(model, "add"), data)
        assert response.status_code == 200, model  # the form again, with its error
    # A configuration page (config_pages.py) has no tenant input: a posted one is ignored and the
    # row goes into the tenant selected in the header, the staff member's own.
    metric = {"tenant": quokka.tenant.pk, "key": "z", "name": "Z", "unit_type": "number"}
    assert client.post(admin_url(Metric, "add"), metric).status_code == 302
    assert Metric.objects.get(key="z").tenant == world.zenith.tenant
    application = {"kind": "application", "tenant": quokka.tenant.pk, "user_id": "z"}
    application["environment"] = world.zenith.environment.pk
    assert client.post(admin_url(ApiKey, "add"), application).status_code == 200
    for model in (Environment, Tenant, ApiKey, Metric):
        assert (
            not model._base_manager.exclude(pk__in=world.quokka_rows[model])
            .filter(**_in_quokka(model, quokka))
            .exists()
        ), model
    assert Organization.objects.count() == 2


def _in_quokka(model: type[models.Model], quokka: OrganizationWithKey) -> dict[str, Any]:
    return {
        Environment: {"organization": quokka.organization},
        Tenant: {"environment__organization": quokka.organization},
        ApiKey: {"environment__organization": quokka.organization},
        Metric: {"tenant__environment__organization": quokka.organization},
    }[model]


def test_another_organizations_staff_cannot_act_on_its_users_or_messages(world: World) -> None:
    """The support actions are POSTs outside the crawl: each one on Quokka's rows is not found,
    and changes nothing."""
    quokka = world.quokka.tenant
    user = EndUser.objects.get(tenant=quokka)
    waiting = Message.objects.get(tenant=quokka, status=MessageStatus.QUEUED)
    streak = StreakState.objects.get(user=user)
    posts = [
        (reverse("admin:users_enduser_streak_restore", args=[user.pk]), {"next": "/dashboard/"}),
        (reverse("admin:notifications_message_cancel", args=[waiting.pk]), {"reason": "z"}),
        (reverse("admin:notifications_message_send_now", args=[waiting.pk]), {}),
    ]
    for url, data in posts:
        assert world.client.post(url, data).status_code == 404, url
    waiting.refresh_from_db()
    assert (waiting.status, waiting.error) == (MessageStatus.QUEUED, "")
    assert StreakState.objects.get(user=user).updated == streak.updated
