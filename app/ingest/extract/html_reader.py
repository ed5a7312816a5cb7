"""HTML: visible text with its block structure, headings as Markdown."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from app.ingest.extract.mime import HTML
from app.ingest.extract.text import clean_text, tidy_lines
from app.ingest.types import ExtractedDocument, ExtractionError

# Private-use sentinels mark line and paragraph breaks while HTML whitespace is collapsed.
_LINE = "\ue000"
_PARA = "\ue001"
_HTML_DROP = ("script", "style", "noscript", "template", "svg", "iframe", "object", "head")
_DISPLAY_NONE_RE = re.compile(r"display\s*:\s*none", re.IGNORECASE)
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_HTML_BLOCKS = (
    "address", "article", "aside", "blockquote", "dd", "div", "dl", "dt", "figcaption",
    "figure", "footer", "form", "header", "hr", "li", "main", "nav", "ol", "p", "pre",
    "section", "ul",
)  # fmt: skip


def html_to_text(markup: str | bytes) -> tuple[str, str | None]:
    """Visible text with Markdown headings and blank lines between blocks, and the title."""
    from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, XMLParsedAsHTMLWarning

    # Both are advice for interactive use; here the parser choice is deliberate and the
    # markup is whatever the client sent.
    warnings.filterwarnings("ignore", category=XMLParsedAsHTMLWarning)
    warnings.filterwarnings("ignore", category=MarkupResemblesLocatorWarning)
    try:
        soup = BeautifulSoup(markup, "lxml")
    except Exception as exc:
        raise ExtractionError(f"unreadable html: {type(exc).__name__}: {exc}") from exc

    title: str | None = None
    if soup.title is not None:
        title = " ".join(soup.title.get_text(" ").split()) or None
    flat = re.sub(r"\s+", " ", "".join(_flatten(soup)))
    flat = flat.replace(_PARA, "\n\n").replace(_LINE, "\n")
    return tidy_lines(clean_text(flat)), title


# The tree is read in one pass, without editing it: bs4's insert and replace walk down the
# subtree before the insertion point, so marking blocks in place took time quadratic in the
# nesting depth (8,000 nested <div> 16 s, 200,000 hours, holding the job worker; a fuzz of
# 2026-12-05). Every node is visited once by _flatten or, below a table or a heading, once
# by the reader of that table or heading.


def _text_of(node: Any) -> str | None:
    """A text node's text (None for a tag, a comment, a doctype, a processing instruction
    or script and style text), the break sentinels in it made spaces. Ruby text counts:
    bs4 gives the strings inside <rt> and <rp> types of their own, and a stray unclosed
    <rp> made the rest of the document such strings, all left out (a review of
    2026-12-05)."""
    from bs4.element import (
        Comment,
        Declaration,
        Doctype,
        NavigableString,
        ProcessingInstruction,
        Script,
        Stylesheet,
        TemplateString,
    )

    skipped = (Comment, Declaration, Doctype, ProcessingInstruction, Script, Stylesheet)
    if not isinstance(node, NavigableString) or isinstance(node, (*skipped, TemplateString)):
        return None
    return str(node).replace(_LINE, " ").replace(_PARA, " ")


def _hidden(tag: Any) -> bool:
    return bool(
        tag.name in _HTML_DROP
        or tag.has_attr("hidden")
        or str(tag.get("aria-hidden") or "").lower() == "true"
        or _DISPLAY_NONE_RE.search(str(tag.get("style") or ""))
    )


def _visible_nodes(top: Any, stop: Callable[[Any], bool] = lambda _tag: False) -> Iterator[Any]:
    """The text nodes and tags below ``top`` in document order, hidden tags and what is
    below them left out, and nothing below a tag for which ``stop`` holds (it is yielded)."""
    from bs4 import Tag

    stack = [iter(top.contents)]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
        elif not isinstance(node, Tag):
            yield node
        elif not _hidden(node):
            yield node
            if not stop(node):
                stack.append(iter(node.contents))


def _words(top: Any) -> str:
    """A heading's or a cell's visible text on one line (bs4's get_text(" "), less what is
    hidden)."""
    texts = (_text_of(n) for n in _visible_nodes(top))
    return " ".join(" ".join(t for t in texts if t is not None).split())


def _table(table: Any) -> str:
    """A table as its rows, cells separated by " | "; a nested table is read as part of its
    outer cell."""
    rows: list[str] = []
    for tr in _visible_nodes(table, stop=lambda tag: tag.name == "table"):
        if getattr(tr, "name", None) != "tr":
            continue
        cells = [
            _words(cell)
            for cell in tr.contents
            if getattr(cell, "name", None) in ("td", "th") and not _hidden(cell)
        ]
        if any(cells):
            rows.append(" | ".join(cells))
    return _PARA + _LINE.join(rows) + _PARA


def _flatten(soup: Any) -> Iterator[str]:
    """The visible text in document order: a table as its rows, a heading as a Markdown
    heading, line breaks for <br> and for the lines of <pre>, blank lines around blocks."""
    from bs4 import Tag

    # (iterator, the tag it reads, inside <pre>)
    stack: list[tuple[Iterator[Any], Any, bool]] = [(iter(soup.contents), None, False)]
    while stack:
        children, parent, in_pre = stack[-1]
        node = next(children, None)
        if node is None:
            stack.pop()
            if parent is not None and parent.name in _HTML_BLOCKS:
                yield _PARA
            continue
        if not isinstance(node, Tag):
            text = _text_of(node)
            if text is not None:
                yield text.replace("\n", _LINE) if in_pre else text
        elif _hidden(node):
            continue
        elif node.name == "table":
            yield _table(node)
        elif node.name in _HEADINGS:
            words = _words(node)
            yield _PARA + "#" * _HEADINGS[node.name] + " " + words + _PARA if words else " "
        elif node.name == "br":
            yield _LINE
        else:
            if node.name in _HTML_BLOCKS:
                yield _PARA
            stack.append((iter(node.contents), node, in_pre or node.name == "pre"))


def extract_html(content: bytes) -> ExtractedDocument:
    text, title = html_to_text(content)
    return ExtractedDocument(text=text, mime_type=HTML, title=title)
