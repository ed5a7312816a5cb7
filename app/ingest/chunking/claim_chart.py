"""Claim charts: one chunk per claim element row."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.ingest.chunking.headings import MD_HEADING_RE
from app.ingest.chunking.packing import Piece, SourceText, chunk_generic, chunk_span, line_spans

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


def chunk_claim_chart(src: SourceText) -> list[Piece]:
    text = src.text
    budget = src.limits.cap(src.limits.generic)
    lines = line_spans(text)
    pieces: list[Piece] = []
    other_start = 0  # start of text not yet assigned to a row
    idx = 0
    while idx < len(lines):
        ls, le = lines[idx]
        row = _claim_row(text[ls:le])
        if row is None:
            idx += 1
            continue
        pieces += chunk_generic(src, other_start, ls)
        # A row runs on over wrapped lines until a blank line or the next row.
        last = idx
        while last + 1 < len(lines):
            ns, ne = lines[last + 1]
            following = text[ns:ne]
            if (
                not following.strip()
                or _claim_row(following)
                or MD_HEADING_RE.match(following.strip())
            ):
                break
            last += 1
        end = lines[last][1]
        pieces += chunk_span(src, ls, end, row.path, budget, prefix=row.label + row.separator)
        other_start = end
        idx = last + 1
    pieces += chunk_generic(src, other_start, len(text))
    return pieces
