"""The configuration pages in the browser: a staff member changes a metric on its page, finds
the change on the history page (from the metric's "History" button), reverts it; clones
production into a staging environment, sees the non-production banner there, changes an
achievement in staging and promotes it back with the promote page's checkboxes. Screenshots of
each step, and of the history page at a phone's width (conftest.py)."""

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from apps.accounts.models import ConfigChange, Environment
from apps.achievements.models import Achievement
from apps.metrics.models import Metric
from tests.browser.conftest import Staff
from tests.changes.support import admin_client, configure
from tests.factories import OrganizationWithKey


def test_history_revert_clone_and_promote(staff: Staff) -> None:
    org = OrganizationWithKey("Acme")
    configure(admin_client(org))
    metric = Metric.objects.get(tenant=org.tenant, key="words")

    # A change on the metric's page, then its history from the page's "History" button.
    staff.go(f"/dashboard/metrics/metric/{metric.pk}/change/")
    staff.fill("name", "Words written")
    staff.submit()
    staff.go(f"/dashboard/metrics/metric/{metric.pk}/history/")
    table = staff.text("#history-table")
    assert "Words written" in table
    assert "admin" in table  # the staff member who made it
    staff.shot("object-history")

    # Reverting it (the confirmation accepted) puts the name back.
    staff.driver.execute_script("window.confirm = function () { return true; };")
    staff.click("#history-table .config-revert")
    staff.find("ul.messagelist li.success")
    assert Metric.objects.get(pk=metric.pk).name == "Words"
    staff.go("/dashboard/configuration/history/")
    assert "Reverted" in staff.text("#history-table")
    staff.shot("tenant-history")
    staff.driver.set_window_size(390, 900)
    staff.go("/dashboard/configuration/history/")
    assert staff.no_horizontal_scroll()
    staff.shot("history-phone", full_page=False)

    # Production cloned into staging.
    staff.driver.set_window_size(1280, 900)
    staff.go("/dashboard/configuration/clone/")
    staff.fill("name", "Staging")
    staff.fill("key", "staging")
    staff.click('#clone-form input[type="submit"]')
    assert len(staff.find("#clone-key").text) > 20
    staff.shot("cloned")
    staging = Environment.objects.get(organization=org.organization, key="staging")
    assert Metric.objects.filter(tenant=staging.default_tenant, key="words").exists()

    # In staging: the banner, and an achievement changed there.
    staff.pick("tenant", staging.default_tenant.pk)
    staff.find("#environment-banner")
    writer = Achievement.objects.get(tenant=staging.default_tenant, name="Writer")
    staff.go(f"/dashboard/achievements/achievement/{writer.pk}/change/")
    assert "not production" in staff.text("#environment-banner")
    staff.fill("metric_value", "250")
    staff.submit()

    # Back in production: the promote page shows the one difference; promoting it applies it.
    staff.pick("tenant", org.tenant.pk)
    WebDriverWait(staff.driver, 10).until(
        lambda driver: not driver.find_elements(By.ID, "environment-banner")
    )
    staff.go("/dashboard/configuration/promote/")
    staff.pick("source", staging.default_tenant.pk)
    staff.click('#promote-source input[type="submit"]')
    staff.find("#promote-table")  # the compared page has loaded
    rows = staff.all("#promote-table tbody tr")
    assert len(rows) == 1
    assert "metricValue" in rows[0].text
    staff.shot("promote-diff")
    staff.click('#promote-form input[type="submit"]')
    staff.find("ul.messagelist li.success")
    assert Achievement.objects.get(tenant=org.tenant, name="Writer").metric_value == 250
    assert "nothing to promote" in staff.text("#promote-same")
    change = ConfigChange.objects.filter(tenant=org.tenant, kind="achievement").latest("id")
    assert change.source == "promote"
    staff.shot("promoted")
