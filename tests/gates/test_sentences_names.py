"""Company forms and titles before a name end no sentence (a check found the stumps)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from app.gates.judge import Calibration, ReturnedChunk, judge_sentences
from app.gates.passages import build_passages, chunk_sentences
from app.gates.sentences import answer_sentences, split_sentences

# chunks are split by split_sentences (passages.chunk_sentences), answers by answer_sentences
SPLITTERS = pytest.mark.parametrize(
    "split", [split_sentences, answer_sentences], ids=["chunk", "answer"]
)


@SPLITTERS
@pytest.mark.parametrize(
    "text",
    [
        "Jansen B.V. Amsterdam heeft de vordering ingesteld.",
        "De vennootschap Shell N.V. Nederland verweert zich.",
        "Ahold C.V. Zaandam stelt beroep in tegen het vonnis.",
        "De Vries V.O.F. Utrecht is hoofdelijk aansprakelijk.",
        "Acme B.V. (Acme) stelt dat de koop is ontbonden.",
        "De zaak tegen Acme B.V. Beta N.V. en Gamma C.V. is gevoegd.",
        "De koop is gesloten door acme b.v. Amsterdam.",
        "De A.-G. Wattel concludeert tot verwerping.",
        "Volgens de P.-G. Silvis faalt het middel.",
        "De A.-G. De Bock concludeert tot vernietiging.",
        "De P.-G. Van den Berge concludeert tot verwerping.",
        "Het advies van jhr. Van Karnebeek is gevolgd.",
        "Namens jkvr. Van Lynden is beroep ingesteld.",
    ],
)
def test_a_company_form_or_title_before_a_name_ends_no_sentence(
    split: Callable[[str], list[str]], text: str
) -> None:
    assert split(text) == [text]


@SPLITTERS
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # before a word that opens a sentence it ends one, a name before it does not
        (
            "Acme B.V. Amsterdam levert aan Beta N.V. Het hof wijst de vordering af.",
            ["Acme B.V. Amsterdam levert aan Beta N.V.", "Het hof wijst de vordering af."],
        ),
        (
            "Acme B.V. Amsterdam levert aan Beta N.V. Eiseres vordert ontbinding.",
            ["Acme B.V. Amsterdam levert aan Beta N.V.", "Eiseres vordert ontbinding."],
        ),
        (
            "Acme B.V. Amsterdam levert aan Beta N.V. 4. De kosten zijn voor Beta.",
            ["Acme B.V. Amsterdam levert aan Beta N.V.", "4. De kosten zijn voor Beta."],
        ),
        (
            "Acme B.V. Amsterdam levert aan Beta N.V. “Dat is onjuist”, stelt Beta.",
            ["Acme B.V. Amsterdam levert aan Beta N.V.", "“Dat is onjuist”, stelt Beta."],
        ),
        (
            # a surname's particles go with a title only before a capital
            "De A.-G. Wattel concludeert tot verwerping en het hof volgt de A.-G. "
            "De rechtbank had anders geoordeeld.",
            [
                "De A.-G. Wattel concludeert tot verwerping en het hof volgt de A.-G.",
                "De rechtbank had anders geoordeeld.",
            ],
        ),
        (
            "Volgens de A.-G. Hartlief volgt het hof de A.-G. Het beroep faalt.",
            ["Volgens de A.-G. Hartlief volgt het hof de A.-G.", "Het beroep faalt."],
        ),
    ],
)
def test_a_company_form_or_title_ends_a_sentence_before_a_sentence_starter(
    split: Callable[[str], list[str]], text: str, expected: list[str]
) -> None:
    assert split(text) == expected


def test_a_title_at_the_end_of_an_answer_line_goes_on_with_the_next() -> None:
    assert answer_sentences("Volgens jhr.\nVan Karnebeek is dat zo.") == [
        "Volgens jhr. Van Karnebeek is dat zo."
    ]


def test_a_faithful_sentence_with_a_title_and_a_company_form_is_supported() -> None:
    """Split at "A.-G." and "B.V.", the answer's stumps were judged alone: false alarms."""
    chunk = (
        "De A.-G. Wattel concludeert tot verwerping van het beroep van Helderglas B.V. "
        "Dordrecht. Het hof volgt de conclusie."
    )
    sentences = chunk_sentences(chunk)
    vectors = np.zeros((len(sentences), 4), dtype=np.float32)
    returned = [ReturnedChunk("c1", 1, build_passages(sentences, vectors))]
    answer = answer_sentences(
        "De A.-G. Wattel concludeert tot verwerping van het beroep van Helderglas B.V. Dordrecht."
    )
    results = judge_sentences(
        answer, np.zeros((len(answer), 4), dtype=np.float32), returned, 1, Calibration(0.8, 1.0)
    )
    assert [(r.text, r.supported) for r in results] == [(answer[0], True)]
