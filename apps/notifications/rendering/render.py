"""Rendering an email from its three parts, and checking a template at save time. Every
failure is a TemplateRenderError naming the part (subject, html or text)."""

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html import escape
from typing import Any

import css_inline
from django.conf import settings
from jinja2 import Template, TemplateError
from jinja2.exceptions import TemplateSyntaxError

from apps.notifications.errors import TemplateRenderError
from apps.notifications.rendering.defaults import _sample_context
from apps.notifications.rendering.sandbox import (
    MAX_INLINED,
    MAX_INLINING_WORK,
    MAX_OUTPUT,
    MAX_SOURCE,
    MAX_SUBJECT,
    _current,
    _Deadline,
    _Render,
    _RenderLimitError,
    _Sandbox,
)
from apps.notifications.rendering.text import html_to_text

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


def _part_error(label: str, problem: str) -> TemplateRenderError:
    """A refusal of one part of a template ("html", "data.screen"), which names the field the
    part came in ("data" for "data.screen")."""
    field, dot, key = label.partition(".")
    return TemplateRenderError(
        "{" + field + "}" + dot + key + ": " + problem, fields=field, code="invalid"
    )


@functools.lru_cache(maxsize=64)  # a recap renders one template for thousands of users
def _compiled(part: str, source: str) -> Template:
    limit = MAX_SOURCE[part]
    if len(source) > limit:
        raise _part_error(part, f"the template is longer than {limit:,} characters")
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
        return _part_error(part, f"line {exc.lineno}: {exc.message or 'invalid syntax'}")
    line = _template_line(exc)
    where = f"line {line}: " if line else ""
    if isinstance(exc, RecursionError):
        message = "the template nests or recurses too deeply"
    elif isinstance(exc, TemplateError | _RenderLimitError):
        message = str(exc)
    else:
        message = f"{type(exc).__name__}: {exc}".rstrip(": ")
    return _part_error(part, f"{where}{message}")


def _deadline() -> _Deadline:
    """The deadline of one message's render (saved, previewed or sent): every part shares it."""
    return _Deadline.start(settings.NOTIFICATIONS_TEMPLATE_RENDER_SECONDS)


def _render_part(
    part: str,
    source: str,
    context: Mapping[str, Any],
    seed: str,
    deadline: _Deadline,
    label: str | None = None,
) -> str:
    """Render one part; `part` picks the environment and limits (subject, html or text),
    `label` names it in errors when it differs (a push template's title, body, url...)."""
    # A fresh render per part: the html and text twins pick the same variations when their
    # variation() calls come in the same order.
    token = _current.set(_Render(seed, deadline))
    try:
        return _generate(_compiled(part, source), context)
    except TemplateRenderError as exc:
        if label is None:
            raise
        raise _part_error(label, exc.template.removeprefix("{" + part + "}: ")) from exc
    except Exception as exc:  # the sandbox promises no particular exception type
        raise _failure(label or part, exc) from exc
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
        raise _part_error("html", "too much CSS for this many elements to inline")
    try:
        inlined = _INLINER.inline(html)
    except css_inline.InlineError as exc:
        raise _part_error("html", f"the CSS could not be inlined: {exc}") from exc
    if len(inlined) > MAX_INLINED:
        raise _part_error("html", f"longer than {MAX_INLINED:,} characters with CSS inlined")
    return inlined


def _tidy(lines: Iterable[str]) -> str:
    """Lines without trailing spaces, at most one blank line in a row, none at either end."""
    return re.sub(r"\n{3,}", "\n\n", "\n".join(line.rstrip() for line in lines)).strip("\n")


_BODY_END = re.compile(r"</body\s*>", re.IGNORECASE)
PREFERENCES_LABEL = "Manage email preferences"


def with_preferences_link(rendered: RenderedEmail, url: str) -> RenderedEmail:
    """Every email shows a link to the manage-preferences page: when a tenant's template leaves
    `preferencesUrl` out, a one-line footer with it is added to both parts."""
    html, text = rendered.html, rendered.text
    if url not in html:
        link = (
            '<p style="font-size:12px;color:#6b7280;text-align:center">'
            f'<a href="{escape(url)}">{PREFERENCES_LABEL}</a></p>'
        )
        end = _BODY_END.search(html)
        html = html[: end.start()] + link + html[end.start() :] if end else html + link
    if url not in text:
        text = f"{text}\n\n{PREFERENCES_LABEL}: {url}"
    return RenderedEmail(subject=rendered.subject, html=html, text=text)


def email_render(
    *, subject: str, html: str, text: str | None, context: Mapping[str, Any], seed: str
) -> RenderedEmail:
    """Render a template for one message; `seed` (the message id) fixes its variations."""
    deadline = _deadline()
    rendered_subject = _render_part("subject", subject, context, seed, deadline)
    rendered_html = _render_part("html", html, context, seed, deadline)
    if text and text.strip():
        rendered_text = _tidy(_render_part("text", text, context, seed, deadline).splitlines())
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


# --- push ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RenderedPush:
    title: str
    body: str
    url: str
    data: dict[str, str]


def _one_line(value: str) -> str:
    return _CONTROLS_AND_SPACES.sub(" ", value).strip()


def push_render(
    *,
    title: str,
    body: str,
    url: str,
    data: Mapping[str, str],
    context: Mapping[str, Any],
    seed: str,
) -> RenderedPush:
    """Render a push template: title and url on one line, body as text, each data value as
    text. Providers shorten what does not fit their payload limits."""
    deadline = _deadline()

    def part(kind: str, source: str, label: str) -> str:
        return _render_part(kind, source, context, seed, deadline, label)

    return RenderedPush(
        title=_one_line(part("subject", title, "title"))[:MAX_SUBJECT],
        body=_tidy(part("text", body, "body").splitlines()),
        url=_one_line(part("subject", url, "url")) if url else "",
        data={key: part("text", value, f"data.{key}") for key, value in data.items()},
    )


def push_template_check(
    *,
    title: str,
    body: str,
    url: str,
    data: Mapping[str, str],
    sample_context: Mapping[str, Any] | None = None,
) -> None:
    context = sample_context if sample_context is not None else _sample_context()
    push_render(title=title, body=body, url=url, data=data, context=context, seed="template-check")
