"""The plain-text twin of an HTML email."""

import re
from html.parser import HTMLParser

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
