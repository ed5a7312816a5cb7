"""The citation gate reads the "ECLI:" prefixes of a draft in time linear in the draft.

Each prefix that no citation pattern read is shown with the word it starts and the words that
go on with a part, and they were read to their end from every prefix: a draft of prefixes
alone (200,000 characters, the largest the gate takes) kept a request busy for 12 s
("ECLI:" repeated) or 86 s ("ECLI: N L:" repeated). They are now read within a
reach beyond what is shown; drafts shorter than it show what the former reading showed
(compared on random drafts).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from app import ecli
from app.ecli import _PREFIXED, _TRAILING_MARKS, _WORDS, _as_read, _unread_prefixes
from tests.bounded_child import run_bounded


def former_unread_prefixes(read: str, matches: list[re.Match[str]]) -> list[str]:
    """The former reading: the words read to their end from every prefix."""
    spans = [(m.start(), m.end()) for m in matches]
    out = []
    for prefix in _PREFIXED.finditer(read):
        if any(start <= prefix.start() < end for start, end in spans):
            continue
        words = _WORDS.match(read, prefix.end())
        shown = prefix.group(0) + (words.group(0) if words else "")
        out.append(" ".join(shown.split()).rstrip(_TRAILING_MARKS))
    return out


DRAFTS = st.lists(
    st.sampled_from(
        ["ECLI:", "ecli:", "E.C.L.I.:", "NL", ":", "HR", "2019", "2O19", "1278", " ", "\t", "\n",
         "\u00a0", "N L", "x", ".", ",", "-", "ECLI:NL:HR:2019:1278", " en ", "a "]
    ),
    max_size=16,
).map("".join)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(DRAFTS)
def test_the_prefixes_shown_are_those_of_the_former_reading(draft: str) -> None:
    read = _as_read(draft)
    matches = [*ecli._LOOSE.finditer(read), *ecli._CAPITALS.finditer(read)]
    assert list(_unread_prefixes(read, matches)) == former_unread_prefixes(read, matches)


def test_a_draft_of_prefixes_alone_is_read_in_linear_time() -> None:
    # ten times the gate's largest draft, so that the former reading needs hours, not
    # minutes (a few seconds now)
    out = run_bounded(
        "from app.ecli import find_citations\n"
        "for piece in ('ECLI:', 'ECLI: N L:', 'E.C.L.I.:x', 'ECLI:\\u00a0'):\n"
        "    found = find_citations(piece * (2_000_000 // len(piece)))\n"
        "    assert found.malformed and not found.eclis, piece\n"
        "print('done')\n",
        "reading 2,000,000 characters of ECLI prefixes",
    )
    assert out.strip() == "done"
