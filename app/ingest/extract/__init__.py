"""Turn an uploaded document (text, PDF, DOCX, HTML, e-mail, Rechtspraak XML) into text.

Every failure is an ``ExtractionError`` with a reason fit for the ingest report: a
document that yields no text must be reported, never stored as zero chunks in silence.
The one exception is a Rechtspraak record without a body (a voided ECLI): its metadata
still matters, so it is returned and the caller decides.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from app.ingest.extract.docx_reader import extract_docx
from app.ingest.extract.email_reader import extract_email
from app.ingest.extract.html_reader import extract_html
from app.ingest.extract.mime import (
    DOCX,
    EML,
    HTML,
    MAX_CONTENT_BYTES,
    MIME_ALIASES,
    PDF,
    TEXT,
    UNKNOWN_MIME,
    XML,
    parse_mime,
    sniff_mime_type,
)
from app.ingest.extract.pdf_reader import extract_pdf
from app.ingest.extract.text import clean_text, extract_plain, require_text
from app.ingest.extract.xml_reader import extract_xml, xml_root
from app.ingest.types import ExtractedDocument, ExtractionError

__all__ = [
    "DOCX",
    "EML",
    "HTML",
    "MAX_CONTENT_BYTES",
    "PDF",
    "TEXT",
    "XML",
    "clean_text",
    "extract",
    "sniff_mime_type",
]

log = logging.getLogger("ewall.ingest.extract")


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
        return require_text(doc)
    if content is None:
        raise ExtractionError("no content: neither text nor content was given")
    if len(content) > MAX_CONTENT_BYTES:
        raise ExtractionError(f"content too large: {len(content)} bytes (limit 50 MB)")

    mime, params = parse_mime(mime_type)
    if mime in UNKNOWN_MIME:
        mime = sniff_mime_type(content, filename)
    else:
        mime = MIME_ALIASES.get(mime, mime)

    reader: Callable[[bytes], ExtractedDocument]
    if mime == PDF:
        reader = extract_pdf
    elif mime == DOCX:
        reader = extract_docx
    elif mime == HTML:
        reader = extract_html
    elif mime == EML:
        reader = extract_email
    elif mime == XML or (mime.endswith("+xml") and xml_root(content) == "open-rechtspraak"):
        reader = extract_xml
    elif mime == TEXT or mime.startswith("text/"):
        reader = functools.partial(extract_plain, charset=params.get("charset"))
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
    if reader is extract_xml and xml_root(content) == "open-rechtspraak":
        # A Rechtspraak record without a body (a voided ECLI) still carries status markers
        # that ingestion needs; whether that is an error is the caller's decision.
        return doc
    return require_text(doc)
