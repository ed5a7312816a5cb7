"""The grounding splitter's cost is linear in the answer, whatever its punctuation.

A candidate sentence end used to be searched with a backtracking pattern retried at every
mark of a punctuation run, so a 200,000-character answer of dots cost hours of CPU. The
boundaries themselves must not move: a reference written from the definition of a
candidate (a whole run of final marks, its closing quotes or brackets, then as many
citation markers as leave whitespace or the end behind) is compared on random
punctuation-heavy strings.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from app.gates.sentences import _CANDIDATE, split_sentences
from tests.bounded_child import run_bounded

_FINAL = ".!?…"
_CLOSERS = "\"'”’»)]"
_SPACED_MARKER = re.compile(r"\s*\[\d+(?:\s*[,;–-]\s*\d+)*\]")


def reference_candidates(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(text):
        if text[i] not in _FINAL:
            i += 1
            continue
        run_end = i
        while run_end < len(text) and text[run_end] in _FINAL:
            run_end += 1
        end = run_end
        while end < len(text) and text[end] in _CLOSERS:
            end += 1
        ends = [end]
        while (marker := _SPACED_MARKER.match(text, ends[-1])) is not None:
            ends.append(marker.end())
        allowed = [e for e in ends if e == len(text) or text[e].isspace()]
        if allowed:
            spans.append((i, allowed[-1]))
            i = allowed[-1]
        else:
            i = run_end
    return spans


PUNCTUATION_HEAVY = st.lists(
    st.sampled_from([*".!?…\"')]([1,-A s\n", "[1]", " [2, 3]", "[4;5]"]), max_size=60
).map("".join)


@settings(max_examples=400, deadline=None)
@given(PUNCTUATION_HEAVY)
def test_candidates_match_the_reference(text: str) -> None:
    flat = " ".join(text.split())
    assert [m.span() for m in _CANDIDATE.finditer(flat)] == reference_candidates(flat)


def test_long_punctuation_runs_split_in_linear_time() -> None:
    # 200,000 marks (the largest answer the gate takes): hours with a backtracking retry at
    # every mark, a few milliseconds in one pass
    out = run_bounded(
        "from app.gates.sentences import split_sentences\n"
        "for mark in '.!?…':\n"
        "    text = mark * 200_000 + 'x'\n"
        "    assert split_sentences(text) == [text], mark\n"
        "text = 'Zie r.o. 3' + '.' * 200_000 + ')' * 1000 + 'x. De rechtbank.'\n"
        "assert len(split_sentences(text)) == 2\n"
        "print('done')\n",
        "splitting 200,000 punctuation marks",
    )
    assert out.strip() == "done"


def test_normal_prose_is_unchanged_by_a_long_run() -> None:
    assert split_sentences("Het hof oordeelt aldus...... Dat is juist. [1] Zie r.o. 3.4.") == [
        "Het hof oordeelt aldus......",
        "Dat is juist. [1]",
        "Zie r.o. 3.4.",
    ]


def test_answer_markup_is_read_in_linear_time() -> None:
    # the answer's markup pass (HTML tags, Markdown links, emphasis, list items, table rows)
    # on 200,000 characters of each pattern that a backtracking form would retry
    out = run_bounded(
        "from app.gates.sentences import answer_sentences\n"
        "for piece in ('<a', '<p x', '[a](', '[a]', '**', '*a', '- ', '|', '.]', '1) ',\n"
        "              '<br>', '&amp;', '\\n- a.', ':\\n', '**a:**', '[^1]', '.¹', ' • ', 'ab.C'):\n"
        "    answer_sentences(piece * (200_000 // len(piece)))\n"
        "print('done')\n",
        "reading 200,000 characters of answer markup",
    )
    assert out.strip() == "done"
