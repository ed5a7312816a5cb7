"""The chunker's segmentation costs time linear in the text, whatever its punctuation or
line length, and cuts where it always did.

Two patterns were quadratic: the sentence-end search retried a backtracking pattern at
every mark of a punctuation run ("......x"), and every sentence end looked for the start
of its line by scanning the whole line back. The references below are written from the
definitions and compared on random punctuation-heavy text.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.ingest.chunking.packing import SourceText, _split_word
from app.ingest.chunking.segmentation import _first_on_line, _sentence_end_candidates
from app.ingest.types import ChunkLimits
from tests.bounded_child import run_bounded

_FINAL = ".!?…"
_CLOSERS = "\"'”’»)]"


def reference_candidates(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A whole run of final marks inside [start, end) and its closers, when whitespace
    inside [start, end) follows."""
    spans: list[tuple[int, int]] = []
    i = start
    while i < end:
        if text[i] not in _FINAL:
            i += 1
            continue
        run_end = i
        while run_end < end and text[run_end] in _FINAL:
            run_end += 1
        tail = run_end
        while tail < end and text[tail] in _CLOSERS:
            tail += 1
        if tail < end and text[tail].isspace():
            spans.append((i, tail))
        i = run_end
    return spans


PIECES = st.sampled_from([*".!?…\"')]([1A xX\n\t", "xx", "3.", "art."])
TEXT = st.lists(PIECES, max_size=60).map("".join)


@settings(max_examples=400, deadline=None)
@given(TEXT, st.data())
def test_sentence_end_candidates_match_the_reference(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    assert list(_sentence_end_candidates(text, start, end)) == reference_candidates(
        text, start, end
    )


@settings(max_examples=400, deadline=None)
@given(TEXT, st.data())
def test_first_on_line_matches_the_definition(text: str, data: st.DataObject) -> None:
    lo = data.draw(st.integers(0, len(text)))
    pos = data.draw(st.integers(lo, len(text)))
    line_start = max(text.rfind("\n", lo, pos) + 1, lo)
    assert _first_on_line(text, pos, lo) == (not text[line_start:pos].strip())


def test_long_punctuation_runs_segment_in_linear_time() -> None:
    # hours for the backtracking retry at every mark; milliseconds in one pass
    out = run_bounded(
        "from app.ingest.chunking.segmentation import split_segments\n"
        "for mark in '.!?…':\n"
        "    text = 'Zie' + mark * 200_000 + 'x. De rechtbank.'\n"
        "    segs = split_segments(text, 0, len(text))\n"
        "    cut = text.index(' De')\n"
        "    assert [(s.start, s.end) for s in segs] == [(0, cut), (cut + 1, len(text))], mark\n"
        "print('done')\n",
        "segmenting 200,000 punctuation marks",
    )
    assert out.strip() == "done"


def test_a_long_line_of_sentences_segments_in_linear_time() -> None:
    # 8.4 MB on one line with 1.2 million sentence ends: a scan back to the line's start at
    # each of them is minutes of copying; walking back over blanks only is a few seconds
    out = run_bounded(
        "from app.ingest.chunking.segmentation import split_segments\n"
        "text = 'xx. Yy ' * 1_200_000\n"
        "segs = split_segments(text, 0, len(text))\n"
        "assert len(segs) == 1_200_001, len(segs)\n"
        "print('done')\n",
        "segmenting one long line of sentences",
    )
    assert out.strip() == "done"


class _CountingTokens:
    """The real encoder's token counter, counting its calls (each costs about the same at
    these lengths: the call, not the text, is the price)."""

    def __init__(self, tokens: Any) -> None:
        self.tokens = tokens
        self.calls = 0
        self.max_passage_tokens = int(tokens.max_passage_tokens)

    def count_tokens(self, text: str) -> int:
        self.calls += 1
        return int(self.tokens.count_tokens(text))


@pytest.mark.parametrize("blob", ["A" * 200_000, "x9Qz" * 30_000])
def test_a_run_without_spaces_costs_a_few_tokenizer_calls_a_piece(embedder: Any, blob: str) -> None:
    """A pasted hash or a document of one endless word is cut piece by piece: each cut is
    found in a handful of counts near the last piece's length, not by bisecting a window
    of budget x 64 characters (about fifteen counts a piece: a 5 MB blob took minutes)."""
    budget = 506
    tokens = _CountingTokens(embedder)
    src = SourceText(blob, [], tokens, ChunkLimits(model_max=budget))
    pieces = _split_word(src, 0, len(blob), budget)
    assert "".join(blob[p.start : p.end] for p in pieces) == blob
    for p in pieces:
        assert embedder.count_tokens(blob[p.start : p.end]) <= budget
        if p.end < len(blob) and p.end - p.start < budget * 64:
            # the longest prefix that fits (below the cap): one character more does not
            assert embedder.count_tokens(blob[p.start : p.end + 1]) > budget
    # the first piece may search the whole window; the others start from its length
    assert tokens.calls <= 3 * len(pieces) + 20, (tokens.calls, len(pieces))
