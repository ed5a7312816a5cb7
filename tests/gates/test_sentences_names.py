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
    ],
)
def test_a_company_form_before_a_name_ends_no_sentence_of_a_chunk(text: str) -> None:
    assert split_sentences(text) == [text]


def test_an_answer_splits_after_a_company_form() -> None:
    """A review: glued, an invented sentence after "B.V." passed on the copied one before
    it. An answer's stumps are each held by the passage that reads the whole sentence."""
    chunk = (
        "4.2 Belanghebbende heeft de aandelen op 1 januari 1996 verkocht aan Holding B.V. "
        "Amsterdam. Het hof volgt de inspecteur."
    )
    copied = "Belanghebbende heeft de aandelen op 1 januari 1996 verkocht aan Holding B.V."
    answer = answer_sentences(f"{copied} C heeft daarbij opzettelijk gefraudeerd. [1]")
    assert answer == [copied, "C heeft daarbij opzettelijk gefraudeerd. [1]"]
    sentences = chunk_sentences(chunk)
    assert len(sentences) == 2  # the chunk's first sentence goes on past "B.V."
    returned = [
        ReturnedChunk("c1", 1, build_passages(sentences, np.zeros((2, 4), dtype=np.float32)))
    ]
    results = judge_sentences(
        answer, np.zeros((2, 4), dtype=np.float32), returned, 1, Calibration(0.7, 1.0)
    )
    assert [r.supported for r in results] == [True, False]


@SPLITTERS
@pytest.mark.parametrize(
    "text",
    [
        "De A.-G. Wattel concludeert tot verwerping.",
        "Volgens de P.-G. Silvis faalt het middel.",
        "De A.-G. De Bock concludeert tot vernietiging.",
        "De P.-G. Van den Berge concludeert tot verwerping.",
        "Het advies van jhr. Van Karnebeek is gevolgd.",
        "Namens jkvr. Van Lynden is beroep ingesteld.",
    ],
)
def test_a_title_before_a_name_ends_no_sentence(
    split: Callable[[str], list[str]], text: str
) -> None:
    assert split(text) == [text]


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
        (
            # a court after a particle opens a sentence (a review)
            "Het hof volgt de A.-G. De Hoge Raad verwerpt het beroep.",
            ["Het hof volgt de A.-G.", "De Hoge Raad verwerpt het beroep."],
        ),
    ],
)
def test_a_company_form_or_title_ends_a_sentence_before_a_sentence_starter(
    text: str, expected: list[str]
) -> None:
    assert split_sentences(text) == expected
    if "B.V." not in text and "N.V." not in text:  # an answer splits at a company form
        assert answer_sentences(text) == expected


def test_a_title_at_the_end_of_an_answer_line_goes_on_with_the_next() -> None:
    assert answer_sentences("Volgens jhr.\nVan Karnebeek is dat zo.") == [
        "Volgens jhr. Van Karnebeek is dat zo."
    ]


def test_a_faithful_sentence_with_a_title_and_a_company_form_is_supported() -> None:
    """Split at "A.-G." and "B.V." in the chunk, the passages held stumps: false alarms.
    The answer splits after "B.V." (each stump held by the whole passage), not after a
    title ("De A.-G." alone is held by nothing)."""
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
    assert [(r.text, r.supported) for r in results] == [
        ("De A.-G. Wattel concludeert tot verwerping van het beroep van Helderglas B.V.", True),
        ("Dordrecht.", True),
    ]
