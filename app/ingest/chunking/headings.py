"""Recognising a heading line (Markdown, numbered, Roman, lettered, ALL CAPS) and its rank
in the document's hierarchy."""

from __future__ import annotations

import re
from dataclasses import dataclass

MD_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_NUM_HEADING_RE = re.compile(
    r"^(?P<num>[IVXLC]{1,6}[.)]|[A-Z][.)]|\d{1,2}[.)]|\d{1,2}(?:\.\d{1,2}){1,3}\.?)"
    r"[ \t]+(?P<title>\S.*)$"
)
_LEADING_NUMBER_RE = re.compile(
    r"^((?:[IVXLC]{1,6}|[A-Z])[.)]|\d{1,2}(?:\.\d{1,2}){0,3}[.)]?)[ \t]+\S"
)
_ROMAN_RE = re.compile(r"M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")

# Fixed ranks keep the hierarchy independent of which heading happens to come first:
# explicit heading styles (Markdown from DOCX/HTML) above everything typed by hand, then
# ALL-CAPS lines, Roman numerals, capital letters, and 1. > 1.1 > 1.1.1.
RANK_CAPS, RANK_ROMAN, RANK_LETTER, _RANK_NUMBER = 10, 11, 12, 13


_ROMAN_DIGITS = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def roman_value(numeral: str) -> int:
    total = 0
    for digit, following in zip(numeral, [*numeral[1:], ""], strict=True):
        value = _ROMAN_DIGITS.get(digit, 0)
        total += -value if following and _ROMAN_DIGITS.get(following, 0) > value else value
    return total


@dataclass(frozen=True)
class Heading:
    rank: int
    label: str


def short_line(line: str, max_words: int = 12) -> bool:
    return len(line) <= 90 and len(line.split()) <= max_words and "|" not in line


def heading_of(line: str) -> Heading | None:
    """The heading a line announces, if it is one (without sequence context)."""
    line = line.strip()
    if not line or line[-1] in ",;":
        return None
    md = MD_HEADING_RE.match(line)
    if md:
        title = md.group(2).strip()
        numbered = _LEADING_NUMBER_RE.match(title)
        label = numbered.group(1).rstrip(".)") if numbered else title
        if len(label) > 80:
            label = label[:79].rstrip() + "…"
        return Heading(len(md.group(1)), label)
    if not short_line(line):
        return None
    num = _NUM_HEADING_RE.match(line)
    if num:
        title = num.group("title")
        if not (title[0].isupper() or title[0] in "\"'“‘("):
            return None
        if title.endswith(".") and len(title.split()) > 2:
            return None  # a short numbered sentence, not a heading
        label = num.group("num").rstrip(".)")
        if label.isdigit() or "." in label:
            return Heading(_RANK_NUMBER + label.count("."), label)
        if len(label) > 1 or label == "I":
            if _ROMAN_RE.fullmatch(label):
                return Heading(RANK_ROMAN, label)
            return None
        return Heading(RANK_LETTER, label)
    letters = [c for c in line if c.isalpha()]
    visible = [c for c in line if not c.isspace()]
    if (
        len(letters) >= 3
        and len(line.split()) <= 10
        and all(c.isupper() for c in letters)
        and len(letters) >= 0.7 * len(visible)
        and not line.endswith(".")
    ):
        return Heading(RANK_CAPS, line.rstrip(":").strip())
    return None
