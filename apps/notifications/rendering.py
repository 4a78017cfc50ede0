"""Rendering of email templates, which tenants write and which are therefore untrusted.

A template runs in Jinja2's sandbox with everything beyond plain data taken away: no loader, no
default globals, an allowlist of methods, no `self`, and no `str.format`. Because it runs on our
workers, for every user of a tenant, it also runs on budgets (range() numbers, loop iterations,
calls, characters built, output) so that one template can neither stall a worker nor exhaust
its memory. Every failure is a TemplateRenderError naming the part (subject, html or text).

Blocks trim their own line (`trim_blocks`, `lstrip_blocks`): most templates are plain text
around `{% if %}` lines, and the text part would otherwise be full of blank lines.
"""

import datetime as dt
import functools
import hashlib
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Context, Decimal
from html.parser import HTMLParser
from typing import Any

import css_inline
from django.conf import settings
from jinja2 import BaseLoader, ChainableUndefined, Environment, Template, TemplateError, nodes
from jinja2 import filters as jinja_filters
from jinja2.exceptions import SecurityError, TemplateNotFound, TemplateSyntaxError
from jinja2.nodes import EvalContext
from jinja2.runtime import Context as TemplateContext
from jinja2.runtime import LoopContext, Undefined, markup_join, str_join
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import pass_context, pass_eval_context
from jinja2.visitor import NodeTransformer
from markupsafe import soft_str

from apps.notifications.choices import NotificationType
from apps.notifications.errors import TemplateRenderError

MAX_SOURCE = {"subject": 1_000, "html": 200_000, "text": 100_000}  # characters of template
MAX_OUTPUT = 1_000_000  # characters of one rendered part
MAX_INLINED = 2 * MAX_OUTPUT  # inlining CSS repeats declarations on every element they match
# css_inline merges every matching declaration into each element's style attribute, at a cost
# near elements x declarations x (declarations + 100) nanoseconds: a stylesheet of a few
# thousand declarations under `*` kept a worker busy for minutes in a trial. This bound keeps
# it under half a second and passes real emails (a builder's, 1,500 elements x 250
# declarations, needs 1.3e8).
MAX_INLINING_WORK = 200_000_000
MAX_SUBJECT = 998  # the longest header line RFC 5322 allows
MAX_INT_BITS = 1_024  # no email needs a number past 10**300; bigger ones only cost CPU
# Per render of one part. Ample for an email (a recap loops over a few dozen metrics), and
# small enough that the worst template finishes in well under a second.
BUDGETS = {
    "range": (10_000, "range() may produce at most {:,} numbers"),
    "loop": (10_000, "loops may run at most {:,} times"),
    "call": (10_000, "at most {:,} function calls are allowed"),
    "build": (2_000_000, "at most {:,} characters or items may be built"),
}

# Methods a template may call on plain data; every other attribute of a non-dict is refused.
SAFE_METHODS: tuple[tuple[type | tuple[type, ...], frozenset[str]], ...] = (
    (dict, frozenset({"get", "items", "keys", "values"})),
    ((list, tuple), frozenset({"count", "index"})),
    (
        str,
        frozenset(
            {"capitalize", "endswith", "lower", "lstrip", "rstrip", "split", "splitlines"}
            | {"startswith", "strip", "title", "upper"}
        ),
    ),
)
# Each multiplies its input by an argument (a width, a padding); none is needed in an email.
DROPPED_FILTERS = ("center", "format", "indent", "pprint", "wordwrap")
_SIZED = (str, list, tuple)
# Filter names a template cannot spell (not identifiers): inserted by _Budgeted only.
_LOOP_FILTER = "gamify:loop"
_CONCAT_FILTER = "gamify:concat"


class _RenderLimitError(Exception):
    """A render went past one of the budgets."""


@dataclass
class _Render:
    """The state of one render: the variation seed and what the render has spent."""

    seed: str
    picks: int = 0
    spent: dict[str, int] = field(default_factory=dict)

    def spend(self, kind: str, amount: int) -> None:
        limit, message = BUDGETS[kind]
        total = self.spent.get(kind, 0) + amount
        if total > limit:
            raise _RenderLimitError(message.format(limit))
        self.spent[kind] = total

    def pick(self, count: int) -> int:
        # Seed plus ordinal: a retry of the message renders the same text, and two choices
        # in one template are independent.
        digest = hashlib.sha256(f"{self.seed}:{self.picks}".encode()).digest()
        self.picks += 1
        return int.from_bytes(digest[:8], "big") % count


# A context variable rather than a template variable: templates cannot reach it.
_current: ContextVar[_Render] = ContextVar("email_render")


def _charge(size: int) -> None:
    """Count a string or list about to be built; checked per value even outside a render
    because the compiler folds constant expressions before any render starts."""
    size, (limit, message) = max(size, 0), BUDGETS["build"]
    if size > limit:
        raise _RenderLimitError(message.format(limit))
    render = _current.get(None)
    if render is not None:
        render.spend("build", size)


class _Missing(ChainableUndefined):
    """A value the context lacks: prints as nothing, chains (`achievement.name` in a recap),
    compares as false and absorbs arithmetic, so one template serves messages that lack some
    data. Calling it still fails, which catches a misspelt function when a template is saved."""

    __slots__ = ()

    def _absorb(self, *args: Any) -> "_Missing":
        return self

    def _false(self, other: Any) -> bool:
        return False

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _absorb  # type: ignore[assignment]
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = _absorb  # type: ignore[assignment]
    __mod__ = __rmod__ = __pow__ = __rpow__ = __pos__ = __neg__ = _absorb  # type: ignore[assignment]
    __lt__ = __le__ = __gt__ = __ge__ = _false  # type: ignore[assignment]


class _NoLoader(BaseLoader):
    """A template is one string: it may not read files or other templates."""

    def get_source(self, environment: Environment, template: str) -> tuple[str, str, None]:
        raise TemplateNotFound(template)


class _Budgeted(NodeTransformer):
    """Routes every for loop and every `~` through the budget filters."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Filter(node.iter, _LOOP_FILTER, [], [], None, None, lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        items = nodes.List(node.nodes, lineno=node.lineno)
        return nodes.Filter(items, _CONCAT_FILTER, [], [], None, None, lineno=node.lineno)


def _refuse_outside_references(tree: nodes.Template) -> None:
    for node in tree.find_all((nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport)):
        raise TemplateSyntaxError("templates cannot extend, include or import others", node.lineno)
    for name in tree.find_all(nodes.Name):
        if name.name == "self":
            raise TemplateSyntaxError("'self' is not available in email templates", name.lineno)


def _check_operands(operator: str, left: Any, right: Any) -> None:
    if operator == "%" and isinstance(left, str):
        raise SecurityError("formatting strings with % is not allowed (use the number filter)")
    if operator == "+" and isinstance(left, _SIZED) and isinstance(right, _SIZED):
        _charge(len(left) + len(right))
    elif operator == "*" and isinstance(left, _SIZED) and isinstance(right, int):
        _charge(len(left) * right)
    elif operator == "*" and isinstance(left, int) and isinstance(right, _SIZED):
        _charge(left * len(right))
    bits = 0
    if operator == "*" and isinstance(left, int) and isinstance(right, int):
        bits = left.bit_length() + right.bit_length()
    elif operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1:
        bits = right * left.bit_length()
    if bits > MAX_INT_BITS:
        raise _RenderLimitError(f"numbers may have at most {MAX_INT_BITS:,} bits")


class _Sandbox(SandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, *, autoescape: bool) -> None:
        super().__init__(
            autoescape=autoescape,
            undefined=_Missing,
            loader=_NoLoader(),
            finalize=_finalize,
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,
            cache_size=0,
        )
        for name in DROPPED_FILTERS:
            del self.filters[name]
        self.filters.update(
            number=_number, date=_date, random=_random, replace=_replace, join=_join
        )
        self.filters.update(batch=_batch, slice=_slice)
        self.filters = {name: _charged(func) for name, func in self.filters.items()}
        self.filters.update({_LOOP_FILTER: _counted, _CONCAT_FILTER: _concat})
        # Replaces range, dict, lipsum, cycler, joiner and namespace.
        self.globals = {"range": _range, "variation": _variation}

    def untrusted_template(self, source: str) -> Template:
        tree = self.parse(source)
        _refuse_outside_references(tree)
        tree = _Budgeted().visit(tree)
        tree.set_environment(self)
        return self.from_string(tree)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if attr.startswith("_"):
            return False
        if isinstance(obj, Undefined):
            return isinstance(value, Undefined)
        if isinstance(obj, LoopContext):
            return super().is_safe_attribute(obj, attr, value)
        return any(isinstance(obj, kind) and attr in names for kind, names in SAFE_METHODS)

    def unsafe_undefined(self, obj: Any, attribute: str) -> Undefined:
        # The sandbox would return an undefined that fails when printed, but _Missing prints
        # as nothing: refuse at once so that a probe fails when the template is saved.
        kind = "undefined" if isinstance(obj, Undefined) else type(obj).__name__
        raise SecurityError(f"{attribute!r} is not accessible on {kind} values")

    def wrap_str_format(self, value: Any) -> None:
        # The sandbox's safe str.format can still pad to any width; refuse it like any other
        # method not allowlisted (the number filter formats numbers).
        return None

    def call_binop(self, context: TemplateContext, operator: str, left: Any, right: Any) -> Any:
        _check_operands(operator, left, right)
        return super().call_binop(context, operator, left, right)

    def call(self, context: TemplateContext, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        _current.get().spend("call", 1)
        result = super().call(context, obj, *args, **kwargs)
        if isinstance(result, _SIZED):
            _charge(len(result))
        return result


# --- functions and filters templates can use ----------------------------------------------


def _range(*args: int) -> range:
    numbers = range(*args)
    _current.get().spend("range", len(numbers))
    return numbers


def _variation(*options: Any) -> Any:
    """One of the options, the same for every render of one message."""
    if not options:
        raise TypeError("variation() needs at least one option")
    return options[_current.get().pick(len(options))]


@pass_context  # never folded at compile time: it needs the render's seed
def _random(context: TemplateContext, seq: Iterable[Any]) -> Any:
    options = list(seq)
    if not options:
        return context.environment.undefined("No random item, sequence was empty.")
    return options[_current.get().pick(len(options))]


def _number(value: Any, grouping: bool = False, places: int | None = None) -> Any:
    """12.5 for Decimal("12.500000"); "1,234" with grouping; rounded to at most `places`
    decimals. Anything not a number is left as it is, and None prints as nothing."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return value
    number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if not number.is_finite():
        return str(value)
    if places is not None:
        exponent = Decimal(1).scaleb(-max(0, min(int(places), 20)))
        number = number.quantize(exponent, ROUND_HALF_UP, Context(prec=1_000))
    text = format(number if number else Decimal(0), ",f" if grouping else "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _date(value: Any, pattern: str | None = None) -> Any:
    """An ISO date of the context ("2026-05-31") as "May 31, 2026", or by a strftime pattern."""
    try:
        day = dt.date.fromisoformat(value[:10]) if isinstance(value, str) else value
    except ValueError:
        return value
    if not isinstance(day, dt.date):
        return value
    return day.strftime(pattern) if pattern else f"{day:%B} {day.day}, {day.year}"


def _finalize(value: Any) -> Any:
    """What `{{ x }}` prints: numbers without trailing zeros, None as nothing."""
    if isinstance(value, float | Decimal) or value is None:
        return _number(value)
    return value


def _charged(func: Callable[..., Any]) -> Callable[..., Any]:
    """A filter whose result counts against the build budget."""

    @functools.wraps(func)  # keeps jinja_pass_arg
    def charged(*args: Any, **kwargs: Any) -> Any:
        result = func(*args, **kwargs)
        if isinstance(result, _SIZED):
            _charge(len(result))
        return result

    return charged


@pass_eval_context
def _replace(ctx: EvalContext, s: Any, old: Any, new: Any, count: int | None = None) -> Any:
    text, old_text = soft_str(s), soft_str(old)
    hits = text.count(old_text) if count is None else min(count, text.count(old_text))
    _charge(len(text) + hits * max(0, len(soft_str(new)) - len(old_text)))
    return jinja_filters.do_replace(ctx, s, old, new, count)


@pass_eval_context
def _join(ctx: EvalContext, value: Iterable[Any], d: str = "", attribute: Any = None) -> str:
    if attribute is not None:
        value = map(jinja_filters.make_attrgetter(ctx.environment, attribute), value)
    items = list(value)
    _charge(len(d) * max(0, len(items) - 1) + sum(len(soft_str(item)) for item in items))
    return jinja_filters.sync_do_join(ctx, items, d)


def _batch(value: Iterable[Any], linecount: int, fill_with: Any = None) -> Iterator[list[Any]]:
    _charge(linecount)  # the last batch is padded up to linecount items
    return jinja_filters.do_batch(value, linecount, fill_with)


def _slice(value: Collection[Any], slices: int, fill_with: Any = None) -> Iterator[list[Any]]:
    _charge(slices)
    return jinja_filters.sync_do_slice(value, slices, fill_with)


@pass_context  # never folded at compile time: the budget belongs to a render
def _counted(context: TemplateContext, iterable: Iterable[Any]) -> Iterator[Any]:
    render = _current.get()
    for item in iterable:
        render.spend("loop", 1)
        yield item


@pass_eval_context
def _concat(ctx: EvalContext, values: list[Any]) -> str:
    _charge(sum(len(soft_str(value)) for value in values))
    return markup_join(values) if ctx.autoescape else str_join(values)


# --- rendering ----------------------------------------------------------------------------

_ENVIRONMENTS = {
    "subject": _Sandbox(autoescape=False),
    "html": _Sandbox(autoescape=True),
    "text": _Sandbox(autoescape=False),
}
_INLINER = css_inline.CSSInliner(keep_style_tags=True, load_remote_stylesheets=False)
_TAG = re.compile(r"<[a-zA-Z]")
_CONTROLS_AND_SPACES = re.compile(r"[\s\x00-\x1f\x7f-\x9f]+")


@dataclass(frozen=True)
class RenderedEmail:
    subject: str
    html: str
    text: str


@functools.lru_cache(maxsize=64)  # a recap renders one template for thousands of users
def _compiled(part: str, source: str) -> Template:
    limit = MAX_SOURCE[part]
    if len(source) > limit:
        raise TemplateRenderError(f"{part}: the template is longer than {limit:,} characters")
    return _ENVIRONMENTS[part].untrusted_template(source)


def _generate(template: Template, context: Mapping[str, Any]) -> str:
    chunks, size = [], 0
    for chunk in template.generate(context):  # counted as it streams, not once it is all built
        size += len(chunk)
        if size > MAX_OUTPUT:
            raise _RenderLimitError(f"the output is longer than {MAX_OUTPUT:,} characters")
        chunks.append(chunk)
    return "".join(chunks)


def _template_line(exc: BaseException) -> int | None:
    """The template line Jinja wrote into the traceback of a render error, if any."""
    line, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__jinja_exception__") is exc:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _failure(part: str, exc: Exception) -> TemplateRenderError:
    if isinstance(exc, TemplateSyntaxError):
        return TemplateRenderError(f"{part}: line {exc.lineno}: {exc.message or 'invalid syntax'}")
    line = _template_line(exc)
    where = f"line {line}: " if line else ""
    if isinstance(exc, RecursionError):
        message = "the template nests or recurses too deeply"
    elif isinstance(exc, TemplateError | _RenderLimitError):
        message = str(exc)
    else:
        message = f"{type(exc).__name__}: {exc}".rstrip(": ")
    return TemplateRenderError(f"{part}: {where}{message}")


def _render_part(part: str, source: str, context: Mapping[str, Any], seed: str) -> str:
    # A fresh render per part: the html and text twins pick the same variations when their
    # variation() calls come in the same order.
    token = _current.set(_Render(seed))
    try:
        return _generate(_compiled(part, source), context)
    except TemplateRenderError:
        raise
    except Exception as exc:  # the sandbox promises no particular exception type
        raise _failure(part, exc) from exc
    finally:
        _current.reset(token)


def _inlining_work(html: str) -> int:
    """An over-estimate of _inline_css's cost: every tag counts as an element and every colon
    inside braces (of a <style> or not, nested or not) as a declaration."""
    declarations, depth = 0, 0
    for piece in re.split(r"([{}])", html):
        if piece in ("{", "}"):
            depth = max(0, depth + (1 if piece == "{" else -1))
        elif depth:
            declarations += piece.count(":")
    return len(_TAG.findall(html)) * declarations * (declarations + 100)


def _inline_css(html: str) -> str:
    if _inlining_work(html) > MAX_INLINING_WORK:
        raise TemplateRenderError("html: too much CSS for this many elements to inline")
    try:
        inlined = _INLINER.inline(html)
    except css_inline.InlineError as exc:
        raise TemplateRenderError(f"html: the CSS could not be inlined: {exc}") from exc
    if len(inlined) > MAX_INLINED:
        raise TemplateRenderError(f"html: longer than {MAX_INLINED:,} characters with CSS inlined")
    return inlined


def _tidy(lines: Iterable[str]) -> str:
    """Lines without trailing spaces, at most one blank line in a row, none at either end."""
    return re.sub(r"\n{3,}", "\n\n", "\n".join(line.rstrip() for line in lines)).strip("\n")


def email_render(
    *, subject: str, html: str, text: str | None, context: Mapping[str, Any], seed: str
) -> RenderedEmail:
    """Render a template for one message; `seed` (the message id) fixes its variations."""
    rendered_subject = _render_part("subject", subject, context, seed)
    rendered_html = _render_part("html", html, context, seed)
    if text and text.strip():
        rendered_text = _tidy(_render_part("text", text, context, seed).splitlines())
    else:
        rendered_text = html_to_text(rendered_html)
    one_line = _CONTROLS_AND_SPACES.sub(" ", rendered_subject).strip()
    return RenderedEmail(
        subject=one_line[:MAX_SUBJECT].rstrip(),
        html=_inline_css(rendered_html),
        text=rendered_text,
    )


def template_check(
    *, subject: str, html: str, text: str | None, sample_context: Mapping[str, Any] | None = None
) -> None:
    """Raise TemplateRenderError if any part fails to compile or to render against a sample
    context (by default one with every variable set)."""
    context = sample_context if sample_context is not None else _sample_context()
    email_render(subject=subject, html=html, text=text, context=context, seed="template-check")


# --- the plain-text twin --------------------------------------------------------------------

_SKIPPED = frozenset({"head", "script", "style", "template", "title"})
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta"})
_PARAGRAPHS = frozenset(
    {"blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "ol", "p", "table", "ul"}
)
_LINES = frozenset(
    {"address", "article", "aside", "center", "dd", "div", "dl", "dt", "footer", "header"}
    | {"hr", "li", "main", "nav", "section", "tr"}
)
_HIDDEN = re.compile(r"display\s*:\s*none", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
# Blocks end lines; a paragraph, heading or list leaves a blank line, however many end at once.
_PARAGRAPH_BREAK = "\n\0\n"
_BREAKS = re.compile(r"\n[\n\0]*")
# A `<` with no `>` before the next `<`, or opening a marked section (`<![CDATA[`).
_UNCLOSED = re.compile(r"<(?=!\[|[^<>]*(?:<|$))")


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self._skipping: tuple[str, int] | None = None  # (tag, nesting) of hidden content
        self._link: tuple[str, int] | None = None  # (href, where its label starts in out)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skipping is not None:
            skipped, depth = self._skipping
            # A <head> left open ends where the body starts, as in a browser.
            self._skipping = None if tag == "body" else (skipped, depth + (tag == skipped))
            return
        attributes = dict(attrs)
        hidden = _HIDDEN.search(attributes.get("style") or "")  # a preheader, say
        if tag not in _VOID and (tag in _SKIPPED or hidden):
            self._skipping = (tag, 1)
        elif tag == "br":
            self.out.append("\n")
        elif tag == "li":
            self.out.append("\n- ")
        elif tag in _PARAGRAPHS or tag in _LINES:
            self.out.append(_PARAGRAPH_BREAK if tag in _PARAGRAPHS else "\n")
        elif tag in ("td", "th"):
            self.out.append(" ")
        elif tag == "a":
            self._end_link()  # an <a> inside another closes it, as in a browser
            self._link = (attributes.get("href") or "", len(self.out))

    def handle_endtag(self, tag: str) -> None:
        if self._skipping is not None:
            skipped, depth = self._skipping
            if tag == skipped:
                self._skipping = (skipped, depth - 1) if depth > 1 else None
        elif tag in _PARAGRAPHS or tag in _LINES:
            self.out.append(_PARAGRAPH_BREAK if tag in _PARAGRAPHS else "\n")
        elif tag == "a":
            self._end_link()

    def handle_data(self, data: str) -> None:
        if self._skipping is None:
            # Line breaks in the source are only spaces; NUL marks paragraph breaks.
            self.out.append(_SPACES.sub(" ", data.replace("\0", "")))

    def _end_link(self) -> None:
        if self._link is None:
            return
        (href, start), self._link = self._link, None
        label = " ".join("".join(self.out[start:]).split())
        del self.out[start:]
        shown = href.removeprefix("mailto:")
        if not href or href.startswith(("#", "javascript:")) or label == shown:
            self.out.append(label or shown)
        else:
            self.out.append(f"{label} ({href})" if label else href)


def _completed(html: str) -> str:
    """The markup with comments dropped and every `<` that starts no complete construct
    escaped: the HTMLParser of our Python (3.11.7) scans to the end of the document for each
    unclosed tag, comment or marked section, and took over a minute on 90 KB of `<a `."""
    kept, start = [], 0
    while (opening := html.find("<!--", start)) != -1:
        kept.append(html[start:opening])
        closing = html.find("-->", opening + 4)
        start = len(html) if closing == -1 else closing + 3
    kept.append(html[start:])
    return _UNCLOSED.sub("&lt;", "".join(kept))


def html_to_text(html: str) -> str:
    """A readable plain-text twin of an HTML email: blocks on their own lines, links as
    "label (url)", hidden and head content dropped, whitespace collapsed, entities unescaped."""
    extractor = _TextExtractor()
    extractor.feed(_completed(html))
    extractor.close()
    text = "\n".join(" ".join(line.split()) for line in "".join(extractor.out).split("\n"))
    return _BREAKS.sub(lambda breaks: "\n\n" if "\0" in breaks[0] else "\n", text).strip()


# --- the built-in defaults ----------------------------------------------------------------


@dataclass(frozen=True)
class DefaultTemplate:
    name: str
    subject: str
    html: str
    text: str


@functools.cache
def default_email_template(type: str) -> DefaultTemplate:
    """The built-in template of a notification type: what every tenant starts with."""
    if type not in NotificationType.values:  # the type names a file
        raise ValueError(f"unknown notification type {type!r}")
    folder = settings.BASE_DIR / "templates" / "notifications" / "email"
    return DefaultTemplate(
        name=NotificationType(type).label,
        subject=(folder / f"{type}.subject.txt").read_text(encoding="utf-8").strip(),
        html=(folder / f"{type}.html").read_text(encoding="utf-8"),
        text=(folder / f"{type}.txt").read_text(encoding="utf-8"),
    )


def sample_context() -> dict[str, Any]:
    """Every template variable with plausible values: what template_check renders against
    and what the dashboard preview shows when it has no real user."""
    site = "https://app.example.com"
    return {
        "user": {
            "id": "user-123",
            "name": "Jamie",
            "email": "jamie@example.com",
            "attributes": {"plan": "pro", "city": "Lisbon"},
        },
        "app": {
            "name": "Acme Fitness",
            "url": site,
            "logoUrl": f"{site}/logo.png",
            "brandColor": "#4F46E5",
        },
        "achievement": {
            "key": "ten-workouts",
            "name": "Ten workouts",
            "description": "Finish ten workouts.",
            "badgeUrl": f"{site}/badges/ten-workouts.png",
            "completions": 1284,
            "rarity": 12.5,
        },
        "streak": {
            "length": 12,
            "frequency": "daily",
            "extended": False,
            "expires": "2026-06-01",
            "periodStart": "2026-06-01",
            "periodEnd": "2026-06-01",
        },
        "metrics": {
            "workouts": {
                "name": "Workouts",
                "units": None,
                "total": Decimal("57"),
                "change": Decimal("4"),
                "percentChange": 33.3,
            },
            "distance": {
                "name": "Distance",
                "units": "km",
                "total": Decimal("1312.500000"),
                "change": Decimal("21.3"),
                "percentChange": None,
            },
        },
        "points": {
            "xp": {
                "name": "XP",
                "total": Decimal("4250"),
                "change": Decimal("350"),
                "level": {"key": "gold", "name": "Gold"},
            },
        },
        "recap": {"periodStart": "2026-05-25", "periodEnd": "2026-05-31"},
        "reactivation": {"messageNumber": 1, "daysSinceLastActive": 3},
        "preferencesUrl": "https://gamify.example.com/notifications/preferences/sample",
        "unsubscribeUrl": "https://gamify.example.com/notifications/unsubscribe/sample",
    }


_sample_context = sample_context  # template_check's parameter shadows the public name
