"""Browser tests of the dashboard: headless Chromium (Debian's `chromium` and `chromium-driver`,
installed by .ci/run) driving a live server, as a staff member would.

Every test saves screenshots under BROWSER_SCREENSHOTS (default artifacts/screenshots) so the
pages can be looked at after a run. Without Chromium the tests are skipped, with the reason;
CI installs it and fails when they did not run.
"""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.servers.basehttp import ServerHandler
from django.test.testcases import QuietWSGIRequestHandler
from pytest_django.live_server_helper import LiveServer
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.wait import WebDriverWait

from tests.contract.conftest import _join_request_threads, make_client, server  # noqa: F401

SCREENSHOTS = Path(os.environ.get("BROWSER_SCREENSHOTS", "artifacts/screenshots"))
WIDTH, HEIGHT = 1400, 900
PASSWORD = "browser-test-password"

pytestmark = pytest.mark.browser


def _binaries() -> tuple[str, str] | None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (chromium, driver) if chromium and driver else None


@pytest.fixture(scope="session")
def chromium() -> Iterator[webdriver.Chrome]:
    binaries = _binaries()
    if binaries is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium chromium-driver)")
    binary, driver_path = binaries
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        f"--window-size={WIDTH},{HEIGHT}",
        "--lang=en-US",
    ):
        options.add_argument(argument)
    # No connections opened ahead of need: each would hold a live-server thread until it closes.
    options.add_experimental_option("prefs", {"net.network_prediction_options": 2})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


class Staff:
    """A staff member's browser: pages by path, forms by label, screenshots by name."""

    def __init__(self, driver: webdriver.Chrome, base_url: str, test_name: str) -> None:
        self.driver = driver
        self.base_url = base_url
        self.test_name = test_name
        self.shots: list[Path] = []

    def go(self, path: str) -> None:
        self.driver.get(self.base_url + path)

    def find(self, css: str) -> WebElement:
        return WebDriverWait(self.driver, 10).until(
            expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css))
        )

    def all(self, css: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def text(self, css: str = "body") -> str:
        return self.find(css).text

    def field(self, name: str) -> WebElement:
        """The input a person would type in: the first visible, enabled one of that name (forms
        may hold hidden template rows)."""
        self.find(f'[name="{name}"]')
        for element in self.all(f'[name="{name}"]'):
            if element.is_enabled() and (
                element.is_displayed() or element.get_attribute("type") == "radio"
            ):
                return element
        raise AssertionError(f"no visible, enabled input named {name}")

    def fill(self, name: str, value: str) -> None:
        field = self.field(name)
        field.clear()
        field.send_keys(value)

    def choose(self, name: str, label: str) -> None:
        Select(self.find(f'select[name="{name}"]')).select_by_visible_text(label)

    def pick(self, name: str, value: object) -> None:
        """Sets a select or a radio group by value, as a click would (change events fire)."""
        element = self.field(name)
        if element.tag_name == "select":
            select = Select(element)
            # By value, else by what a person reads (forms name metrics by pk, key or id).
            options = [o for o in select.options if o.get_attribute("value") == str(value)]
            options = options or [o for o in select.options if str(value) in o.text]
            if not options:
                texts = [o.text for o in select.options]
                raise AssertionError(f"{name} has no option {value}: {texts}")
            select.select_by_value(options[0].get_attribute("value") or "")
        else:
            self.click(f'input[name="{name}"][value="{value}"]')

    def check(self, name: str, value: str | None = None) -> None:
        css = f'input[name="{name}"]' + (f'[value="{value}"]' if value is not None else "")
        box = self.find(css)
        if not box.is_selected():
            self.driver.execute_script("arguments[0].click();", box)

    def click(self, css: str) -> None:
        element = self.find(css)
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
        element.click()

    def submit(self, css: str = 'input[type="submit"][name="_save"]') -> None:
        """Submits and waits for the next page: the old one's <html> going stale (waiting for
        a <body> alone found the old page's, and the checks then raced the load)."""
        page = self.driver.find_element(By.TAG_NAME, "html")
        self.click(css)
        WebDriverWait(self.driver, 10).until(expected_conditions.staleness_of(page))
        self.find("body")

    def messages(self) -> list[str]:
        return [element.text for element in self.all("ul.messagelist li")]

    def errors(self) -> list[str]:
        return [element.text for element in self.all(".errorlist li, .errornote")]

    def shot(self, name: str, full_page: bool = True) -> Path:
        """Saves a screenshot named after the test; full_page grows the window to the page."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{self.test_name}-{len(self.shots) + 1:02d}-{name}.png"
        if full_page:
            # The window's size includes the browser's own bars: the page gets less than it.
            height, bars = self.driver.execute_script(
                "return [document.documentElement.scrollHeight,"
                " window.outerHeight - window.innerHeight]"
            )
            self.driver.set_window_size(WIDTH, max(HEIGHT, min(int(height) + int(bars), 6000)))
        self.driver.save_screenshot(str(path))
        self.driver.set_window_size(WIDTH, HEIGHT)
        self.shots.append(path)
        return path

    def no_horizontal_scroll(self) -> bool:
        return bool(
            self.driver.execute_script(
                "return document.documentElement.scrollWidth <= window.innerWidth"
            )
        )


@pytest.fixture
def one_request_per_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chromium keeps connections open between pages, and the live server serves each in a
    thread of its own until it closes; answering with `Connection: close` lets every request
    thread finish with its request, before the test's database is flushed."""
    cleanup = ServerHandler.cleanup_headers

    def cleanup_and_close(handler: ServerHandler) -> None:
        cleanup(handler)
        handler.headers["Connection"] = "close"
        handler.request_handler.close_connection = True

    monkeypatch.setattr(ServerHandler, "cleanup_headers", cleanup_and_close)
    # A connection Chromium opened ahead of need (and never used) ends after a second.
    monkeypatch.setattr(QuietWSGIRequestHandler, "timeout", 1)


@pytest.fixture
def staff(
    chromium: webdriver.Chrome,
    transactional_db: Any,
    one_request_per_connection: None,
    request: Any,
) -> Iterator[Staff]:
    """A superuser logged in through the login page."""
    live: LiveServer = request.getfixturevalue("server")
    get_user_model().objects.create_superuser("admin", "admin@example.com", PASSWORD)
    browser = Staff(chromium, live.url, request.node.name.replace("test_", "", 1))
    chromium.delete_all_cookies()
    browser.go("/dashboard/login/")
    browser.fill("username", "admin")
    browser.fill("password", PASSWORD)
    browser.submit('#login-form [type="submit"]')
    assert "/dashboard/" in chromium.current_url
    yield browser
    chromium.delete_all_cookies()
    chromium.get("about:blank")
    # The server's request threads finish before the database is flushed.
    _join_request_threads()
