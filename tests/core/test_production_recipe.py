"""The README's production recipe, run against a real gunicorn with DEBUG off.

The deployment is made the way the recipe makes it (`migrate`, `collectstatic`,
`create_organization`, gunicorn with gamify's configuration), with production settings and
nothing else from the test run's environment, on a scratch SQLite database. It shows that the
application serves the dashboard's and the API documentation's assets itself (no proxy in front
of it), that the recipe as written redirects plain HTTP to HTTPS (the reason for the README's
advice), and that with `SECURE_SSL_REDIRECT=false` the official SDK works over plain HTTP.
"""

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.client import HTTPConnection
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from trophy import CreateMetricRequestItem, TrophyApi, TrophyApiEnvironment, UpsertedUser

from tests.core.gunicorn_server import gunicorn_start

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# The hashed names of `collectstatic` make a far-future lifetime safe: WhiteNoise's ten years.
FOREVER = "max-age=315360000"


@dataclass
class Deployment:
    env: dict[str, str]
    admin_key: str
    start: Callable[..., str]


def _manage(env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [str(BIN / "python"), "manage.py", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _output(command: subprocess.Popen) -> str:
    out, err = command.communicate(timeout=300)
    assert command.returncode == 0, err[-3000:]
    return out


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    root = tmp_path_factory.mktemp("deployment")
    # The recipe's settings, as an operator exports them, and nothing of the test run's
    # (pytest's DJANGO_SETTINGS_MODULE names the test settings).
    env = {
        "PATH": os.environ.get("PATH", ""),
        "DJANGO_SETTINGS_MODULE": "gamify.settings",
        "DEBUG": "false",
        "SECRET_KEY": "production-recipe-test",
        "ALLOWED_HOSTS": "localhost,127.0.0.1",  # as the README says to try it
        "TRUST_PROXY_HEADERS": "true",
        "DATABASE_URL": f"sqlite:///{root / 'db.sqlite3'}",
        "STATIC_ROOT": str(root / "static"),
        "LOG_LEVEL": "WARNING",
        "XDG_RUNTIME_DIR": str(root),  # gunicorn's control sockets
    }
    # The first two steps are independent: run side by side, they take half the time.
    collectstatic = _manage(env, "collectstatic", "--noinput")
    _output(_manage(env, "migrate", "--noinput"))
    organization = _output(_manage(env, "create_organization", "Acme", "--json"))
    admin_key = json.loads(organization)["apiKey"]
    _output(collectstatic)
    processes: list[subprocess.Popen] = []

    def start(**overrides: str) -> str:
        url, process = gunicorn_start({**env, **overrides}, "--workers=1")
        processes.append(process)
        return url

    yield Deployment(env=env, admin_key=admin_key, start=start)
    for process in processes:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def plain_http(deployment: Deployment) -> str:
    """The stack tried on plain HTTP, before a TLS-terminating proxy exists (README)."""
    return deployment.start(SECURE_SSL_REDIRECT="false")


def assets(page: str) -> list[str]:
    return re.findall(r"""(?:src|href)="(/static/[^"]+)\"""", page)


def test_the_dashboard_assets_are_served_by_the_application(plain_http: str) -> None:
    with httpx.Client(base_url=plain_http, timeout=10) as http:
        login = http.get("/dashboard/login/")
        assert login.status_code == 200
        named = assets(login.text)
        # The theme's styles and scripts (django-unfold), under their hashed names; the
        # dashboard's own stylesheet comes with the pages behind the login.
        assert any(path.startswith("/static/unfold/css/styles.") for path in named), named
        assert any(path.startswith("/static/unfold/js/app.") for path in named), named

        for path in named:
            served = http.get(path)
            assert served.status_code == 200, path
            assert served.headers["Content-Type"].startswith(
                "text/css" if path.endswith(".css") else "text/javascript"
            ), path
            assert FOREVER in served.headers["Cache-Control"], path


def test_the_widgets_are_collected_and_served_to_every_origin(plain_http: str) -> None:
    """The widgets' modules import one another by their plain names (widgets/src), which
    collectstatic keeps beside the hashed ones: served with WhiteNoise's short lifetime, to any
    origin, as a customer's page imports them (README, "Widgets")."""
    modules = sorted(path.name for path in (REPO / "widgets" / "src").glob("*.js"))
    assert "gamify-widgets.js" in modules
    with httpx.Client(base_url=plain_http, timeout=10) as http:
        for name in modules:
            served = http.get(
                f"/static/gamify-widgets/{name}", headers={"Origin": "https://shop.example.com"}
            )
            assert served.status_code == 200, name
            assert served.headers["Content-Type"].startswith("text/javascript"), name
            assert served.headers["Access-Control-Allow-Origin"] == "*", name
            assert FOREVER not in served.headers["Cache-Control"], name
            assert served.text == (REPO / "widgets" / "src" / name).read_text(), name


def test_the_application_api_answers_the_origins_it_is_told(deployment: Deployment) -> None:
    url = deployment.start(
        SECURE_SSL_REDIRECT="false", CORS_ALLOWED_ORIGINS="https://shop.example.com"
    )
    preflight = {
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "x-api-key",
    }
    with httpx.Client(base_url=url, timeout=10) as http:
        for origin, allowed in (("https://shop.example.com", True), ("https://x.example", False)):
            answer = http.options("/v1/users/ada/streak", headers={"Origin": origin, **preflight})
            assert (answer.headers.get("Access-Control-Allow-Origin") == origin) is allowed
            read = http.get("/v1/users/ada/streak", headers={"Origin": origin})
            assert read.status_code == 401
            assert (read.headers.get("Access-Control-Allow-Origin") == origin) is allowed


@pytest.mark.parametrize("docs", ["/v1/docs", "/admin/v1/docs"])
def test_the_api_documentation_assets_are_served_compressed(plain_http: str, docs: str) -> None:
    with httpx.Client(base_url=plain_http, timeout=10) as http:
        page = http.get(docs)
        assert page.status_code == 200
        (script,) = [path for path in assets(page.text) if path.endswith(".js")]
        assert "/redoc/" in script

        served = http.get(script, headers={"Accept-Encoding": "gzip"})
        assert served.status_code == 200
        assert served.headers["Content-Encoding"] == "gzip"
        assert served.headers["Content-Type"].startswith("text/javascript")
        assert "Redoc" in served.text  # httpx decompressed it


def test_the_sdk_works_over_plain_http_with_the_ssl_redirect_off(
    deployment: Deployment, plain_http: str
) -> None:
    with httpx.Client(timeout=10) as http:
        client = TrophyApi(
            api_key=deployment.admin_key,
            environment=TrophyApiEnvironment(
                api=plain_http + "/v1", admin=plain_http + "/admin/v1"
            ),
            max_retries=0,
            httpx_client=http,
        )
        created = client.admin.metrics.create(
            request=[CreateMetricRequestItem(key="words", name="Words")]
        )
        assert [metric.key for metric in created.created] == ["words"]

        event = client.metrics.event(key="words", user=UpsertedUser(id="18"), value=750)

        assert event.total == 750.0
        assert client.users.single_metric(id="18", key="words").current == 750.0


def test_as_written_the_recipe_redirects_plain_http_to_https(deployment: Deployment) -> None:
    # What an operator who tries gunicorn directly meets, and why the README says how to try
    # the stack on plain HTTP: every call is sent to https:// on a port that speaks HTTP, which
    # the SDK reports as "[SSL: WRONG_VERSION_NUMBER]".
    url = deployment.start()
    headers = {"X-API-KEY": deployment.admin_key}
    with httpx.Client(base_url=url, timeout=10) as http:
        redirected = http.get("/v1/users/18", headers=headers)
        assert redirected.status_code == 301
        assert redirected.headers["Location"] == url.replace("http:", "https:") + "/v1/users/18"
        assert http.get("/static/admin/css/base.css").status_code == 301

        # /healthz is exempt (load balancers probe it over HTTP).
        assert http.get("/healthz").status_code == 200
        # Behind the proxy, which says the client's connection was HTTPS, nothing is redirected.
        behind_proxy = http.get(
            "/admin/v1/metrics", headers={**headers, "X-Forwarded-Proto": "https"}
        )
        assert behind_proxy.status_code == 200


def test_the_readme_recipe_runs_what_this_test_runs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Running in production", 1)[1]
    recipe = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert recipe is not None
    steps = [
        "manage.py migrate",
        "manage.py collectstatic --noinput",
        "manage.py create_organization",
        "gunicorn -c python:gamify.gunicorn_conf gamify.wsgi",
    ]
    positions = [recipe.group(1).find(step) for step in steps]
    assert -1 not in positions, dict(zip(steps, positions, strict=True))
    assert positions == sorted(positions)


def test_the_recipes_gunicorn_keeps_a_clients_connection_alive(
    deployment: Deployment, plain_http: str
) -> None:
    # gamify/gunicorn_conf.py runs threaded workers: an SDK's second request reuses its
    # connection (a sync worker would close it after each response: bench/README.md, "Serving
    # and the request path").
    parts = urlsplit(plain_http)
    connection = HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    try:
        for _ in range(2):
            connection.request("GET", "/v1/users/u1", headers={"X-API-KEY": deployment.admin_key})
            response = connection.getresponse()
            response.read()
            assert response.status == 404  # no such user: an answer on the same connection
            assert response.getheader("Connection", "").lower() != "close"
        local_port = connection.sock.getsockname()[1]
        connection.request("GET", "/healthz")
        connection.getresponse().read()
        assert connection.sock.getsockname()[1] == local_port  # not reconnected
    finally:
        connection.close()
