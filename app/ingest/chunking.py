"""Deterministic chunking per document type.

Chunk ids are the sha256 of ``normalize_chunk_text(chunk.text)``, so the same document must
always produce the same chunks: no randomness, no dependence on set or dict order, and
token counts taken from the real tokenizer. Every chunk fits the embedding model's
passage limit, because the encoder silently truncates anything longer.

All splitting works on character offsets into the source text, so the pages a chunk came
from are known exactly, without searching for its text afterwards.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace

from app.ingest.types import (
    DOC_TYPES,
    ChunkDraft,
    ChunkLimits,
    ExtractedDocument,
    PageSpan,
    TokenCounter,
)

# --- document types ----------------------------------------------------------------------

# First match wins. The order settles the ambiguous spellings: "conclusie van antwoord" is a
# party's brief, a bare "conclusie" (of the advocaat-generaal) is case law; "expert opinion"
# is an expert report, "legal opinion" a memo; "EPO opposition decision" is case law.
_DOC_TYPE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "claim_chart",
        re.compile(
            r"\bclaim ?charts?\b|\b(?:infringement|invalidity|validity) charts?\b"
            r"|\bfeature analys[ie]s\b|\bkenmerkenanalyse\b|\bmerkmalsgliederung\b"
        ),
    ),
    (
        "deposition",
        re.compile(
            r"\bdepositions?\b|\bwitness|\bgetuige|\bverhoor\b|\baffidavits?\b"
            r"|\btranscripts?\b|\bproces ?verbaa?l"
        ),
    ),
    ("expert_report", re.compile(r"\bexpert|\bdeskundig|\bpartijdeskundig")),
    ("case_law", re.compile(r"\bconclusie\b.*\b(?:a ?g|p ?g|advocaat|procureur)\b")),
    ("brief", re.compile(r"\bconclusie (?:van|na|tot|houdende|in|ter)\b")),
    (
        "case_law",
        re.compile(
            r"\buitspraa?k|\bvonnis|\barresten\b|\barrest\b|\bbeschikking|\bjurisprudentie"
            r"|\bcase ?law\b|\bjudge?ments?\b|\brulings?\b|\bdecisions?\b|\brechtspraak"
            r"|\becli\b|\bconclusie\b"
        ),
    ),
    (
        "brief",
        re.compile(
            r"\bpleit|\bpleading|\bbriefs?\b|\bdagvaarding|\bmemorie\b|\bverzoekschrift"
            r"|\bverweerschrift|\bberoepschrift|\bbezwaarschrift|\bprocesstuk|\bakte\b"
            r"|\boppositions?\b|\boppositie|\beov\b|\bstatement of (?:claim|defen[cs]e)\b"
            r"|\bsubmissions?\b|\bskeleton argument|\bgrounds of appeal\b|\breply\b"
            r"|\brejoinder\b|\bmotions?\b|\bpetitions?\b|\bcomplaint\b|\bnotice of\b"
            r"|\bschriftelijke toelichting\b|\brepliek\b|\bdupliek\b|\bincident"
        ),
    ),
    (
        "statute",
        re.compile(
            r"\bwet\b|\bwetten\b|\bwetgeving|\bwetboek|\bstatutes?\b|\blegislation\b"
            r"|\bregulations?\b|\bverordening|\brichtlijn|\bdirectives?\b|\btreat(?:y|ies)\b"
            r"|\bverdrag|\bregeling\b|\bact\b"
        ),
    ),
    ("email", re.compile(r"\be ?mails?\b|\bmail\b|\beml\b|\bmessages?\b|\bbericht\b")),
    (
        "memo",
        re.compile(
            r"\bmemos?\b|\bmemo s\b|\bmemoranda\b|\bmemorandum\b|\bnotitie|\bnota\b|\badvies\b"
            r"|\bopinion\b|\bnotes?\b|\baantekening|\bresearch\b"
        ),
    ),
    (
        "contract",
        re.compile(
            r"\bcontract|overeenkomst|\bagreements?\b|\blicen[cs]e|\bnda\b|\bvoorwaarden\b"
            r"|\bterms\b|\bconvenant\b"
        ),
    ),
)
_DOC_TYPE_PUNCT_RE = re.compile(r"[\s_\-/.,;:()'’\"&+]+")


def normalize_doc_type(value: str | None) -> str:
    """Map a source's document-type spelling (Dutch or English) to one of ``DOC_TYPES``."""
    if not value:
        return "other"
    folded = unicodedata.normalize("NFKD", value.casefold())
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    words = _DOC_TYPE_PUNCT_RE.sub(" ", folded).strip()
    if not words:
        return "other"
    canonical = words.replace(" ", "_")
    if canonical in DOC_TYPES:
        return canonical
    for doc_type, pattern in _DOC_TYPE_RULES:
        if pattern.search(words):
            return doc_type
    return "other"


# --- text normalisation ------------------------------------------------------------------

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


# --- segmentation ------------------------------------------------------------------------

# Strength of the boundary after a segment; packing prefers to cut at the strongest one.
_WORD, _SENT, _LINE, _PARA, _END = 0, 1, 2, 3, 4

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
_SENT_END_RE = re.compile(r"[.!?…]+[\"'”’»)\]]*(?=\s)")
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
class _Seg:
    start: int
    end: int
    brk: int  # strength of the boundary after this segment


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
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
    line_start = text.rfind("\n", lo, word_start) + 1
    first_on_line = not text[max(line_start, lo) : word_start].strip()
    return first_on_line and bool(_NUMBERING_TOKEN_RE.fullmatch(word))


def _is_sentence_end(text: str, match: re.Match[str], lo: int, hi: int) -> bool:
    nxt = match.end()
    while nxt < hi and text[nxt].isspace():
        nxt += 1
    if nxt >= hi:
        return False
    following = text[nxt]
    # Lower case after a period is the surest sign of an abbreviation we do not know.
    if not (following.isupper() or following.isdigit() or following in _SENT_OPENERS):
        return False
    punct = match.group()
    if "?" in punct or "!" in punct or "…" in punct or punct.startswith(".."):
        return True
    return not _ends_with_abbreviation(text, match.start() + punct.index("."), lo)


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
    return bool(_STRUCTURED_LINE_RE.match(nxt)) or _heading_of(prev) is not None


def _segments(text: str, start: int, end: int) -> list[_Seg]:
    """Split [start, end) into sentence-like segments, each with its boundary strength."""
    cuts: dict[int, int] = {}
    for m in _PARA_BREAK_RE.finditer(text, start, end):
        cuts[m.start()] = _PARA
    pos = text.find("\n", start, end)
    while pos >= 0:
        if pos not in cuts and _is_line_break(text, pos, start, end):
            cuts[pos] = _LINE
        pos = text.find("\n", pos + 1, end)
    for m in _SENT_END_RE.finditer(text, start, end):
        if m.end() not in cuts and _is_sentence_end(text, m, start, end):
            cuts[m.end()] = _SENT

    segs: list[_Seg] = []
    prev = start
    for cut in [*sorted(cuts), end]:
        strength = cuts.get(cut, _END)
        s, e = _trim(text, prev, cut)
        if s < e:
            segs.append(_Seg(s, e, strength))
        elif segs:
            last = segs[-1]
            segs[-1] = replace(last, brk=max(last.brk, strength))
        prev = cut
    if segs:
        segs[-1] = replace(segs[-1], brk=_END)
    return segs


# --- token budgets -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Piece:
    """A chunk before its text is fixed: a span of the source text and an optional prefix."""

    start: int
    end: int
    path: str
    prefix: str = ""


class _Source:
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


def _split_word(src: _Source, start: int, end: int, budget: int) -> list[_Seg]:
    """Cut one token-heavy string (a URL, a hash, a run without spaces) by characters."""
    out: list[_Seg] = []
    while start < end:
        # Bounded so that a huge blob costs time linear in its length, not quadratic.
        lo, hi = start + 1, min(end, start + budget * 64)
        while lo < hi:  # the longest prefix that fits, by bisection
            mid = (lo + hi + 1) // 2
            if src.count(start, mid) <= budget:
                lo = mid
            else:
                hi = mid - 1
        out.append(_Seg(start, lo, _WORD))
        start = lo
    return out


def _fit_segments(src: _Source, segs: list[_Seg], budget: int) -> list[_Seg]:
    """Break every segment over ``budget`` tokens into word groups that fit."""
    out: list[_Seg] = []
    for seg in segs:
        if src.count(seg.start, seg.end) <= budget:
            out.append(seg)
            continue
        parts: list[_Seg] = []
        group_start = group_end = -1
        group_tokens = 0
        for word in re.finditer(r"\S+", src.text[seg.start : seg.end]):
            ws, we = seg.start + word.start(), seg.start + word.end()
            n = src.count(ws, we)
            if group_start >= 0 and (group_tokens + n > budget or n > budget):
                parts.append(_Seg(group_start, group_end, _WORD))
                group_start, group_tokens = -1, 0
            if n > budget:
                parts.extend(_split_word(src, ws, we, budget))
                continue
            if group_start < 0:
                group_start = ws
            group_end = we
            group_tokens += n
        if group_start >= 0:
            parts.append(_Seg(group_start, group_end, _WORD))
        parts[-1] = replace(parts[-1], brk=seg.brk)
        out.extend(parts)
    return out


def _pack(
    src: _Source, segs: list[_Seg], budget: int, min_fill: float, overlap: int
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
            while nxt < end and (segs[nxt - 1].brk < _SENT or carried + counts[end] > budget):
                carried -= counts[nxt]
                nxt += 1
        i = nxt
    return out


def _chunk_span(
    src: _Source,
    start: int,
    end: int,
    path: str,
    budget: int,
    *,
    min_fill: float = 0.0,
    overlap: int = 0,
    prefix: str = "",
) -> list[_Piece]:
    """Pieces for one structural unit: whole if it fits, else split at the best boundaries.

    ``prefix`` is repeated in front of every piece after the first, so a continuation still
    names the unit it belongs to.
    """
    start, end = _trim(src.text, start, end)
    if start >= end:
        return []
    # A span this long cannot fit; skip tokenizing it whole.
    if end - start <= budget * 24 and src.count(start, end) <= budget:
        return [_Piece(start, end, path)]
    inner = budget
    if prefix:
        inner = max(budget // 2, budget - src.tokens.count_tokens(prefix))
    segs = _fit_segments(src, _segments(src.text, start, end), inner)
    pieces: list[_Piece] = []
    for number, (i, j) in enumerate(_pack(src, segs, inner, min_fill, overlap)):
        pieces.append(_Piece(segs[i].start, segs[j - 1].end, path, prefix if number > 0 else ""))
    return pieces


def _drafts(src: _Source, pieces: list[_Piece]) -> list[ChunkDraft]:
    """Fix each piece's text and enforce the model cap whatever the tokenizer does."""
    out: list[ChunkDraft] = []
    for piece in pieces:
        todo = [piece]
        while todo:
            current = todo.pop()
            s, e = _trim(src.text, current.start, current.end)
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
                todo.append(_Piece(mid, e, current.path))
                todo.append(_Piece(s, mid, current.path))
    return out


def _split_point(text: str, start: int, end: int) -> int:
    mid = (start + end) // 2
    for offset in range((end - start) // 2 + 1):
        for pos in (mid - offset, mid + offset):
            if start < pos < end and text[pos].isspace():
                return pos
    return mid if start < mid < end else start + 1


# --- shared helpers for the type-specific chunkers -------------------------------------


def _lines(text: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    pos = 0
    for line in text.split("\n"):
        out.append((pos, pos + len(line)))
        pos += len(line) + 1
    return out


def _generic_budget(limits: ChunkLimits) -> tuple[int, int]:
    overlap = round(limits.generic_overlap * limits.scale)
    return limits.cap(limits.generic), overlap


def _generic(src: _Source, start: int, end: int, path: str = "") -> list[_Piece]:
    budget, overlap = _generic_budget(src.limits)
    return _chunk_span(src, start, end, path, budget, min_fill=0.5, overlap=overlap)


def _has_body(text: str, start: int, end: int) -> bool:
    """Whether a unit holds more than its own first line (a heading with nothing under it)."""
    newline = text.find("\n", start, end)
    return newline >= 0 and bool(text[newline:end].strip())


# --- brief -------------------------------------------------------------------------------

_MD_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
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
_RANK_CAPS, _RANK_ROMAN, _RANK_LETTER, _RANK_NUMBER = 10, 11, 12, 13


_ROMAN_DIGITS = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def _roman_value(numeral: str) -> int:
    total = 0
    for digit, following in zip(numeral, [*numeral[1:], ""], strict=True):
        value = _ROMAN_DIGITS.get(digit, 0)
        total += -value if following and _ROMAN_DIGITS.get(following, 0) > value else value
    return total


@dataclass(frozen=True)
class _Heading:
    rank: int
    label: str


def _short_line(line: str, max_words: int = 12) -> bool:
    return len(line) <= 90 and len(line.split()) <= max_words and "|" not in line


def _heading_of(line: str) -> _Heading | None:
    """The heading a line announces, if it is one (without sequence context)."""
    line = line.strip()
    if not line or line[-1] in ",;":
        return None
    md = _MD_HEADING_RE.match(line)
    if md:
        title = md.group(2).strip()
        numbered = _LEADING_NUMBER_RE.match(title)
        label = numbered.group(1).rstrip(".)") if numbered else title
        if len(label) > 80:
            label = label[:79].rstrip() + "…"
        return _Heading(len(md.group(1)), label)
    if not _short_line(line):
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
            return _Heading(_RANK_NUMBER + label.count("."), label)
        if len(label) > 1 or label == "I":
            if _ROMAN_RE.fullmatch(label):
                return _Heading(_RANK_ROMAN, label)
            return None
        return _Heading(_RANK_LETTER, label)
    letters = [c for c in line if c.isalpha()]
    visible = [c for c in line if not c.isspace()]
    if (
        len(letters) >= 3
        and len(line.split()) <= 10
        and all(c.isupper() for c in letters)
        and len(letters) >= 0.7 * len(visible)
        and not line.endswith(".")
    ):
        return _Heading(_RANK_CAPS, line.rstrip(":").strip())
    return None


def _brief(src: _Source) -> list[_Piece]:
    text = src.text
    budget = src.limits.cap(src.limits.brief_section)
    heads: list[tuple[int, _Heading]] = []
    last_letter, last_roman = "", 0
    for ls, le in _lines(text):
        head = _heading_of(text[ls:le])
        if head is None:
            continue
        # A lone I, V, X, L or C is a Roman numeral or a letter depending on what came
        # before: "I." after "H." is a letter, "V." after "IV." a numeral.
        if len(head.label) == 1 and head.rank in (_RANK_ROMAN, _RANK_LETTER):
            as_letter = bool(last_letter) and ord(head.label) == ord(last_letter) + 1
            as_roman = _roman_value(head.label) == last_roman + 1
            if as_letter:
                head = _Heading(_RANK_LETTER, head.label)
            elif as_roman:
                head = _Heading(_RANK_ROMAN, head.label)
        if head.rank == _RANK_LETTER:
            last_letter = head.label
        elif head.rank == _RANK_ROMAN:
            last_roman = _roman_value(head.label)
        heads.append((ls, head))
    # An unnumbered capitals line that keeps coming back is a running head of a PDF page
    # ("VERTROUWELIJK", "PLEITNOTA MR. X"), not a section.
    caps_seen: dict[str, int] = {}
    for _, head in heads:
        if head.rank == _RANK_CAPS:
            caps_seen[head.label] = caps_seen.get(head.label, 0) + 1
    heads = [(ls, h) for ls, h in heads if h.rank != _RANK_CAPS or caps_seen[h.label] < 3]
    if not heads:
        return _chunk_span(src, 0, len(text), "", budget)
    # Unnumbered ALL-CAPS lines ("CONCLUSIE", "PRODUCTIES", the title) sit at the level of
    # the top numbered headings, so they close a numbered section instead of nesting in it.
    typed = [h.rank for _, h in heads if h.rank > _RANK_CAPS]
    if typed:
        top = min(typed)
        heads = [(ls, _Heading(top, h.label) if h.rank == _RANK_CAPS else h) for ls, h in heads]

    pieces: list[_Piece] = _chunk_span(src, 0, heads[0][0], "", budget)
    stack: list[_Heading] = []
    region_start: int | None = None
    for idx, (ls, head) in enumerate(heads):
        while stack and stack[-1].rank >= head.rank:
            stack.pop()
        stack.append(head)
        if region_start is None:
            region_start = ls
        region_end = heads[idx + 1][0] if idx + 1 < len(heads) else len(text)
        if idx + 1 < len(heads) and not _has_body(text, ls, region_end):
            continue  # a heading directly followed by a sub-heading opens the next section
        path = " / ".join(h.label for h in stack)
        pieces += _chunk_span(src, region_start, region_end, path, budget)
        region_start = None
    return pieces


# --- expert report -----------------------------------------------------------------------

_NUMBERED_PARA_RE = re.compile(
    r"^[ \t]*(?:\((?P<a>\d{1,3}(?:\.\d{1,2}){0,3})\)|\[(?P<b>\d{1,4})\]"
    r"|(?P<c>\d{1,3}(?:\.\d{1,2}){1,3})\.?|(?P<d>\d{1,3})[.)])[ \t]+\S"
)


def _numbered_regions(text: str) -> list[tuple[int, str]]:
    """(line start, paragraph number) of every numbered paragraph."""
    out: list[tuple[int, str]] = []
    for ls, le in _lines(text):
        m = _NUMBERED_PARA_RE.match(text[ls:le])
        if m:
            number = m.group("a") or m.group("c") or m.group("d") or ""
            if m.group("b"):
                number = m.group("b").lstrip("0") or "0"
            out.append((ls, number))
    return out


def _numbered_paragraphs(src: _Source, marks: list[tuple[int, str]]) -> list[_Piece]:
    text = src.text
    budget = src.limits.cap(src.limits.generic)
    pieces = _generic(src, 0, marks[0][0])
    region_start: int | None = None
    for idx, (ls, number) in enumerate(marks):
        if region_start is None:
            region_start = ls
        region_end = marks[idx + 1][0] if idx + 1 < len(marks) else len(text)
        newline = text.find("\n", ls, region_end)
        first_line = text[ls : newline if newline >= 0 else region_end].strip()
        if (
            idx + 1 < len(marks)
            and not _has_body(text, ls, region_end)
            and _short_line(first_line, 10)
            and not first_line.endswith(".")
        ):
            continue  # "1. Introduction" over "1.1 ..." is a heading, not a paragraph
        pieces += _chunk_span(src, region_start, region_end, f"¶ {number}", budget)
        region_start = None
    return pieces


def _expert_report(src: _Source) -> list[_Piece]:
    marks = _numbered_regions(src.text)
    if not marks:
        return _generic(src, 0, len(src.text))
    return _numbered_paragraphs(src, marks)


# --- deposition --------------------------------------------------------------------------

_QUESTION_RE = re.compile(
    r"^[ \t]*(?:(?P<n1>\d{1,4})[.)]?[ \t]+)?"
    r"(?:(?:V|Vraag|Q|Question)(?:[ \t]*(?P<n2>\d{1,4}))?[ \t]*:|Q\.(?=[ \t]))",
    re.IGNORECASE,
)
_NUMBERED_QUESTION_RE = re.compile(r"^[ \t]*(?P<n3>\d{1,4})[.)][ \t]+\S.*\?[\"'”’)]*[ \t]*$")


def _questions(text: str) -> list[tuple[int, str | None]]:
    marked: list[tuple[int, str | None]] = []
    numbered: list[tuple[int, str | None]] = []
    for ls, le in _lines(text):
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


def _context_start(src: _Source, start: int, available: int) -> int:
    """Where a window of at most ``available`` tokens of text before ``start`` begins."""
    if available < 4 or start == 0:
        return start
    window = max(0, start - available * 16)
    while 0 < window < start and not src.text[window - 1].isspace():
        window += 1
    taken, ctx_start = 0, start
    for seg in reversed(_segments(src.text, window, start)):
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


def _deposition(src: _Source) -> list[_Piece]:
    text = src.text
    questions = _questions(text)
    if not questions:
        marks = _numbered_regions(text)
        return _numbered_paragraphs(src, marks) if marks else _generic(src, 0, len(text))

    budget = src.limits.cap(src.limits.generic)
    window = round(src.limits.deposition_context * src.limits.scale)
    pieces = _generic(src, 0, questions[0][0])
    for idx, (ls, number) in enumerate(questions):
        path = f"Q {number or idx + 1}"
        end = questions[idx + 1][0] if idx + 1 < len(questions) else len(text)
        s, e = _trim(text, ls, end)
        if s >= e:
            continue
        if e - s > budget * 24 or src.count(s, e) > budget:
            pieces += _chunk_span(src, s, e, path, budget)
            continue
        available = min(window, budget - src.count(s, e))
        ctx = _context_start(src, s, available)
        if ctx < s:
            with_context = normalize_chunk_text(text[ctx:e])
            if src.tokens.count_tokens(with_context) > src.cap:
                ctx = s  # the counts did not add up; the pair itself matters more
        pieces.append(_Piece(ctx, e, path))
    return pieces


# --- claim chart -------------------------------------------------------------------------

_CLAIM_CELL_RE = re.compile(
    r"^(?:(?:claim|conclusie|conc\.)[ \t]*)?\[?[ \t]*(?P<claim>\d{1,3})[ \t]*"
    r"(?:[\[(][ \t]*(?P<el>[a-z]{1,3}|\d{1,2}(?:\.\d{1,2})?|pre(?:amble)?|preambule)[ \t]*[\])]"
    r"|[.\-]?(?P<el2>[a-z]{1,2}|\d{1,2}(?:\.\d{1,2})?))?"
    r"[ \t]*\]?[.:]?$",
    re.IGNORECASE,
)
_CLAIM_LINE_RE = re.compile(
    r"^[ \t]*(?P<label>(?:(?:claim|conclusie)[ \t]+)?(?P<claim>\d{1,3})[ \t]*"
    r"(?:[\[(](?P<el>[a-z]{1,3}|\d{1,2}(?:\.\d{1,2})?|pre(?:amble)?|preambule)[\])]"
    r"|(?P<el2>[a-z])[.)])"
    r"|\[(?P<claim2>\d{1,3})\.?(?P<el3>[a-z]{1,3}|\d{1,2})\])[ \t:.\-]*[ \t]\S",
    re.IGNORECASE,
)
_CELL_SPLIT_RE = re.compile(r"[ \t]*\|[ \t]*|\t")
_ELEMENT_CELL_RE = re.compile(r"^[\[(]?([a-z]{1,2}|pre(?:amble)?)[\])]?$", re.IGNORECASE)


@dataclass(frozen=True)
class _ClaimRow:
    claim: str
    element: str
    label: str
    separator: str

    @property
    def path(self) -> str:
        return f"Claim {self.claim}" + (f" / element [{self.element}]" if self.element else "")


def _claim_row(line: str) -> _ClaimRow | None:
    stripped = line.strip()
    if "|" in stripped or "\t" in stripped:
        cells = _CELL_SPLIT_RE.split(stripped.strip("|").strip())
        if len(cells) >= 2 and any(c.strip() for c in cells[1:]):
            m = _CLAIM_CELL_RE.match(cells[0].strip())
            if m:
                element = (m.group("el") or m.group("el2") or "").lower()
                label = cells[0].strip()
                # Some charts give the element its own column: "1 | [a] | ...".
                own_column = _ELEMENT_CELL_RE.match(cells[1].strip())
                if not element and own_column and len(cells) > 2:
                    element = own_column.group(1).lower()
                    label = f"{label} | {cells[1].strip()}"
                return _ClaimRow(m.group("claim"), element, label, " | ")
        return None
    m = _CLAIM_LINE_RE.match(stripped)
    if not m:
        return None
    claim = m.group("claim") or m.group("claim2")
    element = (m.group("el") or m.group("el2") or m.group("el3") or "").lower()
    return _ClaimRow(claim, element, m.group("label"), " ")


def _claim_chart(src: _Source) -> list[_Piece]:
    text = src.text
    budget = src.limits.cap(src.limits.generic)
    lines = _lines(text)
    pieces: list[_Piece] = []
    other_start = 0  # start of text not yet assigned to a row
    idx = 0
    while idx < len(lines):
        ls, le = lines[idx]
        row = _claim_row(text[ls:le])
        if row is None:
            idx += 1
            continue
        pieces += _generic(src, other_start, ls)
        # A row runs on over wrapped lines until a blank line or the next row.
        last = idx
        while last + 1 < len(lines):
            ns, ne = lines[last + 1]
            following = text[ns:ne]
            if (
                not following.strip()
                or _claim_row(following)
                or _MD_HEADING_RE.match(following.strip())
            ):
                break
            last += 1
        end = lines[last][1]
        pieces += _chunk_span(src, ls, end, row.path, budget, prefix=row.label + row.separator)
        other_start = end
        idx = last + 1
    pieces += _generic(src, other_start, len(text))
    return pieces


# --- case law ----------------------------------------------------------------------------


def _case_law_sections(
    doc: ExtractedDocument, tokens: TokenCounter, limits: ChunkLimits
) -> list[ChunkDraft]:
    budget = limits.cap(limits.generic)
    out: list[ChunkDraft] = []
    for section in doc.sections:
        src = _Source(section.text, [], tokens, limits)
        path = (section.path or section.title).strip()
        out += _drafts(src, _chunk_span(src, 0, len(section.text), path, budget))
    return merge_fragments(out, tokens, limits.model_max)


# A chunk of fewer words than this ("20.", ".", "Beslissing") cannot stand alone: it says
# nothing to a reader, gets a near-random embedding and matches only its own number.
MIN_CHUNK_WORDS = 5


def merge_fragments(
    drafts: list[ChunkDraft], tokens: TokenCounter, cap: int, min_words: int = MIN_CHUNK_WORDS
) -> list[ChunkDraft]:
    """Fold chunks of fewer than ``min_words`` words into the next chunk (a paragraph number
    belongs to the paragraph after it), else into the previous one; a fragment stays alone
    only when neither neighbour has room under ``cap`` tokens."""
    out: list[ChunkDraft] = []
    pending: ChunkDraft | None = None
    for draft in drafts:
        current = draft
        if pending is not None:
            merged = _joined(pending, draft, tokens, cap, path_of=draft)
            if merged is None:
                out.append(pending)
            else:
                current = merged
            pending = None
        if len(current.text.split()) < min_words:
            pending = current
        else:
            out.append(current)
    if pending is not None:
        merged = _joined(out[-1], pending, tokens, cap, path_of=out[-1]) if out else None
        if merged is None:
            out.append(pending)
        else:
            out[-1] = merged
    return out


def _joined(
    first: ChunkDraft, second: ChunkDraft, tokens: TokenCounter, cap: int, *, path_of: ChunkDraft
) -> ChunkDraft | None:
    text = normalize_chunk_text(first.text + "\n" + second.text)
    n = tokens.count_tokens(text)
    if n > cap:
        return None
    pages = [
        p
        for p in (first.page_from, second.page_from, first.page_to, second.page_to)
        if p is not None
    ]
    return ChunkDraft(
        text=text,
        section_path=path_of.section_path,
        page_from=min(pages) if pages else None,
        page_to=max(pages) if pages else None,
        token_count=n,
    )


def _case_law(src: _Source) -> list[_Piece]:
    return _chunk_span(src, 0, len(src.text), "", src.limits.cap(src.limits.generic))


# --- entry point -------------------------------------------------------------------------

_CHUNKERS: dict[str, Callable[[_Source], list[_Piece]]] = {
    "claim_chart": _claim_chart,
    "brief": _brief,
    "deposition": _deposition,
    "expert_report": _expert_report,
    "case_law": _case_law,
}


def chunk_document(
    doc: ExtractedDocument, doc_type: str, tokens: TokenCounter, limits: ChunkLimits
) -> list[ChunkDraft]:
    """Cut ``doc`` into chunks the way its document type is structured.

    Every chunk's ``token_count`` is at most ``limits.model_max`` and its text is already
    in ``normalize_chunk_text`` form. Chunks come in document order.
    """
    kind = normalize_doc_type(doc_type)
    has_body = bool(doc.text.strip())
    if doc.sections and (kind == "case_law" or not has_body):
        return _case_law_sections(doc, tokens, limits)
    if not has_body:
        return []
    src = _Source(doc.text, doc.pages, tokens, limits)
    chunker = _CHUNKERS.get(kind)
    pieces = chunker(src) if chunker else _generic(src, 0, len(doc.text))
    return _drafts(src, pieces)
