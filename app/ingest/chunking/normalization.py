"""The canonical text of a chunk, whose sha256 is the chunk id."""

from __future__ import annotations

import re
import unicodedata

_INLINE_WS_RE = re.compile(r"[^\S\n]+")
_BLANK_RUN_RE = re.compile(r"\n{3,}")


def normalize_chunk_text(text: str) -> str:
    """The canonical form whose sha256 is the chunk id.

    Only whitespace layout and Unicode composition change: two extractions of the same
    words must hash the same, and nothing that a reader would see as different may merge.
    """
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    lines = [_INLINE_WS_RE.sub(" ", line).strip() for line in text.split("\n")]
    return _BLANK_RUN_RE.sub("\n\n", "\n".join(lines)).strip()
