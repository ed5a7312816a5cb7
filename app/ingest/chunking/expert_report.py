"""Expert reports: one chunk per numbered paragraph."""

from __future__ import annotations

import re

from app.ingest.chunking.headings import short_line
from app.ingest.chunking.packing import (
    Piece,
    SourceText,
    chunk_generic,
    chunk_span,
    line_spans,
    unit_has_body,
)

_NUMBERED_PARA_RE = re.compile(
    r"^[ \t]*(?:\((?P<a>\d{1,3}(?:\.\d{1,2}){0,3})\)|\[(?P<b>\d{1,4})\]"
    r"|(?P<c>\d{1,3}(?:\.\d{1,2}){1,3})\.?|(?P<d>\d{1,3})[.)])[ \t]+\S"
)


def numbered_regions(text: str) -> list[tuple[int, str]]:
    """(line start, paragraph number) of every numbered paragraph."""
    out: list[tuple[int, str]] = []
    for ls, le in line_spans(text):
        m = _NUMBERED_PARA_RE.match(text[ls:le])
        if m:
            number = m.group("a") or m.group("c") or m.group("d") or ""
            if m.group("b"):
                number = m.group("b").lstrip("0") or "0"
            out.append((ls, number))
    return out


def numbered_paragraphs(src: SourceText, marks: list[tuple[int, str]]) -> list[Piece]:
    text = src.text
    budget = src.limits.cap(src.limits.generic)
    pieces = chunk_generic(src, 0, marks[0][0])
    region_start: int | None = None
    for idx, (ls, number) in enumerate(marks):
        if region_start is None:
            region_start = ls
        region_end = marks[idx + 1][0] if idx + 1 < len(marks) else len(text)
        newline = text.find("\n", ls, region_end)
        first_line = text[ls : newline if newline >= 0 else region_end].strip()
        if (
            idx + 1 < len(marks)
            and not unit_has_body(text, ls, region_end)
            and short_line(first_line, 10)
            and not first_line.endswith(".")
        ):
            continue  # "1. Introduction" over "1.1 ..." is a heading, not a paragraph
        pieces += chunk_span(src, region_start, region_end, f"¶ {number}", budget)
        region_start = None
    return pieces


def chunk_expert_report(src: SourceText) -> list[Piece]:
    marks = numbered_regions(src.text)
    if not marks:
        return chunk_generic(src, 0, len(src.text))
    return numbered_paragraphs(src, marks)
