"""The widgets (widgets/) in headless Chromium, as a customer's page embeds them: the demo page
served from another origin than gamify's, the widgets' modules loaded from gamify's static files,
their state read from the application API with the user's application key (cross-origin, which
CORS_ALLOWED_ORIGINS allows) and kept current by the live streams, which an ASGI server
(tests/asgi_server.py) serves: the user's stream through a token the page's own backend hands
out (`token-url`), the board's through a `stream-token`. Events sent from the page and through
the API update all four widgets; screenshots at 1280 and 390 px wide, light and dark."""

import functools
import http.server
import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.wait import WebDriverWait

from tests.asgi_server import asgi_server
from tests.browser.conftest import SCREENSHOTS
from tests.conftest import RANKS_REDIS, Client, redis_answers
from tests.factories import OrganizationWithKey

WIDGETS = Path(__file__).resolve().parents[2] / "widgets"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not redis_answers(), reason="live streams need Redis on 127.0.0.1:6379"),
]


class _Page(http.server.SimpleHTTPRequestHandler):
    """The customer's site: the widgets folder as files, and /token/<stream>, the backend route
    that hands the page a stream token (minted with the admin key it keeps)."""

    tokens: dict[str, str] = {}
    asked: list[dict[str, list[str]]] = []

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path.startswith("/token/"):
            # The widget says which stream it needs, as the token route's body names it.
            self.asked.append(parse_qs(url.query))
            token = self.tokens.get(url.path.removeprefix("/token/"))
            body = json.dumps({"token": token}).encode()
            self.send_response(200 if token else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def page_server() -> Iterator[str]:
    handler = functools.partial(_Page, directory=str(WIDGETS))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True, name="page-server")
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def gamify(settings: Any, page_server: str, transactional_db: None) -> Iterator[str]:
    settings.STREAMS_REDIS_URL = RANKS_REDIS
    settings.STREAMS_PREFIX = f"gamify-test-widgets-{uuid.uuid4().hex[:8]}:"
    settings.CORS_ALLOWED_ORIGINS = [page_server]
    with asgi_server() as url:
        yield url


def configure(org: OrganizationWithKey) -> None:
    """The second quickstart's course (README): lessons, a daily streak, XP with two levels,
    two achievements and a board of XP."""
    admin = Client()
    admin.credentials(HTTP_X_API_KEY=org.admin_key)

    def created(path: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        response = admin.post(path, items)
        assert response.status_code == 201, response.content
        assert not response.json()["issues"], response.json()
        return list(response.json()["created"])

    (lessons,) = created("/admin/v1/metrics", [{"key": "lessons", "name": "Lessons"}])
    streak = {"frequency": "daily", "metrics": [{"key": "lessons", "threshold": 1}]}
    assert admin.patch("/admin/v1/streaks/settings", streak).status_code == 200
    levels = [
        {"key": "novice", "name": "Novice", "points": 10},
        {"key": "scholar", "name": "Scholar", "points": 50},
    ]
    trigger = {
        "type": "metric",
        "metricId": lessons["id"],
        "metricThreshold": 1,
        "points": 10,
        "status": "active",
    }
    (xp,) = created(
        "/admin/v1/points", [{"key": "xp", "name": "XP", "levels": levels, "triggers": [trigger]}]
    )
    for name, value in (("First lesson", 1), ("Five lessons", 5)):
        achievement = {"name": name, "trigger": "metric", "metricId": lessons["id"]}
        created(
            "/admin/v1/achievements", [achievement | {"metricValue": value, "status": "active"}]
        )
    board = {"key": "top-xp", "name": "Top XP", "rankBy": "points", "pointsSystemId": xp["id"]}
    created("/admin/v1/leaderboards", [board | {"status": "active"}])
    for user, name, value in (("grace", "Grace", 5), ("bob", "Bob", 2)):
        body = {"user": {"id": user, "name": name}, "value": value}
        assert admin.post("/v1/metrics/lessons/event", body).status_code == 201
    assert admin.post("/v1/users", {"id": "ada", "name": "Ada"}).status_code == 201


def token(org: OrganizationWithKey, **claims: str) -> str:
    admin = Client()
    admin.credentials(HTTP_X_API_KEY=org.admin_key)
    response = admin.post("/admin/ext/v1/streams/tokens", claims)
    assert response.status_code == 201, response.content
    return str(response.json()["token"])


class Widgets:
    """The demo page in Chromium: each widget's text and attributes, read inside its shadow
    root."""

    def __init__(self, driver: webdriver.Chrome, name: str) -> None:
        self.driver = driver
        self.name = name
        self.shots = 0

    def text(self, tag: str) -> str:
        """What the widget shows, its white space collapsed."""
        shown = self.driver.execute_script(
            "const e = document.querySelector(arguments[0]);"
            "return e && e.shadowRoot ? e.shadowRoot.querySelector('section').innerText : '';",
            tag,
        )
        return " ".join(str(shown).split())

    def query(self, tag: str, css: str, attribute: str) -> list[str | None]:
        return list(
            self.driver.execute_script(
                "return [...document.querySelector(arguments[0]).shadowRoot"
                ".querySelectorAll(arguments[1])].map(e => e.getAttribute(arguments[2]));",
                tag,
                css,
                attribute,
            )
        )

    def until(self, tag: str, *texts: str) -> str:
        """Waits until the widget shows every text; fails with what it shows."""
        try:
            WebDriverWait(self.driver, 20).until(
                lambda _: all(text in self.text(tag) for text in texts)
            )
        except Exception as exc:
            raise AssertionError(f"{tag} shows {self.text(tag)!r}, not {texts}") from exc
        return self.text(tag)

    def live(self) -> None:
        tags = ("gamify-streak", "gamify-leaderboard")
        try:
            WebDriverWait(self.driver, 20).until(
                lambda _: all(self.query(tag, ".status", "data-status") == ["live"] for tag in tags)
            )
        except Exception as exc:
            statuses = {tag: self.query(tag, ".status", "data-status") for tag in tags}
            raise AssertionError(f"the streams are not live: {statuses}") from exc

    def viewport(self, width: int, height: int = 900) -> None:
        # The page's own width (a window's includes the browser's frame).
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        )

    def shot(self, name: str, width: int) -> Path:
        """The whole page, no taller than its content."""
        self.viewport(width, height=100)
        height = self.driver.execute_script("return document.documentElement.scrollHeight")
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": int(height), "deviceScaleFactor": 1, "mobile": width < 600},
        )
        # Headless Chromium advances animations only as it draws: end the highlights of changes.
        self.driver.execute_script(
            "for (const e of document.querySelectorAll('#widgets > *'))"
            " for (const a of e.shadowRoot.getAnimations()) a.finish();"
        )
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.shots += 1
        path = SCREENSHOTS / f"{self.name}-{self.shots:02d}-{name}-{width}.png"
        self.driver.save_screenshot(str(path))
        self.viewport(width)
        return path

    def no_horizontal_scroll(self) -> bool:
        return bool(
            self.driver.execute_script(
                "return document.documentElement.scrollWidth <= window.innerWidth"
            )
        )


def test_the_widgets_show_a_user_and_follow_the_streams(
    chromium: webdriver.Chrome, gamify: str, page_server: str
) -> None:
    org = OrganizationWithKey("Course")
    configure(org)
    _Page.tokens = {"ada": token(org, stream="user", userId="ada", expiresIn=600)}
    params = {
        "server": gamify,
        "user": "ada",
        "apiKey": org.application_key("ada"),
        "userTokenUrl": f"{page_server}/token/ada",
        "boardToken": token(org, stream="leaderboard", leaderboardKey="top-xp", expiresIn=600),
        "board": "top-xp",
        "system": "xp",
        "metric": "lessons",
    }
    page = Widgets(chromium, "widgets")
    page.viewport(1280)
    chromium.get(f"{page_server}/demo/index.html?{urlencode(params)}")
    try:
        # What the API says now: Ada has done nothing yet; Grace and Bob lead the board.
        assert "0 days" in page.until("gamify-streak", "No streak yet")
        page.until("gamify-points", "XP", "10 to Novice")
        page.until("gamify-achievements", "0 of 2 completed", "First lesson", "Five lessons")
        board = page.until("gamify-leaderboard", "Top XP", "Grace", "Bob")
        assert "(you)" not in board
        assert board.index("Grace") < board.index("Bob")
        page.live()
        assert page.query("gamify-points", "[role=progressbar]", "aria-valuenow") == ["0"]
        page.shot("before", 1280)

        # Ada finishes a lesson in the page (a cross-origin POST with her application key).
        chromium.find_element(By.ID, "event").click()
        page.until("gamify-streak", "1 day", "Keep it going by")
        page.until("gamify-points", "10", "Level: Novice", "40 to Scholar")
        page.until("gamify-achievements", "1 of 2 completed")
        board = page.until("gamify-leaderboard", "Ada (you)")
        assert board.index("Bob") < board.index("Ada")
        assert page.query("gamify-leaderboard", "tr[aria-current=true]", "data-user") == ["ada"]

        # Five more, sent by the customer's backend through the API.
        with httpx.Client(timeout=10) as http:
            response = http.post(
                f"{gamify}/v1/metrics/lessons/event",
                json={"user": {"id": "ada"}, "value": 5},
                headers={"X-API-KEY": org.admin_key},
            )
        assert response.status_code == 201, response.text
        page.until("gamify-points", "60", "Level: Scholar", "Top level reached")
        page.until("gamify-achievements", "2 of 2 completed")
        board = page.until("gamify-leaderboard", "1 Ada (you) 60", "You are now number 1")
        assert board.index("Ada") < board.index("Grace")
        assert page.query("gamify-achievements", "button", "aria-label")[0] == (
            f"Five lessons, completed {achieved_today(chromium)}"
        )
        assert "Achievement unlocked: Five lessons" in page.text("gamify-achievements")
        page.shot("after-events", 1280)

        # Keyboard: one tab stop for the list, arrows move, Enter opens the details.
        chromium.execute_script(
            "document.querySelector('gamify-achievements').shadowRoot"
            ".querySelector('button[tabindex=\"0\"]').focus()"
        )
        chromium.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
        chromium.switch_to.active_element.send_keys(Keys.ENTER)
        assert page.query("gamify-achievements", "button", "aria-expanded") == ["false", "true"]
        assert "First lesson" in page.text("gamify-achievements")
        page.until("gamify-achievements", "Completed")
        assert page.query("gamify-achievements", "button", "tabindex") == ["-1", "0"]
        page.shot("achievement-details", 1280)

        # A phone: one column, nothing wider than the screen; then the dark theme.
        page.viewport(390)
        assert page.no_horizontal_scroll()
        page.shot("phone", 390)
        chromium.find_element(By.ID, "theme").click()
        page.shot("phone-dark", 390)
    finally:
        chromium.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        # The widgets close their streams when they leave the page.
        chromium.execute_script("document.getElementById('widgets').remove()")
        chromium.get("about:blank")


def achieved_today(driver: webdriver.Chrome) -> str:
    return str(
        driver.execute_script(
            "return new Intl.DateTimeFormat(navigator.language,"
            " {day: 'numeric', month: 'short', year: 'numeric'}).format(new Date());"
        )
    )


def test_a_refused_stream_is_reopened_with_a_new_token_from_the_token_url(
    chromium: webdriver.Chrome, gamify: str, page_server: str
) -> None:
    org = OrganizationWithKey("Course")
    configure(org)
    _Page.tokens = {}  # the backend has no token to give yet: the stream cannot open
    _Page.asked = []
    params = {
        "server": gamify,
        "user": "ada",
        "apiKey": org.application_key("ada"),
        "userTokenUrl": f"{page_server}/token/ada",
        "boardToken": "not-a-token",  # refused by gamify: 401
    }
    page = Widgets(chromium, "widgets-stream-reopened")
    page.viewport(1280)
    chromium.get(f"{page_server}/demo/index.html?{urlencode(params)}")
    try:
        # The first read needs no stream; the streams say they are not live.
        page.until("gamify-streak", "0 days", "Not live")
        page.until("gamify-points", "10 to Novice", "Not live")
        # The board reads the API while its stream is refused.
        page.until("gamify-leaderboard", "Grace", "Bob", "Not live")
        page.shot("not-live", 1280)

        # The backend can mint again: the next retry takes its token and goes live.
        _Page.tokens = {"ada": token(org, stream="user", userId="ada", expiresIn=600)}
        page.until("gamify-streak", "Live")
        with httpx.Client(timeout=10) as http:
            response = http.post(
                f"{gamify}/v1/metrics/lessons/event",
                json={"user": {"id": "ada"}, "value": 1},
                headers={"X-API-KEY": org.admin_key},
            )
        assert response.status_code == 201, response.text
        page.until("gamify-streak", "1 day", "Live")
        page.until("gamify-points", "Level: Novice")
        assert "Not live" in page.text("gamify-leaderboard")
        assert {"stream": ["user"], "userId": ["ada"]} in _Page.asked
    finally:
        chromium.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        chromium.execute_script("document.getElementById('widgets').remove()")
        chromium.get("about:blank")
