"""Packing segments into chunks that fit a token budget, and the helpers every
type-specific chunker shares."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace

from app.ingest.chunking.normalization import normalize_chunk_text
from app.ingest.chunking.segmentation import SENT, WORD, Seg, split_segments, trim_span
from app.ingest.types import ChunkDraft, ChunkLimits, PageSpan, TokenCounter


@dataclass(frozen=True)
class Piece:
    """A chunk before its text is fixed: a span of the source text and an optional prefix."""

    start: int
    end: int
    path: str
    prefix: str = ""


class SourceText:
    """One text that pieces point into (the document text, or one section's text)."""

    def __init__(
        self, text: str, pages: list[PageSpan], tokens: TokenCounter, limits: ChunkLimits
    ) -> None:
        self.text = text
        self.tokens = tokens
        self.limits = limits
        self.cap = limits.model_max
        self.pages = sorted(pages, key=lambda p: (p.start, p.end, p.number))
        self._page_starts = [p.start for p in self.pages]
        self._counts: dict[tuple[int, int], int] = {}

    def count(self, start: int, end: int) -> int:
        key = (start, end)
        cached = self._counts.get(key)
        if cached is None:
            cached = self.tokens.count_tokens(self.text[start:end])
            self._counts[key] = cached
        return cached

    def page_at(self, pos: int) -> int | None:
        if not self.pages:
            return None
        idx = bisect.bisect_right(self._page_starts, pos) - 1
        if idx < 0:
            return self.pages[0].number
        page = self.pages[idx]
        # Offsets in the separator between two pages belong to the next page.
        if pos >= page.end and idx + 1 < len(self.pages):
            return self.pages[idx + 1].number
        return page.number


def _split_word(src: SourceText, start: int, end: int, budget: int) -> list[Seg]:
    """Cut one token-heavy string (a URL, a hash, a run without spaces) by characters.

    Each cut is the longest prefix that fits ``budget`` (a piece is at most ``budget * 64``
    characters). The search starts where the string's characters a token so far put the
    budget, gallops away from there in doubling steps until the cut is bracketed, then
    bisects the bracket: a tokenizer call costs about the same at any length here, so a
    run of equal pieces costs two calls a piece, and a 5 MB blob seconds, not minutes."""
    out: list[Seg] = []
    per_token = 4.0  # characters a token: a first guess, then what the string has shown
    while start < end:
        cap = min(end, start + budget * 64)

        def fits(pos: int, start: int = start) -> bool:
            return src.count(start, pos) <= budget

        probe = min(cap, max(start + 1, start + int(per_token * budget)))
        step = 1
        if fits(probe):  # gallop up: the cut is at probe or after it
            low, high = probe, cap + 1
            while low < cap:
                nxt = min(cap, low + step)
                if not fits(nxt):
                    high = nxt
                    break
                low, step = nxt, step * 2
        else:  # gallop down: the cut is before probe (one character always fits)
            low, high = start + 1, probe
            while high - step > start + 1:
                nxt = high - step
                if fits(nxt):
                    low = nxt
                    break
                high, step = nxt, step * 2
        while high - low > 1:  # low fits, high does not (or lies past the cap)
            mid = (low + high) // 2
            if fits(mid):
                low = mid
            else:
                high = mid
        out.append(Seg(start, low, WORD))
        per_token = max(1.0, (low - start) / max(src.count(start, low), 1))
        start = low
    return out


def _fit_segments(src: SourceText, segs: list[Seg], budget: int) -> list[Seg]:
    """Break every segment over ``budget`` tokens into word groups that fit."""
    out: list[Seg] = []
    for seg in segs:
        if src.count(seg.start, seg.end) <= budget:
            out.append(seg)
            continue
        parts: list[Seg] = []
        group_start = group_end = -1
        group_tokens = 0
        for word in re.finditer(r"\S+", src.text[seg.start : seg.end]):
            ws, we = seg.start + word.start(), seg.start + word.end()
            n = src.count(ws, we)
            if group_start >= 0 and (group_tokens + n > budget or n > budget):
                parts.append(Seg(group_start, group_end, WORD))
                group_start, group_tokens = -1, 0
            if n > budget:
                parts.extend(_split_word(src, ws, we, budget))
                continue
            if group_start < 0:
                group_start = ws
            group_end = we
            group_tokens += n
        if group_start >= 0:
            parts.append(Seg(group_start, group_end, WORD))
        parts[-1] = replace(parts[-1], brk=seg.brk)
        out.extend(parts)
    return out


def _pack(
    src: SourceText, segs: list[Seg], budget: int, min_fill: float, overlap: int
) -> list[tuple[int, int]]:
    """Group consecutive segments into chunks of at most ``budget`` tokens.

    Each chunk ends at the strongest boundary (paragraph > line > sentence > word) among
    those that leave it at least ``min_fill`` full, the latest one on ties. With
    ``overlap``, the next chunk repeats up to that many tokens of whole sentences.
    Returns [start, end) index ranges into ``segs``.
    """
    counts = [src.count(s.start, s.end) for s in segs]
    out: list[tuple[int, int]] = []
    i, fresh, n = 0, 0, len(segs)
    while i < n:
        total, j = counts[i], i + 1
        while j < n and total + counts[j] <= budget:
            total += counts[j]
            j += 1
        end = j
        if j < n:
            best: tuple[int, int] | None = None
            filled = 0
            for k in range(i, j):
                filled += counts[k]
                # A chunk must end past what the previous one covered, or it adds nothing.
                if k < fresh or filled < min_fill * budget:
                    continue
                if best is None or segs[k].brk >= best[0]:
                    best = (segs[k].brk, k)
            if best is not None:
                end = best[1] + 1
        out.append((i, end))
        if end >= n:
            break
        fresh = end
        nxt = end
        if overlap > 0:
            carried = 0
            while nxt - 1 > i and carried + counts[nxt - 1] <= overlap:
                carried += counts[nxt - 1]
                nxt -= 1
            # Start on a sentence boundary, and leave room for new text in the next chunk.
            while nxt < end and (segs[nxt - 1].brk < SENT or carried + counts[end] > budget):
                carried -= counts[nxt]
                nxt += 1
        i = nxt
    return out


def chunk_span(
    src: SourceText,
    start: int,
    end: int,
    path: str,
    budget: int,
    *,
    min_fill: float = 0.0,
    overlap: int = 0,
    prefix: str = "",
) -> list[Piece]:
    """Pieces for one structural unit: whole if it fits, else split at the best boundaries.

    ``prefix`` is repeated in front of every piece after the first, so a continuation still
    names the unit it belongs to.
    """
    start, end = trim_span(src.text, start, end)
    if start >= end:
        return []
    # A span this long cannot fit; skip tokenizing it whole.
    if end - start <= budget * 24 and src.count(start, end) <= budget:
        return [Piece(start, end, path)]
    inner = budget
    if prefix:
        inner = max(budget // 2, budget - src.tokens.count_tokens(prefix))
    segs = _fit_segments(src, split_segments(src.text, start, end), inner)
    pieces: list[Piece] = []
    for number, (i, j) in enumerate(_pack(src, segs, inner, min_fill, overlap)):
        pieces.append(Piece(segs[i].start, segs[j - 1].end, path, prefix if number > 0 else ""))
    return pieces


def to_drafts(src: SourceText, pieces: list[Piece]) -> list[ChunkDraft]:
    """Fix each piece's text and enforce the model cap whatever the tokenizer does."""
    out: list[ChunkDraft] = []
    for piece in pieces:
        todo = [piece]
        while todo:
            current = todo.pop()
            s, e = trim_span(src.text, current.start, current.end)
            if s >= e:
                continue
            text = normalize_chunk_text(current.prefix + src.text[s:e])
            if not text:
                continue
            n = src.tokens.count_tokens(text)
            if n <= src.cap:
                out.append(
                    ChunkDraft(
                        text=text,
                        section_path=current.path,
                        page_from=src.page_at(s),
                        page_to=src.page_at(e - 1),
                        token_count=n,
                    )
                )
            elif current.prefix:
                todo.append(replace(current, prefix=""))
            elif e - s > 1:
                # Token counts of parts did not add up (a tokenizer that is not additive
                # over whitespace): halve the span and try again.
                mid = _split_point(src.text, s, e)
                todo.append(Piece(mid, e, current.path))
                todo.append(Piece(s, mid, current.path))
    return out


def _split_point(text: str, start: int, end: int) -> int:
    mid = (start + end) // 2
    for offset in range((end - start) // 2 + 1):
        for pos in (mid - offset, mid + offset):
            if start < pos < end and text[pos].isspace():
                return pos
    return mid if start < mid < end else start + 1


# --- shared helpers for the type-specific chunkers -------------------------------------


def line_spans(text: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    pos = 0
    for line in text.split("\n"):
        out.append((pos, pos + len(line)))
        pos += len(line) + 1
    return out


def _generic_budget(limits: ChunkLimits) -> tuple[int, int]:
    overlap = round(limits.generic_overlap * limits.scale)
    return limits.cap(limits.generic), overlap


def chunk_generic(src: SourceText, start: int, end: int, path: str = "") -> list[Piece]:
    budget, overlap = _generic_budget(src.limits)
    return chunk_span(src, start, end, path, budget, min_fill=0.5, overlap=overlap)


def unit_has_body(text: str, start: int, end: int) -> bool:
    """Whether a unit holds more than its own first line (a heading with nothing under it)."""
    newline = text.find("\n", start, end)
    return newline >= 0 and bool(text[newline:end].strip())
