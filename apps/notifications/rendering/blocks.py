"""Email templates built from typed blocks: their validation, and their compilation into the
same Jinja2 sources the advanced mode is written in (an HTML template through MJML, and a
plain-text template), so that a blocks template is sent, previewed and checked by exactly the
path every template takes (`render.email_render`, in the sandbox, against one context).

What staff type into a block is text, never template code: it is HTML-escaped, and what looks
like template syntax in it stays text. Only variable references, `{{ user.name }}` as the
editor's variable picker writes them (a dotted path under one of the context's names, with an
optional `|date` or `|number`), become template expressions, written out by this module. A
conditional block compares a variable with a value by one of a few operators; the value is
written as a string literal by this module, never as code.

Pure: no ORM, no settings.
"""

import html
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from mjml import mjml2html

from apps.core.errors import ValidationError

MAX_BLOCKS = 100  # blocks in a template, those inside conditional blocks included
MAX_DEPTH = 3  # conditional blocks inside conditional blocks, at most this deep
MAX_BLOCK_TEXT = 5_000  # characters of one block's text
MAX_SHORT = 500  # characters of a label, an alt text, a URL, a compared value
IMAGE_WIDTHS = (40, 600)  # pixels

# The context's top-level names (apps/notifications/context.py, README "Template variables").
ROOTS = frozenset(
    {"user", "app", "achievement", "streak", "metrics", "points", "leaderboards", "recap"}
    | {"reactivation", "league", "quests", "preferencesUrl", "unsubscribeUrl"}
)
# Filters a reference may end with: formatting only.
REFERENCE_FILTERS = frozenset({"date", "number"})
# Variables that hold a link, which a button or an image may start with.
LINK_VARIABLES = frozenset(
    {"app.url", "app.logoUrl", "achievement.badgeUrl", "preferencesUrl", "unsubscribeUrl"}
)
LINK_SCHEMES = ("https://", "http://", "mailto:")

_SEGMENT = r"[A-Za-z0-9_-]+"
_PATH = rf"[A-Za-z_]\w*(?:\.{_SEGMENT}|\[\"{_SEGMENT}\"\]|\['{_SEGMENT}'\])*"
_REFERENCE = re.compile(r"\{\{\s*(" + _PATH + r")\s*(?:\|\s*([a-z]+)\s*)?\}\}")
_ANY_EXPRESSION = re.compile(r"\{\{.*?\}\}", re.DOTALL)
_PARTS = re.compile(rf"\.({_SEGMENT})|\[[\"']({_SEGMENT})[\"']\]")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*\Z")
_JINJA_WORDS = frozenset({"and", "or", "not", "in", "is", "if", "else", "true", "false", "none"})
_NUMBER = re.compile(r"-?\d{1,15}(?:\.\d{1,10})?\Z")


class Operator:
    """How a conditional block compares its variable with its value."""

    IS = "is"  # equal, as text, ignoring case (numbers without trailing zeros)
    IS_NOT = "isNot"
    IS_SET = "isSet"  # present, and not empty, zero or false
    IS_NOT_SET = "isNotSet"
    AT_LEAST = "atLeast"  # a number, at least the value
    BELOW = "below"  # a number, below the value

    ALL = ("is", "isNot", "isSet", "isNotSet", "atLeast", "below")
    WITHOUT_VALUE = ("isSet", "isNotSet")
    NUMERIC = ("atLeast", "below")


BLOCK_TYPES: dict[str, str] = {
    "heading": "Heading",
    "text": "Text",
    "button": "Button",
    "image": "Image",
    "achievement": "Achievement card",
    "streak": "Streak summary",
    "points": "Points and level",
    "leaderboard": "Leaderboard rank",
    "conditional": "Conditional",
    "divider": "Divider",
}

# Each type's fields: name -> (required, kind). Kinds: text (variables allowed, one line
# unless multiline), link, key, integer, operator, blocks.
_FIELDS: dict[str, dict[str, tuple[bool, str]]] = {
    "heading": {"text": (True, "line")},
    "text": {"text": (True, "multiline")},
    "button": {"label": (True, "line"), "url": (True, "link")},
    "image": {"url": (True, "link"), "alt": (False, "line"), "width": (False, "integer")},
    "achievement": {},
    "streak": {},
    "points": {"system": (True, "key")},
    "leaderboard": {"leaderboard": (True, "key")},
    "conditional": {
        "variable": (True, "path"),
        "operator": (True, "operator"),
        "value": (False, "value"),
        "blocks": (True, "blocks"),
    },
    "divider": {},
}


# --- validation -------------------------------------------------------------------------------


def _problem(where: str, message: str) -> ValidationError:
    return ValidationError("{blocks}: " + f"{where}: {message}", fields="blocks", code="invalid")


def _reference_problem(text: str) -> str | None:
    """Why `text` holds a variable reference that is not one, or None."""
    for found in _ANY_EXPRESSION.finditer(text):
        match = _REFERENCE.fullmatch(found.group(0))
        if match is None:
            return (
                f"“{found.group(0)[:60]}” is not a variable reference: insert variables with "
                "the picker, as {{ user.name }}"
            )
        root = re.match(r"[A-Za-z_]\w*", match.group(1))
        if root is None or root.group(0) not in ROOTS:
            return f"“{match.group(1)}” is not a template variable"
        if match.group(2) is not None and match.group(2) not in REFERENCE_FILTERS:
            return f"“|{match.group(2)}” is not allowed: only |date and |number"
    return None


def _path_segments(path: str) -> list[str] | None:
    match = re.fullmatch(rf"([A-Za-z_]\w*)((?:\.{_SEGMENT}|\[[\"']{_SEGMENT}[\"']\])*)", path)
    if match is None or match.group(1) not in ROOTS:
        return None
    return [match.group(1), *(a or b for a, b in _PARTS.findall(match.group(2)))]


def _link_problem(url: str) -> str | None:
    problem = _reference_problem(url)
    if problem is not None:
        return problem
    if url.startswith(LINK_SCHEMES):
        return None
    first = _REFERENCE.match(url)
    if first is not None and first.group(1) in LINK_VARIABLES and first.group(2) is None:
        return None
    variables = ", ".join(sorted(LINK_VARIABLES))
    return f"must start with https://, http://, mailto: or one of {variables}"


def _field_problem(kind: str, value: Any) -> str | None:
    if kind in ("line", "multiline", "link", "value"):
        if not isinstance(value, str):
            return "must be a string"
        limit = MAX_BLOCK_TEXT if kind == "multiline" else MAX_SHORT
        if len(value) > limit:
            return f"is longer than {limit:,} characters"
        if kind == "line" and ("\n" in value or "\r" in value):
            return "must be one line"
        if kind == "link":
            return _link_problem(value.strip())
        if kind == "value":
            return "must be one line" if any(ord(c) < 32 for c in value) else None
        return _reference_problem(value)
    if kind == "key":
        if not isinstance(value, str) or not re.fullmatch(_SEGMENT, value) or len(value) > 100:
            return "must be a key (letters, digits, - and _)"
        return None
    if kind == "integer":
        low, high = IMAGE_WIDTHS
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return f"must be a whole number of pixels from {low} to {high}"
        return None
    if kind == "operator":
        return None if value in Operator.ALL else "must be one of " + ", ".join(Operator.ALL)
    if kind == "path":
        if not isinstance(value, str) or len(value) > MAX_SHORT or _path_segments(value) is None:
            return "must be a template variable, such as user.attributes.plan or streak.length"
        return None
    if kind == "blocks" and not isinstance(value, list):
        return "must be a list of blocks"
    return None


def blocks_check(blocks: Any) -> list[dict[str, Any]]:
    """The blocks as stored (each a dict of its type's fields, nothing else), or a
    ValidationError naming the first block at fault ("block 2 (button): url ...")."""
    if not isinstance(blocks, list):
        raise ValidationError("{blocks} must be a list of blocks", fields="blocks", code="invalid")
    count = [0]

    def check(items: list[Any], depth: int, prefix: str) -> list[dict[str, Any]]:
        checked = []
        for index, block in enumerate(items, start=1):
            count[0] += 1
            if count[0] > MAX_BLOCKS:
                raise _problem("the template", f"at most {MAX_BLOCKS} blocks are allowed")
            where = f"block {prefix}{index}"
            if not isinstance(block, dict):
                raise _problem(where, "must be an object with a type")
            kind = block.get("type")
            if not isinstance(kind, str) or kind not in _FIELDS:
                raise _problem(where, "type must be one of " + ", ".join(BLOCK_TYPES))
            where = f"{where} ({kind})"
            fields = _FIELDS[kind]
            unknown = sorted(set(block) - set(fields) - {"type"})
            if unknown:
                raise _problem(where, f"unknown field {unknown[0]}")
            clean: dict[str, Any] = {"type": kind}
            for name, (required, field_kind) in fields.items():
                value = block.get(name)
                if value is None or value == "":
                    if required and name != "value":
                        raise _problem(where, f"{name} is required")
                    continue
                problem = _field_problem(field_kind, value)
                if problem is not None:
                    raise _problem(where, f"{name} {problem}")
                if field_kind == "blocks":
                    if depth >= MAX_DEPTH:
                        raise _problem(where, f"conditional blocks nest at most {MAX_DEPTH} deep")
                    value = check(value, depth + 1, f"{prefix}{index}.")
                clean[name] = value
            if kind == "conditional":
                clean.setdefault("blocks", [])
                operator = clean["operator"]
                if operator not in Operator.WITHOUT_VALUE and "value" not in clean:
                    raise _problem(where, f"value is required with {operator}")
                if operator in Operator.NUMERIC and not _NUMBER.match(clean["value"].strip()):
                    raise _problem(where, f"value must be a number with {operator}")
                if operator in Operator.WITHOUT_VALUE:
                    clean.pop("value", None)
            checked.append(clean)
        return checked

    return check(blocks, 1, "")


# --- compilation ------------------------------------------------------------------------------


def _jinja_path(path: str) -> str:
    """A checked variable path as a Jinja expression: identifiers by dot, other keys (metric
    keys with dashes) by subscript; the characters of a key are letters, digits, - and _."""
    segments = _path_segments(path)
    if segments is None:  # checked by blocks_check
        raise ValueError(f"not a variable: {path!r}")
    out = segments[0]
    for segment in segments[1:]:
        plain = _IDENTIFIER.match(segment) and segment.lower() not in _JINJA_WORDS
        out += f".{segment}" if plain else f'["{segment}"]'
    return out


def _string_literal(value: str) -> str:
    """A Jinja string literal of any text: JSON's escapes are Jinja's (and Python's)."""
    return json.dumps(value, ensure_ascii=True)


_PLACEHOLDER = "gmfyjinja"  # a placeholder's start (letters only: MJML keeps it as it is)


class _Writer:
    """Builds an MJML document in which every template construct is a placeholder token, so
    that MJML never sees (nor mangles) template syntax; `html` renders the MJML and puts the
    constructs back, with every other brace of the output made literal."""

    def __init__(self) -> None:
        self.snippets: list[str] = []

    def token(self, jinja: str) -> str:
        self.snippets.append(jinja)
        return f"{_PLACEHOLDER}{len(self.snippets) - 1}x"

    def text(self, value: str, *, lines: bool = False) -> str:
        """Staff's text as HTML: escaped, its variable references as expressions."""
        out, start = [], 0
        for match in _REFERENCE.finditer(value):
            out.append(self._literal(value[start : match.start()], lines))
            out.append(self.token(_reference(match)))
            start = match.end()
        out.append(self._literal(value[start:], lines))
        return "".join(out)

    @staticmethod
    def _literal(value: str, lines: bool) -> str:
        # Typed text that looks like a placeholder stays text: its "a" as a character reference.
        escaped = html.escape(value, quote=True).replace(_PLACEHOLDER, _PLACEHOLDER[:-1] + "&#97;")
        return escaped.replace("\n", "<br>") if lines else escaped

    def raw(self, jinja: str) -> str:
        """A statement between elements of a column ({% if %}, {% endif %})."""
        return f"<mj-raw>{self.token(jinja)}</mj-raw>"

    def html(self, mjml: str) -> str:
        try:
            rendered = mjml2html(mjml)
        except Exception as exc:  # written by this module: not expected, never a 500
            raise ValidationError(
                "{blocks}: the email's layout could not be built: " + str(exc)[:200],
                fields="blocks",
                code="invalid",
            ) from exc
        literal = rendered.replace("{", '{{ "{" }}')  # the CSS's braces, never a construct
        return re.sub(_PLACEHOLDER + r"(\d+)x", lambda m: self.snippets[int(m.group(1))], literal)


def _reference(match: re.Match[str]) -> str:
    path = _jinja_path(match.group(1).replace("'", '"'))
    return "{{ " + path + (f"|{match.group(2)}" if match.group(2) else "") + " }}"


def _text_source(value: str) -> str:
    """Staff's text in the plain-text template: verbatim, its references as expressions."""
    out, start = [], 0
    for match in _REFERENCE.finditer(value):
        out.append(value[start : match.start()].replace("{", '{{ "{" }}'))
        out.append(_reference(match))
        start = match.end()
    out.append(value[start:].replace("{", '{{ "{" }}'))
    return "".join(out)


def _condition(block: Mapping[str, Any]) -> str:
    path, operator = _jinja_path(block["variable"]), block["operator"]
    value = str(block.get("value", "")).strip()
    if operator == Operator.IS_SET:
        return path
    if operator == Operator.IS_NOT_SET:
        return f"not {path}"
    if operator in Operator.NUMERIC:
        number = Decimal(value)  # checked by blocks_check
        sign = ">=" if operator == Operator.AT_LEAST else "<"
        return f"({path} is number and {path} {sign} {number})"
    text = f"(({path})|number|string|lower)"
    sign = "==" if operator == Operator.IS else "!="
    return f"{text} {sign} {_string_literal(value.lower())}"


def _frequency_unit(streak: str) -> str:
    return (
        f"{{% if {streak}.frequency == 'weekly' %}}week{{% elif {streak}.frequency == "
        f"'monthly' %}}month{{% else %}}day{{% endif %}}"
    )


@dataclass(frozen=True)
class Compiled:
    """A blocks template as the advanced mode would have written it."""

    html: str
    text: str


_MUTED = "#6b7280"
_CARD = "#f9fafb"


def _html_blocks(w: _Writer, blocks: Sequence[Mapping[str, Any]], brand: str) -> Iterator[str]:
    for block in blocks:
        kind = block["type"]
        if kind == "heading":
            yield (
                '<mj-text font-size="24px" font-weight="700" line-height="1.3" '
                f'padding-bottom="4px">{w.text(block["text"])}</mj-text>'
            )
        elif kind == "text":
            for paragraph in re.split(r"\n\s*\n", block["text"].strip()):
                yield f"<mj-text>{w.text(paragraph, lines=True)}</mj-text>"
        elif kind == "button":
            href = w.text(block["url"].strip())
            yield (
                f'<mj-button href="{href}" background-color="{brand}" font-size="16px" '
                f'font-weight="600" border-radius="6px" inner-padding="12px 24px">'
                f"{w.text(block['label'])}</mj-button>"
            )
        elif kind == "image":
            width = block.get("width")
            size = f' width="{width}px"' if width else ""
            alt = w.text(block.get("alt", ""))
            yield f'<mj-image src="{w.text(block["url"].strip())}" alt="{alt}"{size} />'
        elif kind == "divider":
            yield '<mj-divider border-width="1px" border-color="#e5e7eb" />'
        elif kind == "achievement":
            yield w.raw("{% if achievement %}")
            yield w.raw("{% if achievement.badgeUrl %}")
            src, alt = w.token("{{ achievement.badgeUrl }}"), w.token("{{ achievement.name }}")
            yield (
                f'<mj-image src="{src}" alt="{alt}" width="96px" padding-bottom="0" '
                f'container-background-color="{_CARD}" />'
            )
            yield w.raw("{% endif %}")
            yield (
                f'<mj-text align="center" container-background-color="{_CARD}" '
                'font-size="20px" font-weight="700">'
                + w.token("{{ achievement.name }}")
                + "</mj-text>"
            )
            yield (
                f'<mj-text align="center" container-background-color="{_CARD}" '
                f'color="{_MUTED}" padding-top="0">'
                + w.token(
                    "{{ achievement.description }}{% if achievement.rarity is not none %}"
                    "<br>Earned by {{ achievement.rarity|number(places=1) }}% of users"
                    "{% endif %}"
                )
                + "</mj-text>"
            )
            yield w.raw("{% endif %}")
        elif kind == "streak":
            yield w.raw("{% if streak and streak.length %}")
            yield (
                f'<mj-text align="center" container-background-color="{_CARD}" '
                f'font-size="28px" font-weight="700" color="{brand}">'
                + w.token("{{ streak.length }}-" + _frequency_unit("streak") + " streak")
                + "</mj-text>"
            )
            yield (
                f'<mj-text align="center" container-background-color="{_CARD}" '
                f'color="{_MUTED}" padding-top="0">'
                + w.token(
                    "{% if streak.extended %}Extended this period: well done."
                    "{% elif streak.expires %}Keep it going by {{ streak.expires|date }}."
                    "{% endif %}"
                )
                + "</mj-text>"
            )
            yield w.raw("{% endif %}")
        elif kind == "points":
            system = _jinja_path(f'points["{block["system"]}"]')
            yield w.raw(f"{{% if {system} %}}")
            yield (
                f'<mj-text align="center" container-background-color="{_CARD}" '
                f'font-size="28px" font-weight="700" color="{brand}">'
                + w.token(f"{{{{ {system}.total|number(grouping=true) }}}} {{{{ {system}.name }}}}")
                + "</mj-text>"
            )
            yield (
                f'<mj-text align="center" container-background-color="{_CARD}" '
                f'color="{_MUTED}" padding-top="0">'
                + w.token(
                    f"{{% if {system}.level %}}Level: {{{{ {system}.level.name }}}}{{% endif %}}"
                    f"{{% if {system}.change %}} (+{{{{ {system}.change|number(grouping=true) }}}}"
                    " this period){% endif %}"
                )
                + "</mj-text>"
            )
            yield w.raw("{% endif %}")
        elif kind == "leaderboard":
            board = _jinja_path(f'leaderboards["{block["leaderboard"]}"]')
            yield w.raw(f"{{% if {board} and {board}.rank %}}")
            yield (
                f'<mj-text align="center" container-background-color="{_CARD}" '
                f'font-size="28px" font-weight="700" color="{brand}">'
                + w.token(f"#{{{{ {board}.rank }}}}")
                + "</mj-text>"
            )
            yield (
                f'<mj-text align="center" container-background-color="{_CARD}" '
                f'color="{_MUTED}" padding-top="0">'
                + w.token(f"on {{{{ {board}.name }}}}")
                + "</mj-text>"
            )
            yield w.raw("{% endif %}")
        elif kind == "conditional":
            yield w.raw(f"{{% if {_condition(block)} %}}")
            yield from _html_blocks(w, block["blocks"], brand)
            yield w.raw("{% endif %}")


def _text_blocks(blocks: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    for block in blocks:
        # A line ending with a statement loses its line break (trim_blocks): blank lines
        # enough after each block, which the render's tidying folds into one.
        yield from _text_block(block)
        yield from ("", "", "")


def _text_block(block: Mapping[str, Any]) -> Iterator[str]:
    kind = block["type"]
    if kind == "heading":
        yield _text_source(block["text"])
    elif kind == "text":
        yield _text_source(block["text"].strip())
    elif kind == "button":
        yield f"{_text_source(block['label'])}: {_text_source(block['url'].strip())}"
    elif kind == "image":
        if block.get("alt"):
            yield f"[{_text_source(block['alt'])}]"
    elif kind == "divider":
        yield "----------"
    elif kind == "achievement":
        yield "{% if achievement %}"
        yield "{{ achievement.name }}"
        yield "{{ achievement.description }}"
        yield (
            "{% if achievement.rarity is not none %}Earned by "
            "{{ achievement.rarity|number(places=1) }}% of users{% endif %}"
        )
        yield "{% endif %}"
    elif kind == "streak":
        yield "{% if streak and streak.length %}"
        yield "{{ streak.length }}-" + _frequency_unit("streak") + " streak"
        yield "{% endif %}"
    elif kind == "points":
        system = _jinja_path(f'points["{block["system"]}"]')
        yield f"{{% if {system} %}}"
        yield (
            f"{{{{ {system}.total|number(grouping=true) }}}} {{{{ {system}.name }}}}"
            f"{{% if {system}.level %}} (level: {{{{ {system}.level.name }}}}){{% endif %}}"
        )
        yield "{% endif %}"
    elif kind == "leaderboard":
        board = _jinja_path(f'leaderboards["{block["leaderboard"]}"]')
        yield f"{{% if {board} and {board}.rank %}}"
        yield f"#{{{{ {board}.rank }}}} on {{{{ {board}.name }}}}"
        yield "{% endif %}"
    elif kind == "conditional":
        yield f"{{% if {_condition(block)} %}}"
        yield from _text_blocks(block["blocks"])
        yield "{% endif %}"


_DOCUMENT = """<mjml>
<mj-head>
<mj-attributes>
<mj-all font-family="Helvetica, Arial, sans-serif" />
<mj-text font-size="16px" line-height="1.5" color="#111827" />
</mj-attributes>
</mj-head>
<mj-body background-color="#f3f4f6" width="600px">
<mj-section background-color="{brand}" padding="16px 0">
<mj-column>
{logo}
</mj-column>
</mj-section>
<mj-section background-color="#ffffff" padding="24px 0">
<mj-column>
{blocks}
</mj-column>
</mj-section>
<mj-section padding="16px 0">
<mj-column>
<mj-text align="center" font-size="12px" color="{muted}">{footer}</mj-text>
</mj-column>
</mj-section>
</mj-body>
</mjml>"""


def blocks_compile(blocks: Sequence[Mapping[str, Any]]) -> Compiled:
    """Checked blocks (blocks_check) as the HTML and text templates they stand for: the brand's
    header (logo, else the app's name, on the brand colour), the blocks, and a footer with the
    preference and unsubscribe links. The brand comes from the context's `app` at render time,
    so a change of branding needs no new template."""
    w = _Writer()
    brand = w.token("{{ app.brandColor }}")
    app_name = w.token("{{ app.name }}")
    logo = "\n".join(
        [
            w.raw("{% if app.logoUrl %}"),
            f'<mj-image src="{w.token("{{ app.logoUrl }}")}" alt="{app_name}" height="40px" '
            'width="160px" padding="0" />',
            w.raw("{% else %}"),
            f'<mj-text align="center" color="#ffffff" font-size="20px" font-weight="700" '
            f'padding="0">{app_name}</mj-text>',
            w.raw("{% endif %}"),
        ]
    )
    footer = (
        f'<a href="{w.token("{{ preferencesUrl }}")}" style="color:{_MUTED}">'
        "Manage email preferences</a> · "
        f'<a href="{w.token("{{ unsubscribeUrl }}")}" style="color:{_MUTED}">Unsubscribe</a>'
    )
    mjml = _DOCUMENT.format(
        brand=brand,
        logo=logo,
        blocks="\n".join(_html_blocks(w, blocks, brand)),
        muted=_MUTED,
        footer=footer,
    )
    text_lines = [
        "{{ app.name }}",
        "",
        *_text_blocks(blocks),
        "",
        "Manage email preferences: {{ preferencesUrl }}",
        "Unsubscribe: {{ unsubscribeUrl }}",
    ]
    return Compiled(html=w.html(mjml), text="\n".join(text_lines) + "\n")


# --- what the editor offers -------------------------------------------------------------------


@dataclass(frozen=True)
class Variable:
    path: str
    label: str
    types: tuple[str, ...] = ()  # the notification types whose context has it; () all


_ACHIEVEMENT = ("achievement_completed",)
_LEAGUE = ("league_result", "league_at_risk")
_QUESTS = ("quest_reminder",)

VARIABLES: tuple[Variable, ...] = (
    Variable("user.name", "User: name"),
    Variable("user.id", "User: id"),
    Variable("user.email", "User: email"),
    Variable("app.name", "App: name"),
    Variable("app.url", "App: URL"),
    Variable("achievement.name", "Achievement: name", _ACHIEVEMENT),
    Variable("achievement.key", "Achievement: key", _ACHIEVEMENT),
    Variable("achievement.description", "Achievement: description", _ACHIEVEMENT),
    Variable("achievement.rarity", "Achievement: % of users who have it", _ACHIEVEMENT),
    Variable("achievement.completions", "Achievement: times completed", _ACHIEVEMENT),
    Variable("achievement.badgeUrl", "Achievement: badge URL", _ACHIEVEMENT),
    Variable("streak.length", "Streak: length"),
    Variable("streak.frequency", "Streak: frequency"),
    Variable("streak.extended", "Streak: extended this period"),
    Variable("streak.expires|date", "Streak: expires on"),
    Variable("recap.periodStart|date", "Recap: period start", ("recap",)),
    Variable("recap.periodEnd|date", "Recap: period end", ("recap",)),
    Variable("reactivation.daysSinceLastActive", "Days since last active", ("reactivation",)),
    Variable("league.name", "League: name", _LEAGUE),
    Variable("league.tier", "League: tier", _LEAGUE),
    Variable("league.rank", "League: rank", _LEAGUE),
    Variable("league.zone", "League: zone", _LEAGUE),
    Variable("quests.unfinished", "Quests: unfinished today", _QUESTS),
    Variable("quests.total", "Quests: today's", _QUESTS),
    Variable("quests.names", "Quests: names of the unfinished", _QUESTS),
    Variable("preferencesUrl", "Preferences page URL"),
    Variable("unsubscribeUrl", "Unsubscribe URL"),
)


def variables_for(
    type: str,
    *,
    attribute_keys: Sequence[str] = (),
    metric_keys: Sequence[str] = (),
    points_keys: Sequence[str] = (),
    board_keys: Sequence[str] = (),
) -> list[dict[str, str]]:
    """The variables the picker offers for a notification type, the tenant's own user
    attributes, metrics, points systems and leaderboards included: [{path, label}], each path
    written as the picker inserts it ({{ path }})."""
    found = [
        {"path": v.path, "label": v.label} for v in VARIABLES if not v.types or type in v.types
    ]

    def key_path(root: str, key: str, rest: str) -> str:
        return _jinja_path(f'{root}["{key}"]') + rest

    found += [
        {"path": key_path("user.attributes", k, ""), "label": f"User attribute: {k}"}
        for k in attribute_keys
    ]
    found += [
        {"path": key_path("metrics", k, ".total"), "label": f"Metric {k}: total"}
        for k in metric_keys
    ]
    found += [
        {"path": key_path("points", k, ".total"), "label": f"Points {k}: total"}
        for k in points_keys
    ] + [
        {"path": key_path("points", k, ".level.name"), "label": f"Points {k}: level"}
        for k in points_keys
    ]
    found += [
        {"path": key_path("leaderboards", k, ".rank"), "label": f"Leaderboard {k}: rank"}
        for k in board_keys
    ]
    return found


STARTER_SUBJECTS = {
    "achievement_completed": "You unlocked {{ achievement.name }}!",
    "streak_reminder": "Keep your streak going, {{ user.name }}",
    "recap": "Your recap from {{ app.name }}",
    "reactivation": "We miss you, {{ user.name }}",
    "league_result": "Your week in {{ league.name }}",
    "league_at_risk": "Your place in {{ league.name }} is at risk",
    "quest_reminder": "{{ quests.unfinished }} of today's quests left",
}


def starter_blocks(type: str) -> list[dict[str, Any]]:
    """What a new blocks template of `type` starts with."""
    button = {"type": "button", "label": "Open {{ app.name }}", "url": "{{ app.url }}"}
    if type == "achievement_completed":
        return [
            {"type": "heading", "text": "Achievement unlocked!"},
            {"type": "text", "text": "Well done, {{ user.name }}: you earned a new badge."},
            {"type": "achievement"},
            button,
        ]
    if type == "streak_reminder":
        return [
            {"type": "heading", "text": "Keep your streak going"},
            {"type": "streak"},
            button,
        ]
    if type == "recap":
        return [
            {"type": "heading", "text": "Your recap"},
            {
                "type": "text",
                "text": "{{ recap.periodStart|date }} to {{ recap.periodEnd|date }}",
            },
            {"type": "streak"},
            button,
        ]
    if type == "reactivation":
        return [
            {"type": "heading", "text": "We miss you, {{ user.name }}"},
            {"type": "text", "text": "It has been {{ reactivation.daysSinceLastActive }} days."},
            button,
        ]
    if type == "quest_reminder":
        return [
            {"type": "heading", "text": "Today's quests end at midnight"},
            {
                "type": "text",
                "text": "You have {{ quests.unfinished }} of today's {{ quests.total }} quests "
                "left: {{ quests.names }}.",
            },
            button,
        ]
    return [
        {"type": "heading", "text": "{{ league.name }}"},
        {"type": "text", "text": "You are ranked {{ league.rank }} in the {{ league.tier }} tier."},
        button,
    ]
