"""E-mail (RFC 822): headers as a short Dutch header block, then the body."""

from __future__ import annotations

from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser
from typing import Any

from app.ingest.extract.html_reader import html_to_text
from app.ingest.extract.mime import EML
from app.ingest.extract.text import clean_text, decode_text, tidy_lines
from app.ingest.types import ExtractedDocument, ExtractionError


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
    return decode_text(payload, part.get_content_charset(), [])


def extract_email(content: bytes) -> ExtractedDocument:
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
    text = "\n".join(header_lines) + "\n\n" + tidy_lines(clean_text(body))
    if not body.strip():
        warnings.append("e-mail has no text body")
    return ExtractedDocument(
        text=text.strip(),
        mime_type=EML,
        title=meta["subject"],
        metadata={"email": meta},
        warnings=warnings,
    )
