"""HTML: visible text with its block structure, headings as Markdown."""

from __future__ import annotations

import re
import warnings

from app.ingest.extract.mime import HTML
from app.ingest.extract.text import clean_text, tidy_lines
from app.ingest.types import ExtractedDocument, ExtractionError

# Private-use sentinels mark line and paragraph breaks while HTML whitespace is collapsed.
_LINE = "\ue000"
_PARA = "\ue001"
_HTML_DROP = ("script", "style", "noscript", "template", "svg", "iframe", "object", "head")
_DISPLAY_NONE_RE = re.compile(r"display\s*:\s*none", re.IGNORECASE)
_HTML_BLOCKS = (
    "address", "article", "aside", "blockquote", "dd", "div", "dl", "dt", "figcaption",
    "figure", "footer", "form", "header", "hr", "li", "main", "nav", "ol", "p", "pre",
    "section", "ul",
)  # fmt: skip


def html_to_text(markup: str | bytes) -> tuple[str, str | None]:
    """Visible text with Markdown headings and blank lines between blocks, and the title."""
    from bs4 import (
        BeautifulSoup,
        Comment,
        Declaration,
        Doctype,
        MarkupResemblesLocatorWarning,
        ProcessingInstruction,
        XMLParsedAsHTMLWarning,
    )
    from bs4.element import NavigableString

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

    for node in soup.find_all(string=True):
        if isinstance(node, Comment | Declaration | Doctype | ProcessingInstruction):
            node.extract()
        elif _LINE in node or _PARA in node:
            node.replace_with(str(node).replace(_LINE, " ").replace(_PARA, " "))
    for tag in soup.find_all(True):
        if tag.decomposed:  # a parent dropped earlier in this loop took it along
            continue
        style = str(tag.get("style") or "")
        if (
            tag.name in _HTML_DROP
            or tag.has_attr("hidden")
            or str(tag.get("aria-hidden") or "").lower() == "true"
            or _DISPLAY_NONE_RE.search(style)
        ):
            tag.decompose()

    for table in soup.find_all("table"):
        if table.find_parent("table") is not None:
            continue  # nested tables are read as part of their outer cell
        rows: list[str] = []
        for tr in table.find_all("tr"):
            if tr.find_parent("table") is not table:
                continue
            cells = [
                " ".join(cell.get_text(" ").split())
                for cell in tr.find_all(["td", "th"], recursive=False)
            ]
            if any(cells):
                rows.append(" | ".join(cells))
        table.replace_with(NavigableString(_PARA + _LINE.join(rows) + _PARA))

    for pre in soup.find_all("pre"):
        for node in pre.find_all(string=True):
            node.replace_with(str(node).replace("\n", _LINE))
    for level in range(1, 7):
        for heading in soup.find_all(f"h{level}"):
            words = " ".join(heading.get_text(" ").split())
            replacement = _PARA + "#" * level + " " + words + _PARA if words else " "
            heading.replace_with(NavigableString(replacement))
    for br in soup.find_all("br"):
        br.replace_with(NavigableString(_LINE))
    for tag in soup.find_all(_HTML_BLOCKS):
        tag.insert_before(NavigableString(_PARA))
        tag.insert_after(NavigableString(_PARA))

    flat = re.sub(r"\s+", " ", soup.get_text())
    flat = flat.replace(_PARA, "\n\n").replace(_LINE, "\n")
    return tidy_lines(clean_text(flat)), title


def extract_html(content: bytes) -> ExtractedDocument:
    text, title = html_to_text(content)
    return ExtractedDocument(text=text, mime_type=HTML, title=title)
