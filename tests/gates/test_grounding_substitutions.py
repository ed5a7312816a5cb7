"""A check of 2026-12-07 over ten real decisions of ../shared/corpus/rechtspraak_csv:
faithful copies were flagged for a word that ends in "f" before a number, an article's
paragraph written as a word, or a paragraph number standing alone. Every sentence and
passage below is taken from those decisions."""

from __future__ import annotations

import numpy as np
import pytest

from app.gates.evidence import extract_facts, index_facts, missing_facts
from app.gates.judge import Calibration, ReturnedChunk, SentenceResult, judge_sentences
from app.gates.passages import build_passages, chunk_sentences
from app.gates.sentences import answer_sentences

# ECLI:NL:GHDHA:2016:1982, r.o. 4
GIJZELING = (
    "Zoals het hof hiervoor heeft overwogen heeft de rechtbank het juiste criterium "
    "geformuleerd met betrekking tot de toepassing van het dwangmiddel gijzeling. Naar het "
    "oordeel van het hof heeft de man in zijn grieven geen nieuwe feiten gesteld die een ander "
    "licht op de zaak doen schijnen."
)
# ECLI:NL:RVS:2019:2071, r.o. 1
STIKSTOF = (
    "Het college heeft bij het bestreden besluit vergunning verleend voor een veehouderij die "
    "stikstofdepositie veroorzaakt op stikstofgevoelige natuurwaarden in Natura 2000-gebieden. "
    "Het college heeft daarbij toepassing gegeven aan het Programma Aanpak Stikstof 2015-2021 "
    "(hierna: PAS) en de daarbij behorende regelgeving die vanaf 1 juli 2015 van kracht is."
)
# ECLI:NL:GHAMS:2016:21
HUUR = (
    "Derhalve dient de vordering van [appellante] (reeds) op grond van artikel 7:268, derde "
    "lid, sub b BW te worden afgewezen."
)


def judge(chunk: str, answer: str) -> list[SentenceResult]:
    """The gate's judgement of ``answer`` against one returned chunk, at the calibrated
    point (lexical weight 1: no vector is read)."""
    sentences = chunk_sentences(chunk)
    vectors = np.zeros((len(sentences), 4), dtype=np.float32)
    returned = [ReturnedChunk("c1", 1, build_passages(sentences, vectors))]
    said = answer_sentences(answer)
    return judge_sentences(
        said, np.zeros((len(said), 4), dtype=np.float32), returned, 1, Calibration(0.7, 1.0)
    )


def verdicts(chunk: str, answer: str) -> list[bool]:
    return [r.supported for r in judge(chunk, answer)]


def test_a_name_ending_in_f_before_a_number_is_no_guilder_amount() -> None:
    """ "Stikstof 2015-2021" was read as f 2015: the name lost its "f" and the copy was
    flagged for naming "Stiksto"."""
    copied = STIKSTOF.split("gebieden. ")[1]
    assert verdicts(STIKSTOF, copied) == [True]
    assert [
        f.value for f in extract_facts("Zij betaalde f 2015,- en fl. 300.") if f.kind == "amount"
    ] == [
        "NLG 2015",
        "NLG 300",
    ]
    assert not [
        f for f in extract_facts("het Programma Aanpak Stikstof 2015") if f.kind == "amount"
    ]


def test_a_paragraph_written_as_a_number_matches_it_written_as_a_word() -> None:
    sentence = "De vordering van [appellante] dient op grond van art. 7:268 lid 3 sub b BW te worden afgewezen."
    assert [f.text for f in missing_facts(extract_facts(sentence), index_facts(HUUR))] == []
    assert verdicts(HUUR, sentence) == [True]
    changed = sentence.replace("lid 3", "lid 4")
    assert verdicts(HUUR, changed) == [False]
    # the paragraph's bare number, as a sentence may also write it
    assert not missing_facts(
        extract_facts("Het gaat om lid 3 van artikel 7:268 BW."), index_facts(HUUR)
    )


@pytest.mark.parametrize("number", ["5.", "4.2", "4.2.", "(3)"])
def test_a_paragraph_number_alone_is_not_judged(number: str) -> None:
    """A copy up to the decision's next paragraph ends in its number: "... gijzeling. 5."
    was flagged for the "5." alone, so the answer was never ok."""
    answer = f"{GIJZELING} {number}"
    assert answer_sentences(answer) == answer_sentences(GIJZELING)
    assert verdicts(GIJZELING, answer) == [True, True]
    assert answer_sentences(number) == []
