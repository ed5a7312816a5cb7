"""A line of an answer that only points at a source ("Zie ECLI:...", "Vgl. art. 6:162 BW.")
is held where that source is: a returned chunk of the decision (its title names the ECLI,
court and date) or a passage that cites it. Before 2026-12-07 every such line was judged
unsupported (its only content word is "zie"), however right the source; a line citing a
source that nothing returned holds stays unsupported."""

from __future__ import annotations

import numpy as np
import pytest

from app.gates.evidence import document_facts
from app.gates.judge import Calibration, ReturnedChunk, SentenceResult, judge_sentences
from app.gates.passages import build_passages, chunk_sentences
from app.gates.sentences import answer_sentences

# ECLI:NL:GHAMS:2016:21 (one returned chunk; the title as the search result shows it)
HUUR = (
    "Derhalve dient de vordering van [appellante] (reeds) op grond van artikel 7:268, derde "
    "lid, sub b BW te worden afgewezen."
)
HUUR_TITLE = "ECLI:NL:GHAMS:2016:21 (Gerechtshof Amsterdam, 2016-01-12)"
# ECLI:NL:GHDHA:2016:1982, r.o. 4, which cites a Hoge Raad decision
GIJZELING = (
    "Zoals het hof hiervoor heeft overwogen heeft de rechtbank het juiste criterium "
    "geformuleerd met betrekking tot de toepassing van het dwangmiddel gijzeling (HR 19 "
    "februari 2010, ECLI:NL:HR:2010:BK7671)."
)
GIJZELING_TITLE = "ECLI:NL:GHDHA:2016:1982 (Gerechtshof Den Haag, 2016-03-08)"
CLAIM = "Derhalve dient de vordering van [appellante] te worden afgewezen."


def judge(answer: str) -> list[SentenceResult]:
    """``answer`` judged against the two chunks above, returned at ranks 1 and 2, at the
    calibrated point (lexical weight 1: no vector is read)."""
    returned = []
    for rank, (text, title) in enumerate(((HUUR, HUUR_TITLE), (GIJZELING, GIJZELING_TITLE)), 1):
        sentences = chunk_sentences(text)
        vectors = np.zeros((len(sentences), 4), dtype=np.float32)
        passages = build_passages(sentences, vectors)
        returned.append(ReturnedChunk(f"c{rank}", rank, passages, document_facts(title)))
    said = answer_sentences(answer)
    return judge_sentences(
        said, np.zeros((len(said), 4), dtype=np.float32), returned, 2, Calibration(0.7, 1.0)
    )


def last(answer: str) -> SentenceResult:
    return judge(answer)[-1]


@pytest.mark.parametrize(
    "line",
    [
        "Zie ECLI:NL:GHAMS:2016:21.",
        "(ECLI:NL:GHAMS:2016:21)",
        "Zie ook Gerechtshof Amsterdam 12 januari 2016, ECLI:NL:GHAMS:2016:21.",
        "Bron: ECLI:NL:GHAMS:2016:21 en ECLI:NL:GHDHA:2016:1982.",
        "Vgl. art. 7:268 BW.",
        # a decision that a returned passage cites
        "Zie in dezelfde zin HR 19 februari 2010, ECLI:NL:HR:2010:BK7671.",
        "Zie ECLI:NL:GHAMS:2016:21 [1].",
        "Zie ook, in dezelfde zin, de rechtsoverweging van ECLI:NL:GHDHA:2016:1982.",
    ],
)
def test_a_line_citing_a_returned_source_is_supported(line: str) -> None:
    results = judge(f"{CLAIM} {line}")
    assert [r.supported for r in results] == [True, True], results[-1].reasons
    assert results[-1].evidence is not None


@pytest.mark.parametrize(
    ("line", "detail"),
    [
        # a decision nothing returned is or cites
        ("Zie ECLI:NL:HR:2019:1278.", "ECLI:NL:HR:2019:1278"),
        ("Bron: ECLI:NL:GHAMS:2016:21 en ECLI:NL:HR:2019:1278.", "ECLI:NL:HR:2019:1278"),
        ("Vgl. art. 7:269 BW.", "7:269"),
        # the right decision with a date or court it does not have
        ("Zie Gerechtshof Amsterdam 13 januari 2016, ECLI:NL:GHAMS:2016:21.", "13 januari 2016"),
        ("Zie Hoge Raad 12 januari 2016, ECLI:NL:GHAMS:2016:21.", "Hoge"),
    ],
)
def test_a_line_citing_what_nothing_returned_holds_is_unsupported(line: str, detail: str) -> None:
    result = last(f"{CLAIM} {line}")
    assert not result.supported
    assert any(detail in r.detail for r in result.reasons), result.reasons


def test_a_marker_on_a_citing_line_must_name_the_source() -> None:
    result = last(f"{CLAIM} Zie ECLI:NL:GHAMS:2016:21 [2].")
    assert not result.supported
    assert result.cited_supported is False
    assert [r.kind for r in result.reasons] == ["misattributed"]


@pytest.mark.parametrize(
    "line",
    [
        # a claim beside the citation is judged as a claim
        "Het hof wees de vordering toe, ECLI:NL:GHAMS:2016:21.",
        # "anders" says the source holds the opposite: not a pointer
        "Anders: ECLI:NL:GHAMS:2016:21.",
        # a claim whose words share a pointing word's first six letters ("rechtsoverweging",
        # "vergelijk", "overweging") is no pointer: nothing returned speaks of it
        "Rechtsmisbruik, zie ECLI:NL:GHAMS:2016:21.",
        "Rechtsverwerking, vgl. ECLI:NL:GHAMS:2016:21.",
        "Zie over rechtsdwaling ECLI:NL:GHAMS:2016:21.",
        "Vergelding: ECLI:NL:GHAMS:2016:21.",
        "Overwegend rechtsgeldig, ECLI:NL:GHAMS:2016:21.",
        # a denial or a contrast made of stop words alone is not a pointer either
        "Niet ECLI:NL:GHAMS:2016:21.",
        "Maar zie ECLI:NL:GHAMS:2016:21.",
    ],
)
def test_a_line_that_says_more_than_where_to_read_is_judged_as_a_claim(line: str) -> None:
    assert not last(f"{CLAIM} {line}").supported
