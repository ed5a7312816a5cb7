"""Bytes to an lxml element tree for Rechtspraak records, repairing what real files get wrong
(a byte-order mark, whitespace before the declaration, stray cp1252 or cp437 bytes in text
declared UTF-8, and, last, a lenient parse) and saying what was done. No entities, DTDs or
network: the citation gate parses bodies fetched from the internet."""

from __future__ import annotations

import re

from lxml import etree

from app.ingest.types import ExtractionError

LENIENT_WARNING = "recovered malformed XML with a lenient parser"


def _strict_parser() -> etree.XMLParser:
    # No entities, no DTDs, no network: the gate parses bodies fetched from the internet.
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def _lenient_parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, recover=True)


_DECLARED = re.compile(rb"""^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
_LEGACY_BYTE = re.compile("[\udc80-\udcff]")
# cp1252 punctuation that legacy Dutch text really uses; only a letter on BOTH sides makes
# the cp437 letter the better guess (zo\x94nosen -> zoönosen, but \x93Proces\x94 -> quotes).
_QUOTE_LIKE = frozenset({0x80, 0x84, 0x85, 0x93, 0x94, 0x96, 0x97})
_ALWAYS_CP1252 = frozenset({0x91, 0x92})  # ‘ ’ (zo’n, ’s-Gravenhage); cp437 æ Æ are rare
_ALWAYS_CP437 = frozenset({0x9F})  # ƒ (guilder) in old rulings; cp1252 Ÿ is rare
_CP1252_UNDEFINED = frozenset({0x81, 0x8D, 0x8F, 0x90, 0x9D})


def _letterish(char: str) -> bool:
    return char.isalpha() or "\udc80" <= char <= "\udcff"


def _legacy_char(byte: int, before: str, after: str) -> tuple[str, str]:
    """The character a stray non-UTF-8 byte most likely stood for, and its code page.

    The corpus mixes cp1252 (é = 0xE9) and cp437 (é = 0x82) bytes, even within one file,
    so the choice is made per byte from what the two code pages would give and whether
    the byte sits inside a word.
    """
    dos = bytes([byte]).decode("cp437")
    if byte in _CP1252_UNDEFINED or byte in _ALWAYS_CP437:
        return dos, "cp437"
    win = bytes([byte]).decode("cp1252")
    if byte in _ALWAYS_CP1252:
        return win, "cp1252"
    if byte >= 0xA0 and win.isalpha():
        return win, "cp1252"
    if dos.isalpha():
        if byte in _QUOTE_LIKE:
            in_word = _letterish(before) and _letterish(after)
        else:
            in_word = _letterish(before) or _letterish(after)
        if in_word:
            return dos, "cp437"
    return win, "cp1252"


# Each stray byte is repaired by a Python call (about 2.6 s per MB of them): past this many,
# the file is not UTF-8 with a few legacy bytes but something else, and it is refused rather
# than spending minutes on it (a misbehaving source held the citation gate's parser so).
MAX_REPAIRED_BYTES = 200_000


def legacy_bytes(data: bytes) -> int:
    """How many bytes of ``data``, declared UTF-8 (or not declared), are not UTF-8: the
    repair's cost (0 for clean UTF-8, or XML that declares another encoding)."""
    declared = _DECLARED.match(data.lstrip(b"\xef\xbb\xbf \t\r\n"))
    if declared and declared.group(1).lower() not in (b"utf-8", b"utf8"):
        return 0
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return len(_LEGACY_BYTE.findall(data.decode("utf-8", errors="surrogateescape")))
    return 0


def _decode_mixed(data: bytes) -> tuple[bytes, dict[str, int]]:
    """UTF-8 with stray legacy bytes repaired; returns clean UTF-8 and counts per code page."""
    text = data.decode("utf-8", errors="surrogateescape")
    stray = len(_LEGACY_BYTE.findall(text))
    if stray > MAX_REPAIRED_BYTES:
        raise ExtractionError(
            f"declared UTF-8 but holds {stray} bytes that are not (at most "
            f"{MAX_REPAIRED_BYTES} are repaired)"
        )
    counts: dict[str, int] = {}

    def repair(match: re.Match[str]) -> str:
        pos = match.start()
        before = text[pos - 1] if pos > 0 else " "
        after = text[pos + 1] if pos + 1 < len(text) else " "
        char, codepage = _legacy_char(ord(match.group()) - 0xDC00, before, after)
        counts[codepage] = counts.get(codepage, 0) + 1
        return char

    fixed = _LEGACY_BYTE.sub(repair, text)
    return fixed.encode("utf-8"), counts


def _strict(data: bytes) -> etree._Element | None:
    try:
        return etree.fromstring(data, parser=_strict_parser())
    except etree.XMLSyntaxError:
        return None


def parse_xml(data: bytes) -> tuple[etree._Element, list[str]]:
    """Parse strictly; otherwise repair what real files get wrong, and say what was done."""
    if not isinstance(data, bytes | bytearray):
        raise ExtractionError("expected the XML as bytes")
    data = bytes(data)
    if not data.strip():
        raise ExtractionError("empty document")
    try:
        return etree.fromstring(data, parser=_strict_parser()), []
    except etree.XMLSyntaxError as exc:
        first_error = str(exc)

    warnings: list[str] = []
    body = data
    if body.startswith(b"\xef\xbb\xbf"):
        body = body[3:]
    stripped = body.lstrip(b" \t\r\n")
    if len(stripped) != len(body):
        warnings.append(
            f"removed {len(body) - len(stripped)} byte(s) of whitespace before the XML declaration"
        )
        body = stripped
        root = _strict(body)
        if root is not None:
            return root, warnings

    declared = _DECLARED.match(body)
    encoding = declared.group(1).decode("ascii").lower() if declared else "utf-8"
    if encoding in ("utf-8", "utf8"):
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            body, counts = _decode_mixed(body)
            described = ", ".join(f"{n} as {cp}" for cp, n in sorted(counts.items()))
            warnings.append(
                f"declared UTF-8 but held {sum(counts.values())} byte(s) that are not: "
                f"decoded {described}"
            )
            root = _strict(body)
            if root is not None:
                return root, warnings

    try:
        root = etree.fromstring(body, parser=_lenient_parser())
    except etree.XMLSyntaxError as exc:
        raise ExtractionError(f"not well-formed XML: {exc}") from exc
    if root is None:
        raise ExtractionError(f"not well-formed XML: {first_error}")
    warnings.append(f"{LENIENT_WARNING} ({first_error})")
    return root, warnings
