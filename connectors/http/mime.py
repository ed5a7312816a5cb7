"""What a downloaded file is: its name from Content-Disposition, its MIME type."""

from __future__ import annotations

import mimetypes
import re
from urllib.parse import unquote

_DISPOSITION_STAR = re.compile(r"filename\*\s*=\s*([^']*)'[^']*'([^;]+)", re.IGNORECASE)
_DISPOSITION = re.compile(r'filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))', re.IGNORECASE)


def disposition_filename(header: str | None) -> str | None:
    """The filename of a Content-Disposition header (RFC 6266, incl. ``filename*``)."""
    if not header:
        return None
    star = _DISPOSITION_STAR.search(header)
    if star:
        return unquote(star.group(2).strip(), encoding=star.group(1) or "utf-8", errors="replace")
    plain = _DISPOSITION.search(header)
    if plain:
        name = plain.group(1) if plain.group(1) is not None else plain.group(2)
        return name.replace('\\"', '"').strip() or None
    return None


_EXTRA_TYPES = {
    ".msg": "application/vnd.ms-outlook",
    ".eml": "message/rfc822",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".doc": "application/msword",
    ".pdf": "application/pdf",
    ".txt": "text/plain",
    ".htm": "text/html",
    ".html": "text/html",
    ".xml": "application/xml",
    ".rtf": "application/rtf",
}


def guess_mime(
    filename: str | None, extension: str | None = None, content_type: str | None = None
) -> str:
    """Mime type from the download's filename, else the profile's extension, else the
    response's Content-Type; ``application/octet-stream`` when nothing says more."""
    for name in (filename, f"x.{extension.lstrip('.')}" if extension else None):
        if not name:
            continue
        suffix = ("." + name.rsplit(".", 1)[-1].lower()) if "." in name else ""
        if suffix in _EXTRA_TYPES:
            return _EXTRA_TYPES[suffix]
        guessed, _ = mimetypes.guess_type(name, strict=False)
        if guessed:
            return guessed
    if content_type:
        base = content_type.split(";", 1)[0].strip().lower()
        if base and base not in ("application/octet-stream", "binary/octet-stream"):
            return base
    return "application/octet-stream"
