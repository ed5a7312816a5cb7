"""Turn an uploaded document (text, PDF, DOCX, HTML, e-mail, Rechtspraak XML) into text.

Every failure is an ``ExtractionError`` with a reason fit for the ingest report: a
document that yields no text must be reported, never stored as zero chunks in silence.
The one exception is a Rechtspraak record without a body (a voided ECLI): its metadata
still matters, so it is returned and the caller decides.
"""

from __future__ import annotations

import codecs
import functools
import io
import logging
import re
import unicodedata
import warnings
from collections.abc import Callable
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser
from typing import Any

from app.ingest.types import ExtractedDocument, ExtractionError, PageSpan

log = logging.getLogger("ewall.ingest.extract")

MAX_CONTENT_BYTES = 50 * 1024 * 1024
# A DOCX is a zip: its XML may unpack to far more than the 50 MB upload limit.
MAX_DOCX_UNPACKED_BYTES = 400 * 1024 * 1024

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
HTML = "text/html"
TEXT = "text/plain"
EML = "message/rfc822"
XML = "application/xml"

# Everything a source or browser may call these formats, folded to one canonical name.
_MIME_ALIASES: dict[str, str] = {
    "application/pdf": PDF,
    "application/x-pdf": PDF,
    "application/acrobat": PDF,
    DOCX: DOCX,
    "application/docx": DOCX,
    "text/html": HTML,
    "application/xhtml+xml": HTML,
    "text/plain": TEXT,
    "text/markdown": TEXT,
    "text/x-markdown": TEXT,
    "text/csv": TEXT,
    "message/rfc822": EML,
    "application/eml": EML,
    "application/xml": XML,
    "text/xml": XML,
}

_EXTENSIONS: dict[str, str] = {
    ".pdf": PDF,
    ".docx": DOCX,
    ".html": HTML,
    ".htm": HTML,
    ".xhtml": HTML,
    ".txt": TEXT,
    ".text": TEXT,
    ".md": TEXT,
    ".csv": TEXT,
    ".eml": EML,
    ".xml": XML,
    # Recognised so the error names the real problem instead of garbling binary as text.
    ".doc": "application/msword",
    ".msg": "application/vnd.ms-outlook",
    ".rtf": "application/rtf",
}

_UNKNOWN_MIME = {"", "application/octet-stream", "binary/octet-stream", "application/unknown"}

_HEADING_STYLE_RE = re.compile(r"^(?:heading|kop)\s*(\d)$", re.IGNORECASE)
_TITLE_STYLES = {"title", "titel"}

_XML_ROOT_RE = re.compile(
    rb"^(?:\s|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)*<(?:[\w.-]+:)?([\w.-]+)", re.DOTALL
)

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


# --- public ----------------------------------------------------------------------------


def extract(
    *,
    text: str | None,
    content: bytes | None,
    mime_type: str | None,
    filename: str | None = None,
) -> ExtractedDocument:
    """Extract text from ``text`` (plain text, preferred when given) or from ``content``.

    ``mime_type`` may carry parameters (``; charset=...``); when it is missing or
    ``application/octet-stream`` the type is sniffed from ``filename``, then the bytes.
    Raises ``ExtractionError`` for unsupported, oversized, corrupt, encrypted or empty
    content; no other exception escapes.
    """
    if text is not None:
        if len(text) > MAX_CONTENT_BYTES:
            raise ExtractionError(f"content too large: {len(text)} characters (limit 50 MB)")
        doc = ExtractedDocument(text=clean_text(text), mime_type=TEXT)
        return _require_text(doc)
    if content is None:
        raise ExtractionError("no content: neither text nor content was given")
    if len(content) > MAX_CONTENT_BYTES:
        raise ExtractionError(f"content too large: {len(content)} bytes (limit 50 MB)")

    mime, params = _parse_mime(mime_type)
    if mime in _UNKNOWN_MIME:
        mime = sniff_mime_type(content, filename)
    else:
        mime = _MIME_ALIASES.get(mime, mime)

    reader: Callable[[bytes], ExtractedDocument]
    if mime == PDF:
        reader = _extract_pdf
    elif mime == DOCX:
        reader = _extract_docx
    elif mime == HTML:
        reader = _extract_html
    elif mime == EML:
        reader = _extract_email
    elif mime == XML or (mime.endswith("+xml") and _xml_root(content) == "open-rechtspraak"):
        reader = _extract_xml
    elif mime == TEXT or mime.startswith("text/"):
        reader = functools.partial(_extract_plain, charset=params.get("charset"))
    else:
        raise ExtractionError(f"unsupported content type: {mime}")
    try:
        doc = reader(content)
    except (ExtractionError, MemoryError):
        raise
    except Exception as exc:
        # Malformed input must end up in the ingest report, never as a 500; the log keeps
        # the traceback for whoever fixes the reader.
        log.exception("extraction failed", extra={"mime_type": mime, "file_name": filename})
        raise ExtractionError(f"unreadable {mime}: {type(exc).__name__}: {exc}") from exc
    if reader is _extract_xml and _xml_root(content) == "open-rechtspraak":
        # A Rechtspraak record without a body (a voided ECLI) still carries status markers
        # that ingestion needs; whether that is an error is the caller's decision.
        return doc
    return _require_text(doc)


def sniff_mime_type(content: bytes, filename: str | None) -> str:
    """Guess the type of content that arrived without one: extension first, then magic."""
    if filename:
        dot = filename.rfind(".")
        if dot >= 0:
            by_ext = _EXTENSIONS.get(filename[dot:].lower())
            if by_ext:
                return by_ext
    head = content[:4096]
    lower = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1024].lower()
    if head.startswith(b"%PDF") or b"%PDF-" in head[:1024]:
        return PDF
    if head.startswith(b"PK\x03\x04"):
        return _sniff_zip(content)
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        # OLE2: legacy .doc/.msg, or an Office file encrypted with a password.
        return "application/x-ole-storage"
    if b"<html" in lower or b"<!doctype html" in lower:
        return HTML
    if _EMAIL_START_RE.match(lower):
        return EML
    if lower.startswith((b"<?xml", b"<open-rechtspraak")):
        return XML
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or _looks_like_text(head):
        return TEXT
    return "application/octet-stream"


_EMAIL_START_RE = re.compile(
    rb"(?:from|received|return-path|delivered-to|message-id|mime-version)\s*:"
)


_BINARY_BYTES = frozenset([*range(0x09), *range(0x0E, 0x20), 0x7F])


def _looks_like_text(head: bytes) -> bool:
    """Text in any ASCII-compatible encoding has (almost) no C0 control bytes."""
    if not head:
        return True
    if b"\x00" in head:
        return False
    binary = sum(1 for byte in head if byte in _BINARY_BYTES)
    return binary <= len(head) // 50


def _sniff_zip(content: bytes) -> str:
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return "application/zip"
    if "word/document.xml" in names:
        return DOCX
    return "application/zip"


def clean_text(value: str) -> str:
    """Newlines to ``\\n``, control characters out (except ``\\n`` and ``\\t``), NFC."""
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    # Separator-like controls end a line in the source; dropping them would glue words.
    value = value.translate(_NEWLINE_LIKE)
    value = _CONTROL_RE.sub("", value)
    return unicodedata.normalize("NFC", value)


_NEWLINE_LIKE = str.maketrans(
    {"\x0b": "\n", "\x0c": "\n", "\x85": "\n", "\u2028": "\n", "\u2029": "\n\n"}
)
# C0/C1 controls except \t and \n, plus invisible characters that break word matching
# (BOM, soft hyphen, zero-width space) in PDF and Word output.
_CONTROL_RE = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\ufeff\u00ad\u200b]")


# --- helpers -----------------------------------------------------------------------------


def _parse_mime(mime_type: str | None) -> tuple[str, dict[str, str]]:
    if not mime_type:
        return "", {}
    main, *rest = mime_type.split(";")
    params: dict[str, str] = {}
    for item in rest:
        key, sep, val = item.partition("=")
        if sep:
            params[key.strip().lower()] = val.strip().strip('"').strip("'")
    return main.strip().lower(), params


def _require_text(doc: ExtractedDocument) -> ExtractedDocument:
    if not doc.has_text:
        raise ExtractionError(f"no text: the {doc.mime_type} document contains no text")
    return doc


def _tidy_lines(text: str) -> str:
    """Strip each line and keep at most one blank line between blocks."""
    lines = [line.strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


# --- plain text --------------------------------------------------------------------------


def _decode_text(content: bytes, charset: str | None, warnings: list[str]) -> str:
    if content.startswith(codecs.BOM_UTF8):
        return content[len(codecs.BOM_UTF8) :].decode("utf-8", errors="replace")
    if content.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return content.decode("utf-16", errors="replace")
    if charset:
        try:
            return content.decode(charset)
        except (LookupError, UnicodeDecodeError):
            warnings.append(f"declared charset {charset!r} did not decode")
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        pass
    # cp1252 leaves five bytes undefined; replacing them beats refusing the document.
    warnings.append("decoded as cp1252")
    return content.decode("cp1252", errors="replace")


def _extract_plain(content: bytes, charset: str | None) -> ExtractedDocument:
    warnings: list[str] = []
    decoded = _decode_text(content, charset, warnings)
    return ExtractedDocument(text=clean_text(decoded), mime_type=TEXT, warnings=warnings)


# --- PDF ---------------------------------------------------------------------------------


def _decrypt_pdf(reader: Any) -> None:
    from pypdf.errors import DependencyError

    # Many PDFs are encrypted only against editing, with an empty user password.
    try:
        decrypted = reader.decrypt("")
    except (DependencyError, NotImplementedError) as exc:
        raise ExtractionError(f"encrypted pdf: cannot decrypt ({exc})") from exc
    if not decrypted:
        raise ExtractionError("encrypted pdf: a password is required to open it")


def _extract_pdf(content: bytes) -> ExtractedDocument:
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    warnings: list[str] = []
    try:
        reader = PdfReader(io.BytesIO(content))
        if reader.is_encrypted:
            _decrypt_pdf(reader)
            warnings.append("pdf was encrypted with an empty user password")
        raw_pages = list(reader.pages)
    except ExtractionError:
        raise
    except FileNotDecryptedError as exc:
        raise ExtractionError("encrypted pdf: a password is required to open it") from exc
    except PdfReadError as exc:
        raise ExtractionError(f"corrupt pdf: {exc}") from exc
    except Exception as exc:  # pypdf raises assorted builtin errors on damaged files
        raise ExtractionError(f"corrupt pdf: {type(exc).__name__}: {exc}") from exc

    if not raw_pages:
        raise ExtractionError("corrupt pdf: the file has no pages")

    page_texts: list[str] = []
    failed: list[int] = []
    for number, page in enumerate(raw_pages, start=1):
        try:
            page_text = page.extract_text() or ""
        except Exception:  # one damaged content stream should not lose the other pages
            failed.append(number)
            page_text = ""
        page_texts.append(_tidy_lines(clean_text(page_text)))

    if not any(t.strip() for t in page_texts):
        if failed and len(failed) == len(raw_pages):
            raise ExtractionError("corrupt pdf: text extraction failed on every page")
        raise ExtractionError(
            f"no text: the PDF ({len(raw_pages)} page(s)) has no text layer; "
            "it is probably scanned and OCR is not supported"
        )
    if failed:
        warnings.append("text extraction failed on page(s) " + ", ".join(map(str, failed)))
    empty = [str(i) for i, t in enumerate(page_texts, start=1) if not t and i not in failed]
    if empty:
        warnings.append("page(s) without text layer: " + ", ".join(empty))

    pages: list[PageSpan] = []
    offset = 0
    for number, page_text in enumerate(page_texts, start=1):
        if number > 1:
            offset += 2  # the "\n\n" that joins pages
        pages.append(PageSpan(number=number, start=offset, end=offset + len(page_text)))
        offset += len(page_text)

    title: str | None = None
    metadata: dict[str, Any] = {"page_count": len(raw_pages)}
    try:
        info = reader.metadata
        if info is not None and info.title:
            title = clean_text(str(info.title)).strip() or None
    except Exception:  # broken metadata is no reason to lose the text
        warnings.append("pdf metadata unreadable")
    return ExtractedDocument(
        text="\n\n".join(page_texts),
        mime_type=PDF,
        pages=pages,
        title=title,
        metadata=metadata,
        warnings=warnings,
    )


# --- DOCX --------------------------------------------------------------------------------


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


def _extract_docx(content: bytes) -> ExtractedDocument:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    _check_docx_size(content)
    try:
        document = docx.Document(io.BytesIO(content))
    except Exception as exc:  # zipfile, lxml and python-docx all raise their own errors
        raise ExtractionError(f"corrupt docx: {type(exc).__name__}: {exc}") from exc

    blocks: list[str] = []
    title: str | None = None
    try:
        for item in document.iter_inner_content():
            if isinstance(item, Paragraph):
                para = clean_text(item.text).strip()
                if not para:
                    continue
                style_name = item.style.name if item.style is not None else ""
                level = _heading_level(style_name or "")
                if level is not None:
                    para = " ".join(para.split())
                    if title is None and (style_name or "").lower() in _TITLE_STYLES:
                        title = para
                    blocks.append("#" * level + " " + para)
                else:
                    blocks.append(_tidy_lines(para))
            elif isinstance(item, Table):
                rows = _docx_table_rows(item)
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


def _docx_table_rows(table: Any) -> list[str]:
    rows: list[str] = []
    for row in table.rows:
        cells: list[str] = []
        previous: Any = None
        for cell in row.cells:
            # A merged cell is repeated once per grid column it spans.
            if previous is not None and cell._tc is previous:
                continue
            previous = cell._tc
            cells.append(" ".join(clean_text(cell.text).split()))
        if any(cells):
            rows.append(" | ".join(cells))
    return rows


# --- HTML --------------------------------------------------------------------------------


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
    return _tidy_lines(clean_text(flat)), title


def _extract_html(content: bytes) -> ExtractedDocument:
    text, title = html_to_text(content)
    return ExtractedDocument(text=text, mime_type=HTML, title=title)


# --- e-mail ------------------------------------------------------------------------------


def _header(msg: Message, name: str) -> str | None:
    try:
        value = msg.get(name)
    except Exception:  # a malformed header must not lose the message
        value = None
    if value is None:
        return None
    text = " ".join(clean_text(str(value)).split())
    return text or None


def _email_datetime(msg: Message) -> str | None:
    try:
        value = getattr(msg.get("Date"), "datetime", None)
    except Exception:
        return None
    return value.isoformat() if value is not None else None


def _part_text(part: Message) -> str:
    if isinstance(part, EmailMessage):
        try:
            content = part.get_content()
            if isinstance(content, str):
                return content
        except (LookupError, UnicodeError, ValueError, KeyError):
            pass
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    return _decode_text(payload, part.get_content_charset(), [])


def _extract_email(content: bytes) -> ExtractedDocument:
    try:
        msg = BytesParser(policy=policy.default).parsebytes(content)
    except Exception as exc:
        raise ExtractionError(f"unreadable e-mail: {type(exc).__name__}: {exc}") from exc

    warnings: list[str] = []
    body = ""
    body_part: Message | None = None
    if isinstance(msg, EmailMessage):
        try:
            body_part = msg.get_body(preferencelist=("plain", "html"))
        except Exception:
            body_part = None
    if body_part is not None:
        raw = _part_text(body_part)
        if body_part.get_content_subtype() == "html":
            body, _ = html_to_text(raw)
        else:
            body = raw
    elif not msg.is_multipart() and msg.get_content_maintype() == "text":
        body_part = msg
        raw = _part_text(msg)
        body = html_to_text(raw)[0] if msg.get_content_subtype() == "html" else raw

    attachments: list[str] = []
    for part in msg.walk():
        if part.is_multipart() or part is body_part:
            continue
        name = part.get_filename()
        if name:
            attachments.append(" ".join(clean_text(name).split()))
        elif part.get_content_disposition() == "attachment":
            attachments.append("(unnamed attachment)")

    date_raw = _header(msg, "Date")
    date_value = date_raw
    if date_raw:
        parsed = _email_datetime(msg)
        if parsed is not None:
            date_value = parsed
        else:
            warnings.append("e-mail date could not be parsed")

    meta: dict[str, Any] = {
        "from": _header(msg, "From"),
        "to": _header(msg, "To"),
        "cc": _header(msg, "Cc"),
        "date": date_value,
        "subject": _header(msg, "Subject"),
        "message_id": _header(msg, "Message-ID"),
        "attachments": attachments,
    }
    header_lines = [
        f"Van: {meta['from'] or ''}",
        f"Aan: {meta['to'] or ''}",
    ]
    if meta["cc"]:
        header_lines.append(f"Cc: {meta['cc']}")
    header_lines += [f"Onderwerp: {meta['subject'] or ''}", f"Datum: {date_raw or ''}"]
    if attachments:
        header_lines.append("Bijlagen: " + ", ".join(attachments))
    text = "\n".join(header_lines) + "\n\n" + _tidy_lines(clean_text(body))
    if not body.strip():
        warnings.append("e-mail has no text body")
    return ExtractedDocument(
        text=text.strip(),
        mime_type=EML,
        title=meta["subject"],
        metadata={"email": meta},
        warnings=warnings,
    )


# --- XML ---------------------------------------------------------------------------------


def _xml_root(content: bytes) -> str | None:
    head = content[:65536].lstrip(b"\xef\xbb\xbf")
    match = _XML_ROOT_RE.match(head)
    return match.group(1).decode("ascii", "replace").lower() if match else None


def _extract_xml(content: bytes) -> ExtractedDocument:
    if _xml_root(content) == "open-rechtspraak":
        return _extract_rechtspraak(content)
    return _extract_generic_xml(content)


def _extract_rechtspraak(content: bytes) -> ExtractedDocument:
    try:
        from app.caselaw.parse import extract_rechtspraak
    except ModuleNotFoundError as exc:
        if exc.name in {"app.caselaw", "app.caselaw.parse"}:
            raise ExtractionError("rechtspraak parser unavailable") from exc
        raise ExtractionError(f"rechtspraak parser unavailable: {exc}") from exc
    except ImportError as exc:
        raise ExtractionError(f"rechtspraak parser unavailable: {exc}") from exc
    try:
        return extract_rechtspraak(content)
    except ExtractionError:
        raise
    except Exception as exc:  # malformed input must reach the report, not become a 500
        raise ExtractionError(f"invalid rechtspraak xml: {type(exc).__name__}: {exc}") from exc


def _extract_generic_xml(content: bytes) -> ExtractedDocument:
    from lxml import etree

    # No entities, no network, no DTD: uploaded XML is untrusted.
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        root = etree.fromstring(content, parser=parser)
    except etree.XMLSyntaxError as exc:
        raise ExtractionError(f"invalid xml: {exc}") from exc
    if root is None:
        raise ExtractionError("invalid xml: empty document")
    parts = [" ".join(t.split()) for t in root.itertext()]
    text = "\n".join(p for p in parts if p)
    return ExtractedDocument(
        text=clean_text(text),
        mime_type=XML,
        warnings=["xml is not Rechtspraak open data; extracted its text content only"],
    )
