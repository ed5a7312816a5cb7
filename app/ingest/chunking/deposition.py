"""Depositions and witness statements: one chunk per question and answer, with the
preceding context."""

from __future__ import annotations

import re

from app.ingest.chunking.expert_report import numbered_paragraphs, numbered_regions
from app.ingest.chunking.normalization import normalize_chunk_text
from app.ingest.chunking.packing import Piece, SourceText, chunk_generic, chunk_span, line_spans
from app.ingest.chunking.segmentation import split_segments, trim_span

_QUESTION_RE = re.compile(
    r"^[ \t]*(?:(?P<n1>\d{1,4})[.)]?[ \t]+)?"
    r"(?:(?:V|Vraag|Q|Question)(?:[ \t]*(?P<n2>\d{1,4}))?[ \t]*:|Q\.(?=[ \t]))",
    re.IGNORECASE,
)
_NUMBERED_QUESTION_RE = re.compile(r"^[ \t]*(?P<n3>\d{1,4})[.)][ \t]+\S.*\?[\"'”’)]*[ \t]*$")


def _questions(text: str) -> list[tuple[int, str | None]]:
    marked: list[tuple[int, str | None]] = []
    numbered: list[tuple[int, str | None]] = []
    for ls, le in line_spans(text):
        line = text[ls:le]
        m = _QUESTION_RE.match(line)
        if m:
            marked.append((ls, m.group("n1") or m.group("n2")))
            continue
        q = _NUMBERED_QUESTION_RE.match(line)
        if q:
            numbered.append((ls, q.group("n3")))
    if marked:
        return marked
    # A lone numbered line ending in "?" is too weak a signal for a Q&A transcript.
    return numbered if len(numbered) >= 2 else []


def _context_start(src: SourceText, start: int, available: int) -> int:
    """Where a window of at most ``available`` tokens of text before ``start`` begins."""
    if available < 4 or start == 0:
        return start
    window = max(0, start - available * 16)
    while 0 < window < start and not src.text[window - 1].isspace():
        window += 1
    taken, ctx_start = 0, start
    for seg in reversed(split_segments(src.text, window, start)):
        n = src.count(seg.start, seg.end)
        if taken + n <= available:
            taken += n
            ctx_start = seg.start
            continue
        # A sliding window: take the tail of the sentence that does not fit whole.
        for word in reversed(list(re.finditer(r"\S+", src.text[seg.start : seg.end]))):
            ws = seg.start + word.start()
            n = src.count(ws, seg.start + word.end())
            if taken + n > available:
                break
            taken += n
            ctx_start = ws
        break
    return ctx_start


def chunk_deposition(src: SourceText) -> list[Piece]:
    text = src.text
    questions = _questions(text)
    if not questions:
        marks = numbered_regions(text)
        return numbered_paragraphs(src, marks) if marks else chunk_generic(src, 0, len(text))

    budget = src.limits.cap(src.limits.generic)
    window = round(src.limits.deposition_context * src.limits.scale)
    pieces = chunk_generic(src, 0, questions[0][0])
    for idx, (ls, number) in enumerate(questions):
        path = f"Q {number or idx + 1}"
        end = questions[idx + 1][0] if idx + 1 < len(questions) else len(text)
        s, e = trim_span(text, ls, end)
        if s >= e:
            continue
        if e - s > budget * 24 or src.count(s, e) > budget:
            pieces += chunk_span(src, s, e, path, budget)
            continue
        available = min(window, budget - src.count(s, e))
        ctx = _context_start(src, s, available)
        if ctx < s:
            with_context = normalize_chunk_text(text[ctx:e])
            if src.tokens.count_tokens(with_context) > src.cap:
                ctx = s  # the counts did not add up; the pair itself matters more
        pieces.append(Piece(ctx, e, path))
    return pieces
