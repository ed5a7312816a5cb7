"""An article's letter written after a space ("artikel 32 d") is the same article fact."""

from __future__ import annotations

import numpy as np
import pytest

from app.gates.evidence import extract_facts, index_facts, missing_facts
from app.gates.judge import Calibration, ReturnedChunk, judge_sentences
from app.gates.passages import build_passages, chunk_sentences


def missing(sentence: str, passage: str) -> list[str]:
    return [f.text for f in missing_facts(extract_facts(sentence), index_facts(passage))]


def articles(text: str) -> list[str]:
    return [f.value for f in extract_facts(text) if f.kind in ("article", "article_part")]


@pytest.mark.parametrize(
    ("sentence", "passage"),
    [
        ("Dit volgt uit artikel 32 d BW.", "Het hof past artikel 32d BW toe."),
        ("Dit volgt uit artikel 32d BW.", "Het hof past artikel 32 d BW toe."),
        ("Dit volgt uit art. 3 a, lid 2.", "Het hof past artikel 3a lid 2 toe."),
        ("Dit volgt uit art. 7:658 a BW.", "Het hof past artikel 7:658a BW toe."),
        ("Dit volgt uit artikel 3 a.", "Het hof past art. 3a toe."),
    ],
)
def test_a_spaced_letter_is_the_same_article(sentence: str, passage: str) -> None:
    assert missing(sentence, passage) == []


@pytest.mark.parametrize(
    ("sentence", "passage", "facts"),
    [
        # the letter is no longer dropped: "artikel 32 d" is not article 32
        ("Dit volgt uit artikel 32 d BW.", "Het hof past artikel 32 BW toe.", ["artikel 32 d"]),
        ("Dit volgt uit artikel 32 e BW.", "Het hof past artikel 32d BW toe.", ["artikel 32 e"]),
        (
            "Dit volgt uit art. 3 b lid 2.",
            "Het hof past art. 3a lid 2 toe.",
            ["art. 3 b lid 2", "art. 3 b"],
        ),
    ],
)
def test_a_changed_spaced_letter_is_named(sentence: str, passage: str, facts: list[str]) -> None:
    assert missing(sentence, passage) == facts


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # only one lower-case letter standing alone is the article's letter: a word after
        # the number, an abbreviation, "t/m" or a capital is not (each beside one that is)
        ("Zie artikel 6 en 7 en artikel 32 d.", ["6", "32d"]),
        ("Zie artikel 3 lid 2 en art. 4 a.", ["3|2|", "3", "4a"]),
        ("Zie artikel 3 van de wet en artikel 32 d, lid 1.", ["32d|1|", "3", "32d"]),
        ("Zie art. 3 e.v. en art. 4 a.", ["3", "4a"]),
        ("Zie artikel 2 t/m 4 en artikel 5 a.", ["2", "5a"]),
        ("Zie artikel 3 A BW en artikel 5 a BW.", ["3", "5a"]),
        ("Zie artikel 3 c.q. 4 en artikel 5 a", ["3", "5a"]),
        ("Zie artikel 3 aanhef en onder b en artikel 5 a.", ["3||b", "3", "5a"]),
        # "juncto" and "a contrario" (a review)
        ("Zie art. 15 j° 23 Sr en artikel 5 a.", ["15", "5a"]),
        ("Artikel 3 a contrario gelezen, en artikel 5 a.", ["3", "5a"]),
    ],
)
def test_a_word_after_the_number_is_no_letter(text: str, expected: list[str]) -> None:
    assert articles(text) == expected


def test_a_faithful_article_written_with_a_space_is_supported() -> None:
    chunk = "Het hof past artikel 32d BW toe. De vordering wordt afgewezen."
    sentences = chunk_sentences(chunk)
    vectors = np.zeros((len(sentences), 4), dtype=np.float32)
    returned = [ReturnedChunk("c1", 1, build_passages(sentences, vectors))]
    answer = ["Het hof past artikel 32 d BW toe.", "Het hof past artikel 32 e BW toe."]
    faithful, changed = judge_sentences(
        answer, np.zeros((2, 4), dtype=np.float32), returned, 1, Calibration(0.8, 1.0)
    )
    assert faithful.supported
    assert not changed.supported
    assert [r.detail for r in changed.reasons if r.kind == "fact_mismatch"] == ["artikel 32 e"]
