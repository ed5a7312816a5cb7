"""Briefs (pleitnota's, dagvaardingen, conclusies, oppositions): one chunk per section
under its heading path."""

from __future__ import annotations

from app.ingest.chunking.headings import (
    RANK_CAPS,
    RANK_LETTER,
    RANK_ROMAN,
    Heading,
    heading_of,
    roman_value,
)
from app.ingest.chunking.packing import Piece, SourceText, chunk_span, line_spans, unit_has_body


def chunk_brief(src: SourceText) -> list[Piece]:
    text = src.text
    budget = src.limits.cap(src.limits.brief_section)
    heads: list[tuple[int, Heading]] = []
    last_letter, last_roman = "", 0
    for ls, le in line_spans(text):
        head = heading_of(text[ls:le])
        if head is None:
            continue
        # A lone I, V, X, L or C is a Roman numeral or a letter depending on what came
        # before: "I." after "H." is a letter, "V." after "IV." a numeral.
        if len(head.label) == 1 and head.rank in (RANK_ROMAN, RANK_LETTER):
            as_letter = bool(last_letter) and ord(head.label) == ord(last_letter) + 1
            as_roman = roman_value(head.label) == last_roman + 1
            if as_letter:
                head = Heading(RANK_LETTER, head.label)
            elif as_roman:
                head = Heading(RANK_ROMAN, head.label)
        if head.rank == RANK_LETTER:
            last_letter = head.label
        elif head.rank == RANK_ROMAN:
            last_roman = roman_value(head.label)
        heads.append((ls, head))
    # An unnumbered capitals line that keeps coming back is a running head of a PDF page
    # ("VERTROUWELIJK", "PLEITNOTA MR. X"), not a section.
    caps_seen: dict[str, int] = {}
    for _, head in heads:
        if head.rank == RANK_CAPS:
            caps_seen[head.label] = caps_seen.get(head.label, 0) + 1
    heads = [(ls, h) for ls, h in heads if h.rank != RANK_CAPS or caps_seen[h.label] < 3]
    if not heads:
        return chunk_span(src, 0, len(text), "", budget)
    # Unnumbered ALL-CAPS lines ("CONCLUSIE", "PRODUCTIES", the title) sit at the level of
    # the top numbered headings, so they close a numbered section instead of nesting in it.
    typed = [h.rank for _, h in heads if h.rank > RANK_CAPS]
    if typed:
        top = min(typed)
        heads = [(ls, Heading(top, h.label) if h.rank == RANK_CAPS else h) for ls, h in heads]

    pieces: list[Piece] = chunk_span(src, 0, heads[0][0], "", budget)
    stack: list[Heading] = []
    region_start: int | None = None
    for idx, (ls, head) in enumerate(heads):
        while stack and stack[-1].rank >= head.rank:
            stack.pop()
        stack.append(head)
        if region_start is None:
            region_start = ls
        region_end = heads[idx + 1][0] if idx + 1 < len(heads) else len(text)
        if idx + 1 < len(heads) and not unit_has_body(text, ls, region_end):
            continue  # a heading directly followed by a sub-heading opens the next section
        path = " / ".join(h.label for h in stack)
        pieces += chunk_span(src, region_start, region_end, path, budget)
        region_start = None
    return pieces
