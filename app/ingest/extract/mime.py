"""Content types: the formats ewall reads, their aliases and file extensions, and
sniffing the type of bytes that arrive without one."""

from __future__ import annotations

import codecs
import io
import re

MAX_CONTENT_BYTES = 50 * 1024 * 1024

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
HTML = "text/html"
TEXT = "text/plain"
EML = "message/rfc822"
XML = "application/xml"

# Everything a source or browser may call these formats, folded to one canonical name.
MIME_ALIASES: dict[str, str] = {
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

UNKNOWN_MIME = {"", "application/octet-stream", "binary/octet-stream", "application/unknown"}


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


def parse_mime(mime_type: str | None) -> tuple[str, dict[str, str]]:
    if not mime_type:
        return "", {}
    main, *rest = mime_type.split(";")
    params: dict[str, str] = {}
    for item in rest:
        key, sep, val = item.partition("=")
        if sep:
            params[key.strip().lower()] = val.strip().strip('"').strip("'")
    return main.strip().lower(), params
