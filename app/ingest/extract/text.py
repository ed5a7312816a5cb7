"""Text clean-up shared by every reader, and the plain-text reader."""

from __future__ import annotations

import codecs
import re
import unicodedata

from app.ingest.extract.mime import TEXT
from app.ingest.types import ExtractedDocument, ExtractionError


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
# Characters that say nothing and, inside a word, keep it from matching: the soft hyphen,
# zero-width space, non-joiner and joiner, the direction marks, embeddings, overrides and
# isolates (a fuzz of 2026-12-05: "\u202eonrechtmatig" matched no question), the word
# joiner and invisible operators, the BOM. A question (app/search/repository.py) and an
# answer to the grounding gate (app/gates/sentences.py) lose the same ones.
INVISIBLE = "\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
# C0/C1 controls except \t and \n, and the invisible characters
_CONTROL_RE = re.compile(f"[\x00-\x08\x0e-\x1f\x7f-\x9f{INVISIBLE}]")


def require_text(doc: ExtractedDocument) -> ExtractedDocument:
    if not doc.has_text:
        raise ExtractionError(f"no text: the {doc.mime_type} document contains no text")
    return doc


def tidy_lines(text: str) -> str:
    """Strip each line and keep at most one blank line between blocks."""
    lines = [line.strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def decode_text(content: bytes, charset: str | None, warnings: list[str]) -> str:
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
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data":  # cut inside its last character
            warnings.append("the last bytes were an incomplete UTF-8 character")
            return content[: exc.start].decode("utf-8", errors="replace") + "\ufffd"
    # cp1252 leaves five bytes undefined; replacing them beats refusing the document.
    warnings.append("decoded as cp1252")
    return content.decode("cp1252", errors="replace")


# Past this share of control characters (other than tab and line breaks) and replacement
# characters, "text" is binary: random bytes decode as cp1252 with about 12%, text copied
# from anywhere with well under 1%.
MAX_CONTROL_SHARE = 0.05
# (ESC is left out: terminal colours in a log are text)
_NOT_TEXT_RE = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f\ufffd]")
# Where the characters of a text in a living script lie: UTF-16 without a byte order mark
# and without zero bytes (Chinese, say) is taken for UTF-16 when nearly all its characters
# fall here; random bytes read as UTF-16 scatter over all of them (about 60% fall here).
_SCRIPT_RANGES = (
    (0x09, 0x0D), (0x20, 0x7E), (0xA0, 0x24F), (0x370, 0x6FF), (0xE00, 0xE7F),
    (0x2000, 0x206F), (0x3000, 0x30FF), (0x3400, 0x9FFF), (0xAC00, 0xD7AF), (0xFF00, 0xFFEF),
)  # fmt: skip


def _utf16_without_bom(content: bytes) -> str | None:
    """The text of UTF-16 written without a byte order mark (its Latin letters each have a
    zero byte, all on the odd offsets for little-endian, the even ones for big-endian)."""
    sample = content[:4096]
    if len(sample) < 4 or sample.count(0) < len(sample) // 4:
        return None
    odd, even = sample[1::2].count(0), sample[0::2].count(0)
    if odd >= 0.9 * len(sample[1::2]) > even:
        return content.decode("utf-16-le", errors="replace")
    if even >= 0.9 * len(sample[0::2]) > odd:
        return content.decode("utf-16-be", errors="replace")
    return None


def _utf16_of_a_script(content: bytes) -> str | None:
    """UTF-16 without a byte order mark or zero bytes, when nearly every character it
    reads as lies in a living script (_SCRIPT_RANGES)."""
    if len(content) < 4 or len(content) % 2:
        return None
    for codec in ("utf-16-le", "utf-16-be"):
        try:
            text = content.decode(codec)
        except UnicodeDecodeError:
            continue
        inside = sum(any(a <= ord(c) <= b for a, b in _SCRIPT_RANGES) for c in text)
        if inside >= 0.95 * len(text):
            return text
    return None


def extract_plain(content: bytes, charset: str | None) -> ExtractedDocument:
    """Plain text. Binary content sent as text is refused: decoded as cp1252 it made chunks
    of garbage with no report entry (the ingestion fuzz of 2026-12-05)."""
    warnings: list[str] = []
    decoded = _utf16_without_bom(content) if not charset else None
    if decoded is None:
        decoded = decode_text(content, charset, warnings)
    odd = len(_NOT_TEXT_RE.findall(decoded))
    if decoded and odd > MAX_CONTROL_SHARE * len(decoded) and not charset:
        utf16 = _utf16_of_a_script(content)
        if utf16 is not None:
            decoded, odd, warnings = utf16, 0, ["read as UTF-16 without a byte order mark"]
    if decoded and odd > MAX_CONTROL_SHARE * len(decoded):
        raise ExtractionError(
            f"binary content, not text: {odd} of {len(decoded)} characters are control or "
            "undecodable characters"
        )
    return ExtractedDocument(text=clean_text(decoded), mime_type=TEXT, warnings=warnings)
