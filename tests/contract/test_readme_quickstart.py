"""The README's quickstarts run as written.

The Python blocks of each quickstart section of the README are executed as a newcomer would run
them, with only what a newcomer changes replaced: the admin key and the server's address (the
one `SERVER` line, which they set to the address `make serve` printed). What the code prints
must be what its comments say it prints (the comment on a `print(...)` line, or on the comment
line right after it), and the server must hold what the quickstart says it wrote.
"""

import contextlib
import io
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from pytest_django.live_server_helper import LiveServer
from trophy.errors import NotFoundError

from apps.achievements.models import Achievement
from apps.leaderboards.models import Leaderboard
from apps.metrics.models import Metric, MetricTotal
from apps.points.models import PointsTotal, PointsTrigger
from apps.streaks.models import StreakCondition
from apps.users.models import EndUser
from tests.contract.helpers import CONTRACT_DB, MakeClient
from tests.factories import OrganizationWithKey

pytestmark = pytest.mark.contract

README = Path(__file__).resolve().parents[2] / "README.md"
FIRST = "### Quickstart with the Python SDK"
SECOND = "### Quickstart: streaks, points, achievements and leaderboards"
KEY_PLACEHOLDER = "YOUR_ADMIN_KEY"
README_SERVER = "http://127.0.0.1:8000"
# The one line a newcomer who chose another PORT edits; the rest of the code derives from it.
SERVER_LINE = f'SERVER = "{README_SERVER}"  # the address `make serve` printed'
ACTIVATION = 'status="active",'


def quickstart_code(heading: str) -> str:
    """The section's Python blocks, in order, as one program."""
    text = README.read_text(encoding="utf-8")
    assert text.count(heading) == 1, f"README.md must have one {heading!r} section"
    section = text.split(heading, 1)[1]
    # The section ends at the next heading of level 2 to 4 (code comments start with one #).
    section = re.split(r"^#{2,4} \S", section, maxsplit=1, flags=re.MULTILINE)[0]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, flags=re.MULTILINE | re.DOTALL)
    assert blocks, "the quickstart section has no ```python block"
    return "\n".join(blocks)


def printed_as_commented(code: str) -> list[str]:
    """What the code's comments say it prints, one entry per print() call."""
    expected = []
    lines = code.splitlines()
    for number, line in enumerate(lines):
        if not line.startswith("print("):
            continue
        inline = re.search(r"\)  # (.+)$", line)
        if inline:
            expected.append(inline.group(1))
        else:
            following = lines[number + 1] if number + 1 < len(lines) else ""
            assert following.startswith("# "), f"print without its output in a comment: {line}"
            expected.append(following[2:])
    return expected


def test_printed_outputs_are_read_from_the_comments() -> None:
    code = "print(a)  # 1\nprint(c)\n# [2, 3]\nx = 1  # not printed\n"

    assert printed_as_commented(code) == ["1", "[2, 3]"]


@pytest.fixture
def sdk_http_clients(
    monkeypatch: pytest.MonkeyPatch, make_client: MakeClient
) -> Iterator[list[httpx.Client]]:
    """Every httpx client the SDK creates for itself while the quickstart runs, closed afterwards.

    Left open, a keep-alive connection would keep a server thread on the database after the
    test; `make_client`'s teardown, which runs after this one, waits for those threads."""
    created: list[httpx.Client] = []

    class Recorded(httpx.Client):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            created.append(self)

    monkeypatch.setattr(httpx, "Client", Recorded)
    yield created
    for http in created:
        http.close()


def runnable(code: str, org: OrganizationWithKey, server: LiveServer) -> str:
    """The code with the newcomer's key and the live server's address in place of the README's.

    Were the README to move to another address or placeholder, this must be told, not run
    against port 8000."""
    assert code.count(KEY_PLACEHOLDER) == 1
    assert code.count(README_SERVER) == 1
    assert code.count(SERVER_LINE) == 1
    return code.replace(KEY_PLACEHOLDER, org.admin_key).replace(README_SERVER, server.url)


def run(program: str) -> tuple[list[str], dict[str, Any]]:
    """What the program printed, line by line, and its globals."""
    output = io.StringIO()
    namespace: dict[str, Any] = {"__name__": "quickstart"}
    with contextlib.redirect_stdout(output):
        # Running the README's code is the point of these tests.
        exec(compile(program, str(README), "exec"), namespace)  # noqa: S102
    return output.getvalue().splitlines(), namespace


@pytest.mark.parametrize("heading", [FIRST, SECOND])
def test_the_server_address_is_one_line_to_change(heading: str) -> None:
    # `PORT=9000 make serve` serves elsewhere; the quickstart must not hard-code port 8000 in
    # several places that a newcomer has to find.
    code = quickstart_code(heading)

    assert code.count(README_SERVER) == 1
    assert code.count(SERVER_LINE) == 1
    assert "SERVER}/v1" in code
    assert "SERVER}/admin/v1" in code


@CONTRACT_DB
def test_readme_quickstart_runs_as_written(
    server: LiveServer, org: OrganizationWithKey, sdk_http_clients: list[httpx.Client]
) -> None:
    code = quickstart_code(FIRST)
    program = runnable(code, org, server)

    printed, _ = run(program)

    assert sdk_http_clients, "the SDK built no httpx client of its own for the fixture to close"
    assert printed == printed_as_commented(code)
    metric = Metric.objects.get(tenant=org.tenant, key="words")
    user = EndUser.objects.get(tenant=org.tenant, external_id="18")
    assert user.tz == "Europe/Paris"
    assert MetricTotal.objects.get(user=user, metric=metric).total == Decimal(1000)

    # As the README says of a second run: no second metric, an issue instead, the events add up.
    _, again = run(program)
    assert again["created"].created == []
    assert [issue.message for issue in again["created"].issues] == [
        "Key already in use by another metric"
    ]
    assert again["event"].total == 2000.0
    assert Metric.objects.filter(tenant=org.tenant, key="words").count() == 1


@CONTRACT_DB
def test_readme_second_quickstart_runs_as_written(
    server: LiveServer, org: OrganizationWithKey, sdk_http_clients: list[httpx.Client]
) -> None:
    code = quickstart_code(SECOND)

    printed, _ = run(runnable(code, org, server))

    assert printed == printed_as_commented(code)
    tenant = org.tenant
    (condition,) = StreakCondition.objects.filter(tenant=tenant)
    assert (condition.metric.key, condition.threshold) == ("lessons", 1)
    (trigger,) = PointsTrigger.objects.filter(system__tenant=tenant, system__key="xp")
    assert (trigger.type, trigger.status, trigger.points) == ("metric", "active", 10)
    assert Achievement.objects.get(tenant=tenant, name="Five lessons").status == "active"
    assert Leaderboard.objects.get(tenant=tenant, key="top-xp").status == "active"
    assert PointsTotal.objects.get(user__external_id="grace", system__key="xp").total == 50


@CONTRACT_DB
def test_without_status_the_second_quickstart_configures_nothing_live(
    server: LiveServer, org: OrganizationWithKey, sdk_http_clients: list[httpx.Client]
) -> None:
    """The README says achievements, leaderboards and points triggers are created inactive
    unless `status` says otherwise: its program without the `status="active"` lines."""
    code = quickstart_code(SECOND)
    lines = code.splitlines()
    kept = [line for line in lines if line.strip() != ACTIVATION]
    assert len(lines) - len(kept) == 3  # the trigger's, the achievement's, the leaderboard's

    with pytest.raises(NotFoundError) as read:
        run(runnable("\n".join(kept), org, server))

    # The last step reads the leaderboard, which an inactive board is not.
    assert read.value.body == {"error": 'Leaderboard not found: "top-xp"'}
    tenant = org.tenant
    assert PointsTrigger.objects.get(system__tenant=tenant).status == "inactive"
    assert Achievement.objects.get(tenant=tenant).status == "inactive"
    assert Leaderboard.objects.get(tenant=tenant).status == "inactive"
    grace = EndUser.objects.get(tenant=tenant, external_id="grace")
    # Lessons are counted; nothing was paid, completed or ranked.
    assert MetricTotal.objects.get(user=grace).total == Decimal(5)
    assert not PointsTotal.objects.filter(user=grace, total__gt=0).exists()
    assert not grace.achievements.exists()
