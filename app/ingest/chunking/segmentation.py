"""Cutting text into segments at word, sentence, line and paragraph boundaries, each
marked with the strength of the boundary after it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from app.ingest.chunking.headings import heading_of

# Strength of the boundary after a segment; packing prefers to cut at the strongest one.
WORD, SENT, _LINE, _PARA, _END = 0, 1, 2, 3, 4

# Lower-case, without the final period. Letter-dot chains (r.o., o.a., e.d., i.c., A.B.)
# and single letters (initials, "p.") are recognised by pattern, not listed here.
# fmt: off
_ABBREVIATIONS = frozenset({
    "art", "artt", "jo", "j°", "rov", "nr", "nrs", "no", "nos", "blz", "bl", "p", "pp", "par",
    "mr", "mrs", "dr", "drs", "ir", "ing", "prof", "dhr", "mw", "mevr", "hr", "ehrm", "hvj",
    "vgl", "bijv", "bv", "nv", "ca", "etc", "enz", "resp", "jl", "jr", "st", "stb", "stcrt",
    "zgn", "vs", "viz", "cf", "fig", "figs", "ed", "eds", "inc", "ltd", "co",
    "corp", "sub", "al", "rb", "ktr", "vzr", "pres", "ag", "pg", "nj", "ab", "jb", "jor",
    "rvdw", "ivm", "tav", "mbt", "ihkv", "ipv", "evt", "ev", "ea", "aant", "afd", "alg", "bijl",
    "hfd", "dd", "jan", "feb", "febr", "mrt", "apr", "jun", "jul", "aug", "sep", "sept", "okt",
    "nov", "dec",
})
# fmt: on
_LETTER_DOTS_RE = re.compile(r"(?:[^\W\d_]\.)*[^\W\d_]")
_NUMBERING_TOKEN_RE = re.compile(r"\d{1,3}(?:\.\d{1,3})*|[IVXLC]{1,6}")
# A sentence end is a whole run of final punctuation plus its closing quotes or brackets,
# followed by whitespace. Each run is found once from its first mark and its closers are
# taken whole: one backtracking pattern for both, retried at every mark of a long run
# ("......x"), costs time quadratic in the run.
_PUNCT_RUN_RE = re.compile(r"[.!?…]+")
_CLOSERS_RE = re.compile(r"[\"'”’»)\]]*+(?=\s)")
_SENT_OPENERS = "\"'“‘«([§•*-–"
_PARA_BREAK_RE = re.compile(r"\n[^\S\n]*\n")
_STRUCTURED_LINE_RE = re.compile(
    r"""[ \t]*(?:
        \#{1,6}[ \t]
      | [-•*–][ \t]
      | \(?\d{1,3}[.)][ \t]
      | \d{1,3}(?:\.\d{1,3})+\.?[ \t]
      | \(\d{1,3}\)[ \t]
      | \(?[a-z][.)][ \t]
      | \[\d{1,4}\]
      | (?:V|Q|A|Vraag|Antwoord|Question|Answer)[ \t]*\d*[ \t]*:
    )""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Seg:
    start: int
    end: int
    brk: int  # strength of the boundary after this segment


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _line_bounds(text: str, pos: int, lo: int, hi: int) -> tuple[int, int]:
    """The line around ``pos`` (without its newline), clipped to [lo, hi)."""
    start = max(text.rfind("\n", lo, pos) + 1, lo)
    end = text.find("\n", pos, hi)
    return start, hi if end < 0 else end


def _ends_with_abbreviation(text: str, dot: int, lo: int) -> bool:
    """Whether the period at ``dot`` belongs to an abbreviation, initial or numbering."""
    word_start = dot
    while word_start > lo and not text[word_start - 1].isspace():
        word_start -= 1
    word = text[word_start:dot].lstrip("\"'“‘«([")
    if not word:
        return False
    lowered = word.lower()
    if lowered in _ABBREVIATIONS or _LETTER_DOTS_RE.fullmatch(lowered):
        return True
    # "3." or "II." opening a line numbers a paragraph; it does not end a sentence.
    return _NUMBERING_TOKEN_RE.fullmatch(word) is not None and _first_on_line(text, word_start, lo)


def _first_on_line(text: str, pos: int, lo: int) -> bool:
    """Whether only blanks stand between the line's start (or ``lo``) and ``pos``. Walks back
    over those blanks alone: looking for the line's start costs the whole line per word."""
    while pos > lo and text[pos - 1] != "\n":
        if not text[pos - 1].isspace():
            return False
        pos -= 1
    return True


def _sentence_end_candidates(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """(first mark, end) of every run of final punctuation in [start, end) that, with its
    closers, is followed by whitespace."""
    for run in _PUNCT_RUN_RE.finditer(text, start, end):
        tail = _CLOSERS_RE.match(text, run.end(), end)
        if tail is not None:
            yield run.start(), tail.end()


def _is_sentence_end(text: str, punct_at: int, punct_end: int, lo: int, hi: int) -> bool:
    nxt = punct_end
    while nxt < hi and text[nxt].isspace():
        nxt += 1
    if nxt >= hi:
        return False
    following = text[nxt]
    # Lower case after a period is the surest sign of an abbreviation we do not know.
    if not (following.isupper() or following.isdigit() or following in _SENT_OPENERS):
        return False
    punct = text[punct_at:punct_end]
    if "?" in punct or "!" in punct or "…" in punct or punct.startswith(".."):
        return True
    return not _ends_with_abbreviation(text, punct_at + punct.index("."), lo)


def _is_line_break(text: str, pos: int, lo: int, hi: int) -> bool:
    """Whether the newline at ``pos`` ends a unit, as opposed to a hard wrap (PDF)."""
    prev_start, _ = _line_bounds(text, pos, lo, hi)
    _, next_end = _line_bounds(text, pos + 1, lo, hi)
    prev = text[prev_start:pos].rstrip()
    nxt = text[pos + 1 : next_end].strip()
    if not prev.strip() or not nxt:
        return False
    core = prev.rstrip("\"'”’»)]") or prev
    last = core[-1]
    if last in "!?:;…":
        return True
    if last == ".":
        following = nxt[0]
        if following.isupper() or following.isdigit() or following in _SENT_OPENERS:
            return not _ends_with_abbreviation(text, prev_start + len(core) - 1, lo)
        return False
    if "|" in prev or "\t" in prev or "|" in nxt:
        return True
    return bool(_STRUCTURED_LINE_RE.match(nxt)) or heading_of(prev) is not None


def split_segments(text: str, start: int, end: int) -> list[Seg]:
    """Split [start, end) into sentence-like segments, each with its boundary strength."""
    cuts: dict[int, int] = {}
    for m in _PARA_BREAK_RE.finditer(text, start, end):
        cuts[m.start()] = _PARA
    pos = text.find("\n", start, end)
    while pos >= 0:
        if pos not in cuts and _is_line_break(text, pos, start, end):
            cuts[pos] = _LINE
        pos = text.find("\n", pos + 1, end)
    for punct_at, punct_end in _sentence_end_candidates(text, start, end):
        if punct_end not in cuts and _is_sentence_end(text, punct_at, punct_end, start, end):
            cuts[punct_end] = SENT

    segs: list[Seg] = []
    prev = start
    for cut in [*sorted(cuts), end]:
        strength = cuts.get(cut, _END)
        s, e = trim_span(text, prev, cut)
        if s < e:
            segs.append(Seg(s, e, strength))
        elif segs:
            last = segs[-1]
            segs[-1] = replace(last, brk=max(last.brk, strength))
        prev = cut
    if segs:
        segs[-1] = replace(segs[-1], brk=_END)
    return segs
