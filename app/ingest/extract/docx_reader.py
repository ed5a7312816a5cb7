"""Word (DOCX): paragraphs with Markdown headings from the heading styles, and tables."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

from app.ingest.extract.mime import DOCX
from app.ingest.extract.text import clean_text, tidy_lines
from app.ingest.types import ExtractedDocument, ExtractionError

# A DOCX is a zip: its XML may unpack to far more than the 50 MB upload limit.
MAX_DOCX_UNPACKED_BYTES = 400 * 1024 * 1024

_HEADING_STYLE_RE = re.compile(r"^(?:heading|kop)\s*(\d)$", re.IGNORECASE)

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
# What a paragraph shows, in document order, wherever a run stands: python-docx's
# Paragraph.text reads only the runs that are the paragraph's (or a hyperlink's) children,
# so the text of tracked insertions (w:ins), moves, smart tags, simple fields, custom XML
# and inline content controls was dropped without a word (a fuzz of 2026-12-05).
_M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
_CHARACTERS = {_W + "t": None, _W + "tab": "\t", _W + "ptab": "\t", _W + "br": "\n",
               _W + "cr": "\n", _W + "noBreakHyphen": "-", _M + "t": None}  # fmt: skip
# Not shown: deleted and moved-away text, field codes, the fallback copy of alternate
# content (a text box is in both copies), and comments.
_HIDDEN = {_W + "del", _W + "moveFrom", _W + "instrText", _W + "delInstrText",
           _W + "comment", _MC + "Fallback"}  # fmt: skip
# Block-level wrappers a body's or a cell's paragraphs and tables may stand in.
_BLOCK_WRAPPERS = {_W + "sdt", _W + "sdtContent", _W + "customXml"}
_SYM = _W + "sym"
_PRIVATE_USE = range(0xE000, 0xF900)  # a symbol font's glyph (Wingdings, Symbol): no text


def _placeholder(element: Any) -> bool:
    """A content control that shows its placeholder ("Klik of tik om tekst in te voeren."),
    not content: templates leave dozens, and the same words in every document would match
    every question about entering text."""
    if element.tag != _W + "sdt":
        return False
    properties = element.find(_W + "sdtPr")
    flag = properties.find(_W + "showingPlcHdr") if properties is not None else None
    # an on/off property: present means on unless its w:val says off (a review: generators
    # write val="0"/"false" on filled-in controls, whose text was dropped)
    return flag is not None and (flag.get(_W + "val") or "true").lower() not in (
        "0",
        "false",
        "off",
    )


def _symbol(element: Any) -> str:
    """A w:sym character: shown when it is a real character (U+00A7 in Times New Roman),
    not a glyph of a symbol font's private-use area."""
    try:
        code = int(element.get(_W + "char") or "", 16)
    except ValueError:
        return ""
    shown = (
        0x20 <= code <= 0x10FFFF
        and not 0x7F <= code <= 0x9F  # C1 controls (U+0085 is a line break)
        and code not in _PRIVATE_USE
        and not 0xD800 <= code < 0xE000
    )
    return chr(code) if shown else ""


_TITLE_STYLES = {"title", "titel"}


def _heading_level(style_name: str) -> int | None:
    if style_name.strip().lower() in _TITLE_STYLES:
        return 1
    match = _HEADING_STYLE_RE.match(style_name.strip())
    if match:
        return max(1, min(6, int(match.group(1))))
    return None


def _check_docx_size(content: bytes) -> None:
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ExtractionError(f"corrupt docx: {exc}") from exc
    if unpacked > MAX_DOCX_UNPACKED_BYTES:
        raise ExtractionError(f"docx too large: unpacks to {unpacked} bytes")


def extract_docx(content: bytes) -> ExtractedDocument:
    import docx

    _check_docx_size(content)
    try:
        document = docx.Document(io.BytesIO(content))
    except Exception as exc:  # zipfile, lxml and python-docx all raise their own errors
        raise ExtractionError(f"corrupt docx: {type(exc).__name__}: {exc}") from exc

    blocks: list[str] = []
    title: str | None = None
    try:
        style_name_of = _style_names(document)
        for item in _blocks(document.element.body):
            if item.tag == _W + "p":
                para = clean_text(_paragraph_text(item)).strip()
                if not para:
                    continue
                style_name = style_name_of(item)
                level = _heading_level(style_name or "")
                if level is not None:
                    para = " ".join(para.split())
                    if title is None and (style_name or "").lower() in _TITLE_STYLES:
                        title = para
                    blocks.append("#" * level + " " + para)
                else:
                    blocks.append(tidy_lines(para))
            else:
                rows = _table_rows(item)
                if rows:
                    blocks.append("\n".join(rows))
    except ExtractionError:
        raise
    except Exception as exc:
        raise ExtractionError(f"corrupt docx: {type(exc).__name__}: {exc}") from exc

    metadata: dict[str, Any] = {}
    props = document.core_properties
    if props.author:
        metadata["author"] = props.author
    if props.created:
        metadata["created"] = props.created.isoformat()
    if title is None and props.title:
        title = props.title.strip() or None
    return ExtractedDocument(
        text="\n\n".join(blocks), mime_type=DOCX, title=title, metadata=metadata
    )


def _style_names(document: Any) -> Any:
    """paragraph -> its style's name, from a table of the styles read once. python-docx's
    own ``paragraph.style`` scans every style of the document for the default one on each
    call: a document of 350,000 paragraphs (a 92 KB zip) took more than six minutes."""
    from docx.enum.style import WD_STYLE_TYPE

    names = {s.style_id: s.name or "" for s in document.styles if s.style_id}
    default = document.styles.default(WD_STYLE_TYPE.PARAGRAPH)
    default_name = (default.name or "") if default is not None else ""

    def name(paragraph: Any) -> str:
        properties = paragraph.pPr  # (the w:p element) the style id, without the scan
        style_id = properties.style if properties is not None else None
        return str(names.get(style_id, default_name)) if style_id else default_name

    return name


def _blocks(container: Any) -> Iterator[Any]:
    """The paragraphs (w:p) and tables (w:tbl) of a body, a cell or a content control, in
    order, read into block-level content controls and custom XML: python-docx's
    iter_inner_content skips a w:sdt, and templates put whole sections in them (a review
    of 2026-12-05)."""
    stack = [iter(container)]
    while stack:
        element = next(stack[-1], None)
        if element is None:
            stack.pop()
        elif element.tag in (_W + "p", _W + "tbl"):
            yield element
        elif element.tag in _BLOCK_WRAPPERS and not _placeholder(element):
            stack.append(iter(element))


def _table_rows(table: Any) -> list[str]:
    """A table's rows, cells separated by " | " (a cell once, however many grid columns it
    spans); a cell's nested tables are read into it."""
    rows: list[str] = []
    for row in _descendants(table, _W + "tr", stop=_W + "tbl"):
        cells = [
            " ".join(clean_text(_cell_text(cell)).split())
            for cell in _descendants(row, _W + "tc", stop=_W + "tbl")
        ]
        if any(cells):
            rows.append(" | ".join(cells))
    return rows


def _cell_text(cell: Any) -> str:
    parts = []
    for block in _blocks(cell):
        if block.tag == _W + "p":
            parts.append(_paragraph_text(block))
        else:
            parts.extend(_table_rows(block))
    return "\n".join(parts)


def _descendants(element: Any, tag: str, stop: str) -> Iterator[Any]:
    """The ``tag`` elements below ``element`` (rows and cells may stand in content controls
    and custom XML), not looking into ``tag`` ones or into ``stop`` ones (nested tables)."""
    stack = [iter(element)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
        elif child.tag == tag:
            yield child
        elif child.tag != stop and isinstance(child.tag, str) and not _placeholder(child):
            stack.append(iter(child))


def _paragraph_text(paragraph: Any) -> str:
    """The text a paragraph element shows (``_CHARACTERS``, less ``_HIDDEN``), read with an
    explicit stack: Word nests wrappers, and a hostile file nests them deeply."""
    parts: list[str] = []
    stack = [iter(paragraph)]
    while stack:
        element = next(stack[-1], None)
        if element is None:
            stack.pop()
            continue
        tag = element.tag
        if not isinstance(tag, str) or tag in _HIDDEN or _placeholder(element):
            continue  # comments and processing instructions of the XML itself, too
        if tag == _SYM:
            parts.append(_symbol(element))
        elif tag in _CHARACTERS:
            shown = _CHARACTERS[tag]
            parts.append(element.text or "" if shown is None else shown)
        else:
            if tag == _W + "p":  # a text box's paragraph: a line of its own
                parts.append("\n")
            stack.append(iter(element))
    return "".join(parts)
