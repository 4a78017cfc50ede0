"""The repository's Markdown documents point only at what the repository holds.

Every link of README.md, CONTRIBUTING.md, docs/ and bench/ is either a public web address or a
file of this repository that exists (with, for a Markdown file or the document itself, an
anchor that one of its headings makes); nothing points outside the clone, where a newcomer has
nothing. File paths quoted in code spans (`apps/core/outbox.py`) must exist too: the documents
name real files, and a renamed file fails here instead of misleading a reader. And the README's
configuration table names every environment variable the code reads, found by parsing the code;
and every Python block of the README runs, here or, for the quickstarts, against a live server.
"""

import ast
import re
import time
from pathlib import Path
from typing import Any

import pytest

from apps.webhooks.signing import new_secret, signature_headers

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    ROOT / "bench" / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
]

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_INLINE_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE_LINK = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.MULTILINE)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# A relative file path with an extension, as the documents quote them: apps/core/outbox.py,
# bench/README.md, tests/core/test_document_limits.py, docs/dashboard/home.png.
_FILE_PATH = re.compile(r"^(?:\.\./|\./)?[\w.-]+(?:/[\w.-]+)+\.[A-Za-z]{1,5}$")
_PUBLIC = ("https://", "http://", "mailto:")


def without_code_blocks(text: str) -> str:
    return _FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: markup dropped, lower case, punctuation other than - and _
    removed, spaces made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"[`*]", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for heading in _HEADING.findall(without_code_blocks(path.read_text(encoding="utf-8"))):
        base = slug(heading)
        name, n = base, 0
        while name in found:  # GitHub numbers repeated headings: name, name-1, name-2
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return found


def links(path: Path) -> list[str]:
    text = without_code_blocks(path.read_text(encoding="utf-8"))
    text = _CODE_SPAN.sub("", text)  # `[a](b)` in a code span is not a link
    return _INLINE_LINK.findall(text) + _REFERENCE_LINK.findall(text)


def link_problem(document: Path, target: str) -> str | None:
    """Why `target`, a link of `document`, does not resolve inside the repository (None if it
    does)."""
    if target.startswith(_PUBLIC):
        return None
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("/"):
        return "neither a public web address nor a path inside the repository"
    path_part, _, anchor = target.partition("#")
    linked = (document.parent / path_part).resolve() if path_part else document
    if not linked.is_relative_to(ROOT):
        return "points outside the repository"
    if not linked.exists():
        return "no such file in the repository"
    if anchor and linked.suffix == ".md" and anchor not in anchors(linked):
        return f"{linked.relative_to(ROOT)} has no heading whose anchor is #{anchor}"
    return None


def quoted_paths(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [
        span.strip()
        for _, span in _CODE_SPAN.findall(without_code_blocks(text))
        if _FILE_PATH.match(span.strip())
    ]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves_inside_the_repository(document: Path) -> None:
    problems = [
        f"{target}: {problem}"
        for target in links(document)
        if (problem := link_problem(document, target)) is not None
    ]

    assert problems == []


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_quoted_file_path_exists(document: Path) -> None:
    missing = [
        quoted
        for quoted in quoted_paths(document)
        # The documents quote paths from the repository's root; a document in a folder may
        # also quote them from its own folder.
        if not (ROOT / quoted).resolve().is_relative_to(ROOT)
        or not ((ROOT / quoted).exists() or (document.parent / quoted).exists())
    ]

    assert missing == []


def test_the_readme_links_to_the_house_rules() -> None:
    targets = links(ROOT / "README.md")

    assert {"docs/architecture.md", "docs/style.md", "CONTRIBUTING.md"} <= set(targets)


def test_slug_follows_github() -> None:
    assert slug("Quickstart with the Python SDK") == "quickstart-with-the-python-sdk"
    assert slug("Year in review (wrapped)") == "year-in-review-wrapped"
    assert slug("`make test` and *CI*") == "make-test-and-ci"


def test_link_problems_are_found(tmp_path: Path) -> None:
    document = ROOT / "README.md"

    assert link_problem(document, "https://trophy.so") is None
    assert link_problem(document, "docs/style.md#one-app-from-another") is None
    assert link_problem(document, "#using-the-api") is None
    assert link_problem(document, "../shared/design/STYLE.md") == "points outside the repository"
    assert link_problem(document, "docs/nothing-here.md") == "no such file in the repository"
    assert link_problem(document, "#no-such-heading") is not None
    assert link_problem(document, "docs/style.md#no-such-heading") is not None
    assert link_problem(document, "file:///etc/passwd") is not None
    assert link_problem(document, str(tmp_path)) is not None


# --- The configuration table lists every environment variable the code reads ----------------

# Where gamify reads its environment: the settings and what runs beside them (gunicorn's
# configuration, management commands), the benchmark and fuzzing scripts, and the Makefile.
_CONFIGURED = ["gamify", "apps", "bench", "fuzz"]
_ENV_READERS = {
    "env_str",
    "env_int",
    "env_bool",
    "env_list",
    "env_required",
    "env_origins",
    "getenv",
}
# In a Makefile recipe, `$${NAME:-default}` reads the shell's environment; `NAME ?= value`
# takes the environment's NAME when there is one.
_MAKE_READS = re.compile(r"\$\$\{([A-Z][A-Z0-9_]*)|^([A-Z][A-Z0-9_]*)\s*\?=", re.MULTILINE)


def _is_os_environ(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "environ"
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
    )


def _variable_read(node: ast.AST) -> str | None:
    """The name of the environment variable that `node` reads, if it reads one by a literal
    name: env_int("NAME", ...), os.environ.get("NAME"), os.getenv("NAME"), os.environ["NAME"]."""
    if isinstance(node, ast.Call) and node.args:
        function = node.func
        name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
        reads = name in _ENV_READERS or (
            name == "get" and isinstance(function, ast.Attribute) and _is_os_environ(function.value)
        )
        argument = node.args[0]
        if reads and isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            return argument.value
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.ctx, ast.Load)
        and _is_os_environ(node.value)
        and isinstance(node.slice, ast.Constant)
    ):
        return str(node.slice.value)
    return None


def variables_read() -> dict[str, list[str]]:
    """Every environment variable the code reads, with where (file:line)."""
    found: dict[str, list[str]] = {}
    for folder in _CONFIGURED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if (name := _variable_read(node)) is not None:
                    where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"
                    found.setdefault(name, []).append(where)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for match in _MAKE_READS.finditer(makefile):
        line = makefile.count("\n", 0, match.start()) + 1
        found.setdefault(match.group(1) or match.group(2), []).append(f"Makefile:{line}")
    return found


def configuration_table() -> set[str]:
    """The variables the README's configuration table names (first column)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for row in re.findall(r"^\|(.*?)\|", section, re.MULTILINE):
        names.update(re.findall(r"`([A-Z][A-Z0-9_]*)`", row))
    return names


def test_every_environment_variable_read_is_in_the_configuration_table() -> None:
    documented = configuration_table()
    missing = {name: where for name, where in variables_read().items() if name not in documented}

    assert missing == {}, "README.md's configuration table has no row for " + "; ".join(
        f"{name} (read at {', '.join(where)})" for name, where in sorted(missing.items())
    )


def test_the_configuration_table_names_only_variables_the_code_reads() -> None:
    assert configuration_table() - set(variables_read()) == set()


def test_environment_reads_are_found_in_every_form() -> None:
    code = (
        "import os\n"
        'a = env_int("A", 1)\n'
        'b = os.environ.get("B")\n'
        'c = os.environ["C"]\n'
        'd = os.getenv("D")\n'
        'os.environ["WRITTEN"] = "1"\n'
        'e = settings.get("NOT_THE_ENVIRONMENT")\n'
    )
    found = {name for node in ast.walk(ast.parse(code)) if (name := _variable_read(node))}

    assert found == {"A", "B", "C", "D"}
    makefile = "X ?= 1\nrun:\n\t$${Y:-2} $(Z) $$W\nV := 3\n"
    assert [m.group(1) or m.group(2) for m in _MAKE_READS.finditer(makefile)] == ["X", "Y"]


# --- The README's Python code runs ------------------------------------------------------------

# The quickstarts need a live server: tests/contract/test_readme_quickstart.py runs them. The
# rest runs here.
WEBHOOKS = "### Webhooks"


def readme_python_blocks() -> list[tuple[str, str]]:
    """Each ```python block of the README, with the heading of the section that holds it."""
    blocks: list[tuple[str, str]] = []
    heading, fence, code = "", None, []
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if fence is None and line.startswith("```"):
            fence, code = line[3:].strip(), []
        elif fence is not None and line.startswith("```"):
            if fence == "python":
                blocks.append((heading, "\n".join(code) + "\n"))
            fence = None
        elif fence is not None:
            code.append(line)
        elif line.startswith("#"):
            heading = line
    return blocks


def test_every_python_block_of_the_readme_is_run_by_a_test() -> None:
    from tests.contract.test_readme_quickstart import FIRST, SECOND

    headings = [heading for heading, _ in readme_python_blocks()]

    assert sorted(headings) == sorted([FIRST, SECOND, WEBHOOKS])


def test_the_readme_webhook_receiver_verifies_what_gamify_signs() -> None:
    (code,) = [code for heading, code in readme_python_blocks() if heading == WEBHOOKS]
    namespace: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - the README's own code
    verify = namespace["verify"]
    current, previous = new_secret(), new_secret()
    body = b'{"type": "achievement.completed"}'
    now = int(time.time())
    headers = signature_headers([current, previous], "delivery-1", now, body, None)

    assert verify(current, headers, body)
    assert verify(previous, headers, body)  # during a rotation, either secret verifies
    assert not verify(new_secret(), headers, body)
    assert not verify(current, headers, body.replace(b"achievement", b"streak"))
    replayed = signature_headers([current], "delivery-1", now - 600, body, None)
    assert not verify(current, replayed, body)
