"""The README's quickstart runs as written.

The Python blocks of the README's "Quickstart with the Python SDK" section are executed as a
newcomer would run them, with only what a newcomer changes replaced: the admin key and the
server's address. What the code prints must be what its comments say it prints (the comment on a
`print(...)` line, or on the comment line right after it), and the server must hold what the
quickstart says it wrote.
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

from apps.metrics.models import Metric, MetricTotal
from apps.users.models import EndUser
from tests.contract.helpers import CONTRACT_DB, MakeClient
from tests.factories import OrganizationWithKey

pytestmark = pytest.mark.contract

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "### Quickstart with the Python SDK"
KEY_PLACEHOLDER = "YOUR_ADMIN_KEY"
README_SERVER = "http://127.0.0.1:8000"


def quickstart_code() -> str:
    """The section's Python blocks, in order, as one program."""
    text = README.read_text(encoding="utf-8")
    assert text.count(SECTION) == 1, f"README.md must have one {SECTION!r} section"
    section = text.split(SECTION, 1)[1]
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


@CONTRACT_DB
def test_readme_quickstart_runs_as_written(
    server: LiveServer, org: OrganizationWithKey, sdk_http_clients: list[httpx.Client]
) -> None:
    code = quickstart_code()
    # What a newcomer replaces, and nothing else; were the README to move to another address
    # or placeholder, this test must be told, not run against port 8000.
    assert code.count(KEY_PLACEHOLDER) == 1
    assert code.count(README_SERVER) == 2
    program = code.replace(KEY_PLACEHOLDER, org.admin_key).replace(README_SERVER, server.url)

    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        # Running the README's code is the point of this test.
        exec(compile(program, str(README), "exec"), {"__name__": "quickstart"})  # noqa: S102

    assert sdk_http_clients, "the SDK built no httpx client of its own for the fixture to close"
    assert output.getvalue().splitlines() == printed_as_commented(code)
    metric = Metric.objects.get(tenant=org.tenant, key="words")
    user = EndUser.objects.get(tenant=org.tenant, external_id="18")
    assert user.tz == "Europe/Paris"
    assert MetricTotal.objects.get(user=user, metric=metric).total == Decimal(1000)

    # As the README says of a second run: no second metric, an issue instead, the events add up.
    again: dict[str, Any] = {"__name__": "quickstart"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(program, str(README), "exec"), again)  # noqa: S102
    assert again["created"].created == []
    assert [issue.message for issue in again["created"].issues] == [
        "Key already in use by another metric"
    ]
    assert again["event"].total == 2000.0
    assert Metric.objects.filter(tenant=org.tenant, key="words").count() == 1
