"""E-mail (RFC 822): headers as a short Dutch header block, then the body."""

from __future__ import annotations

import base64
import quopri
from collections.abc import Iterator
from email import errors, policy
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


# A forwarded message (message/rfc822) is read into the text with its own headers, down to
# this depth; deeper ones are named in a warning.
MAX_FORWARD_DEPTH = 5
_BASE64_DEFECTS = (
    errors.InvalidBase64CharactersDefect,
    errors.InvalidBase64PaddingDefect,
    errors.InvalidBase64LengthDefect,
)


def extract_email(content: bytes) -> ExtractedDocument:
    try:
        msg = BytesParser(policy=policy.default).parsebytes(content)
    except Exception as exc:
        raise ExtractionError(f"unreadable e-mail: {type(exc).__name__}: {exc}") from exc

    warnings: list[str] = []
    meta, text = _message(msg, warnings, depth=0)
    if not text.strip():
        warnings.append("e-mail has no text body")
    header_lines = _header_lines(meta)
    if meta["cc"]:
        header_lines.insert(2, f"Cc: {meta['cc']}")
    del meta["date_raw"]  # shown in the text; the metadata holds the parsed date
    if meta["attachments"]:
        header_lines.append("Bijlagen: " + ", ".join(meta["attachments"]))
    return ExtractedDocument(
        text=("\n".join(header_lines) + "\n\n" + text).strip(),
        mime_type=EML,
        title=meta["subject"],
        metadata={"email": meta},
        warnings=warnings,
    )


def _parts(msg: Message) -> Iterator[Message]:
    """The leaf parts of a message in order, a forwarded message (message/rfc822) as one
    part: its own parts are its own (explicit stack: multiparts nest deeply)."""
    stack: list[Message] = [msg]
    while stack:
        part = stack.pop()
        payload = part.get_payload()
        if part.get_content_type() != "message/rfc822" and part.is_multipart():
            if isinstance(payload, list):
                stack.extend(p for p in reversed(payload) if isinstance(p, Message))
            continue
        yield part


def _message(msg: Message, warnings: list[str], depth: int) -> tuple[dict[str, Any], str]:
    """A message's headers (metadata) and its text: the body, then each text attachment
    and each forwarded message with its headers (the ingestion fuzz of 2026-12-05: both
    were left out without a word). Other attachments are named, and a warning says that
    their content is not in this document."""
    body = ""
    body_part: Message | None = None
    if isinstance(msg, EmailMessage):
        try:
            body_part = msg.get_body(preferencelist=("plain", "html"))
        except Exception:
            body_part = None
    if body_part is None and not msg.is_multipart() and msg.get_content_maintype() == "text":
        body_part = msg
    if body_part is not None:
        body = _readable(body_part, warnings, "the body")

    attachments: list[str] = []
    extra: list[str] = []
    for part in _parts(msg):
        if part is body_part:
            continue
        name = part.get_filename()
        label = " ".join(clean_text(name).split()) if name else None
        if part.get_content_type() == "message/rfc822":
            extra.append(_forwarded(part, warnings, depth))
        elif part.get_content_maintype() == "text" and (
            label or part.get_content_disposition() == "attachment"
        ):
            text = _readable(part, warnings, f"attachment {label or '(unnamed)'}")
            if text.strip():
                extra.append(f"Bijlage {label or '(zonder naam)'}:\n{text}")
        elif label or part.get_content_disposition() == "attachment":
            warnings.append(
                f"attachment {label or '(unnamed)'} ({part.get_content_type()}) is not read "
                "into the e-mail: push it as its own document"
            )
        if label:
            attachments.append(label)
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
        "date_raw": date_raw,
    }
    text = "\n\n".join([tidy_lines(clean_text(body)), *extra])
    return meta, text


def _readable(part: Message, warnings: list[str], what: str) -> str:
    """A text part's text (HTML as its visible text); a warning when its base64 was broken
    (the decoder then reads what it can, which may be garbled)."""
    raw = _part_text(part)
    if any(isinstance(d, _BASE64_DEFECTS) for d in part.defects):
        warnings.append(f"e-mail {what}: invalid base64, its text may be garbled")
    text = html_to_text(raw)[0] if part.get_content_subtype() == "html" else raw
    return tidy_lines(clean_text(text))


def _forwarded(part: Message, warnings: list[str], depth: int) -> str:
    """A forwarded message as a header block and its text."""
    payload = part.get_payload()
    inner = payload[0] if isinstance(payload, list) and payload else None
    if not isinstance(inner, Message):
        return ""
    encoding = str(part.get("Content-Transfer-Encoding", "")).strip().lower()
    if encoding in ("base64", "quoted-printable"):
        # RFC 2046 forbids encoding a message/rfc822 part, and the parser read the encoded
        # text as the message; some mailers encode it all the same (a review: its base64
        # came out as the forwarded text)
        encoded = inner.as_string().encode("ascii", errors="replace")
        try:
            raw = (
                base64.b64decode(b"".join(encoded.split()))
                if encoding == "base64"
                else quopri.decodestring(encoded)
            )
            inner = BytesParser(policy=policy.default).parsebytes(raw)
        except Exception:  # binascii.Error, and whatever the parser raises
            warnings.append("a forwarded message could not be decoded")
            return ""
    if depth + 1 > MAX_FORWARD_DEPTH:
        warnings.append(f"forwarded messages nested deeper than {MAX_FORWARD_DEPTH} are not read")
        return ""
    meta, text = _message(inner, warnings, depth + 1)
    return "\n".join(["Doorgestuurd bericht:", *_header_lines(meta)]) + "\n\n" + text


def _header_lines(meta: dict[str, Any]) -> list[str]:
    """Who wrote to whom, about what and when, as the text shows a message's headers."""
    return [
        f"Van: {meta['from'] or ''}",
        f"Aan: {meta['to'] or ''}",
        f"Onderwerp: {meta['subject'] or ''}",
        f"Datum: {meta['date_raw'] or ''}",
    ]
