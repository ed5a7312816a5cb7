"""Citation markers are read in time linear in the sentence, whatever digits or spaces they hold.

The marker pattern let every separator between two numbers be empty, so a run of digits or
spaces inside brackets could be cut into numbers in exponentially many ways, all tried again
when the marker did not end the sentence: "[1] 12-13 [99999999999999999999999999] r.o. 3.4"
(100 characters) kept a grounding request, and the database connection it holds, busy for a
minute and a half; each digit more doubled it. The markers read are those of the former
pattern (compared on short random sentences, where it is quick).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.gates import evidence
from app.gates.evidence import split_markers
from tests.bounded_child import run_bounded

# the former pattern, as the reference for what a marker is
_FORMER_MARKER = r"\[\s*([-−–+]?\s*\d+(?:\s*[,;]?\s*[-−–+]?\s*\d+)*)\s*\]"
_FORMER_AT_END = re.compile(rf"(?:\s*{_FORMER_MARKER})+\s*([.!?…;:,]*)\s*$")
_FORMER = re.compile(_FORMER_MARKER)

PIECES = st.sampled_from(
    ["[", "]", "1", "23", " ", ",", ";", "-", "–", "+", ".", "x", " [2]", "[1, 3]", "[2-4]"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=14).map("".join))
def test_the_markers_read_are_those_of_the_former_pattern(sentence: str) -> None:
    read = split_markers(sentence)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(evidence, "_MARKERS_AT_END", _FORMER_AT_END)
        patch.setattr(evidence, "_MARKER", _FORMER)
        assert read == split_markers(sentence)


def test_long_runs_of_digits_or_spaces_in_brackets_are_read_in_linear_time() -> None:
    # the former patterns took about 90 s for the first and far longer for the others:
    # exponential in a run of digits or of spaced numbers in brackets, quadratic in a run of
    # spaces (the gate collapses those, but the function must not depend on it)
    out = run_bounded(
        "from app.gates.evidence import split_markers\n"
        "for text in (\n"
        "    '[1] 12-13 [' + '9' * 26 + '] r.o. 3.4',\n"
        "    '[1] [' + '9' * 200_000 + '] x',\n"
        "    '[1' + '  1' * 60_000 + '] x',\n"
        "    'Zie [' + ' ' * 100_000 + '1' + ' ' * 100_000 + '2] x',\n"
        "    'Zie' + ' ' * 200_000 + 'x',\n"
        "):\n"
        "    assert split_markers(text) == (text, []), text[:40]\n"
        "assert split_markers('Dit is zo [1' + ', 2' * 50_000 + '].')[0] == 'Dit is zo.'\n"
        "print('done')\n",
        "reading citation markers of long digit and space runs",
    )
    assert out.strip() == "done"
