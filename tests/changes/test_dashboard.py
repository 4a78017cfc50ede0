"""The configuration's dashboard pages: history (per tenant and per object) with revert, promote
with a checkbox per change, clone, and the banner of a non-production environment."""

from typing import Any

from django.urls import reverse

from apps.accounts.models import ConfigChange, Environment
from apps.accounts.services import environment_create
from apps.metrics.models import Metric
from tests.changes.support import admin_client, configure, created
from tests.dashboard.conftest import admin_url, message_texts, org_staff, switch_tenant


def test_a_dashboard_write_is_the_staff_members_and_its_history_page_shows_it(
    org: Any, tenant: Any, client: Any
) -> None:
    user = org_staff(org, username="maria", password="x")
    user.is_superuser = True
    user.save()
    client.force_login(user)
    response = client.post(
        admin_url(Metric, "add"),
        {"name": "Words", "key": "words", "unit_type": "number", "units": ""},
    )
    assert response.status_code == 302, response.content[:2000]
    change = ConfigChange.objects.get(tenant=tenant, kind="metric")
    assert (change.actor_kind, change.actor, change.source) == ("staff", "maria", "dashboard")
    page = client.get(reverse("admin:config-history"))
    assert page.status_code == 200
    assert b"maria" in page.content
    assert b"words" in page.content
    # The metric's own "History" button goes to its changes.
    metric = Metric.objects.get(tenant=tenant, key="words")
    button = client.get(admin_url(Metric, "history", metric.pk))
    assert button.status_code == 302
    followed = client.get(button["Location"])
    assert followed.status_code == 302
    assert followed["Location"] == "?kind=metric&key=words"


def test_revert_from_the_history_page(org: Any, tenant: Any, staff_client: Any) -> None:
    api = admin_client(org)
    metric = created(api.post("/admin/v1/metrics", [{"name": "Words", "key": "words"}]))
    api.patch("/admin/v1/metrics", [{"id": metric["id"], "name": "Renamed"}])
    change = ConfigChange.objects.filter(tenant=tenant, kind="metric").latest("id")
    url = reverse("admin:config-revert", args=[change.public_id])
    response = staff_client.post(url, {"next": reverse("admin:config-history")})
    assert response.status_code == 302
    assert Metric.objects.get(tenant=tenant).name == "Words"
    assert any("Reverted" in text for text in message_texts(response))
    again = staff_client.post(url, {"next": "https://elsewhere.example/"})
    assert again["Location"] == reverse("admin:config-history")
    assert any("already reverted" in text for text in message_texts(again))
    assert staff_client.get(url).status_code == 405


def test_promote_page_shows_the_diff_and_promotes_the_chosen_changes(
    org: Any, tenant: Any, staff_client: Any
) -> None:
    staging = environment_create(org.organization, name="Staging", key="staging", priority=2)
    staging_tenant = staging.default_tenant
    configure(admin_client(org, None))  # production gets the configuration...
    # ...and staging gets it by a promote from production, chosen change by change.
    switch_tenant(staff_client, staging_tenant)
    page = staff_client.get(reverse("admin:config-promote") + f"?source={tenant.pk}")
    assert page.status_code == 200
    assert b"metric:words" in page.content
    assert b"environment-banner" in page.content  # staging is not production
    response = staff_client.post(
        reverse("admin:config-promote"), {"source": tenant.pk, "change": ["metric:words"]}
    )
    assert response.status_code == 302
    assert Metric.objects.filter(tenant=staging_tenant, key="words").exists()
    assert ConfigChange.objects.get(tenant=staging_tenant, kind="metric").source == "promote"
    refused = staff_client.post(reverse("admin:config-promote"), {"source": tenant.pk})
    assert any("at least one" in text for text in message_texts(refused))


def test_clone_page_creates_an_environment_and_shows_its_key_once(
    org: Any, tenant: Any, staff_client: Any
) -> None:
    configure(admin_client(org))
    switch_tenant(staff_client, tenant)
    page = staff_client.get(reverse("admin:config-clone"))
    assert b"environment-banner" not in page.content  # production
    response = staff_client.post(
        reverse("admin:config-clone"), {"name": "Staging", "key": "staging", "priority": "2"}
    )
    assert response.status_code == 200
    assert b"clone-key" in response.content
    staging = Environment.objects.get(organization=org.organization, key="staging")
    assert Metric.objects.filter(tenant=staging.default_tenant, key="words").exists()
    bad = staff_client.post(
        reverse("admin:config-clone"), {"name": "Again", "key": "staging", "priority": "2"}
    )
    assert b"already" in bad.content
    assert (
        b"whole number"
        in staff_client.post(
            reverse("admin:config-clone"), {"name": "X", "key": "x", "priority": "many"}
        ).content
    )


def test_another_organizations_staff_sees_none_of_it(org: Any, tenant: Any, client: Any) -> None:
    from tests.factories import OrganizationWithKey

    created(admin_client(org).post("/admin/v1/metrics", [{"name": "Words", "key": "words"}]))
    change = ConfigChange.objects.get(tenant=tenant, kind="metric")
    other = OrganizationWithKey("Other")
    user = org_staff(other, username="stranger", password="x")
    client.force_login(user)
    page = client.get(reverse("admin:config-history"))
    assert b"words" not in page.content
    url = reverse("admin:config-revert", args=[change.public_id])
    assert client.post(url).status_code == 404
    promote = client.get(reverse("admin:config-promote") + f"?source={tenant.pk}")
    assert b"metric:words" not in promote.content
