"""The home page and the tenant switcher, in the browser."""

from selenium.webdriver.support.select import Select

from apps.accounts.services import tenant_create
from apps.metrics.configuration import metric_create
from apps.metrics.domain import MetricSettings
from tests.browser.conftest import Staff
from tests.factories import OrganizationWithKey


def test_home_page_and_tenant_switcher(staff: Staff) -> None:
    org = OrganizationWithKey("Acme")
    other = tenant_create(org.environment, customer_id="school-42", name="School 42")
    metric_create(
        other, MetricSettings(name="Lessons", key="lessons", unit_type="number", units="lessons")
    )

    staff.go("/dashboard/")
    assert "Acme / Production / default tenant" in staff.text("#tenant-switcher")
    assert "Add a metric" in staff.text("#content")
    assert "users" in staff.text("#home-numbers")
    assert staff.no_horizontal_scroll()
    staff.shot("home")

    # Picking a tenant in the header scopes every page to it.
    # Named by name first, then where it is.
    Select(staff.find("#tenant-switcher-select")).select_by_visible_text(
        "School 42 · Acme / Production / school-42"
    )
    staff.find("#home-numbers")
    staff.go("/dashboard/metrics/metric/")
    assert "lessons" in staff.text("#result_list")
    assert "School 42 · Acme / Production / school-42" in staff.text("#tenant-switcher")
    staff.shot("metrics-of-another-tenant")
