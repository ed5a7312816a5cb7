"""A check of 2026-12-07 over ten real decisions of ../shared/corpus/rechtspraak_csv: copies
with another court or party in them passed, faithful copies were flagged for a word that
ends in "f" before a number, an article's paragraph written as a word, or a paragraph number
standing alone. Every sentence and passage below is taken from those decisions."""

from __future__ import annotations

import numpy as np
import pytest

from app.gates.evidence import extract_facts, index_facts, missing_facts
from app.gates.judge import Calibration, ReturnedChunk, SentenceResult, judge_sentences
from app.gates.passages import build_passages, chunk_sentences
from app.gates.roles import substituted
from app.gates.sentences import answer_sentences

# ECLI:NL:RBOVE:2016:1292, r.o. 4.4-4.5 (one returned chunk)
TOLPLAS = (
    "Ten aanzien van de vordering tot het aangesloten houden van het gas en de elektriciteit "
    "overweegt de voorzieningenrechter vooralsnog dat De Tolplas geen bevoegdheid toekomt om "
    "de nutsvoorzieningen van [eiser] opnieuw af te sluiten, zolang [eiser] de toekomstige in "
    "rekening gebrachte bedragen voor gas, water en licht aan De Tolplas voldoet en er nog geen "
    "rechterlijk oordeel is verkregen van de kantonrechter in de reeds aanhangige procedure (of "
    "een minnelijke regeling is bereikt). De voorzieningenrechter zal de vordering tot het "
    "aangesloten houden van gas en elektriciteit dan ook toewijzen onder de hiervoor omschreven "
    "voorwaarde. De kosten aan de zijde van [eiser] worden begroot op € 895,-- (€ 79,-- aan "
    "griffierecht en € 816,-- aan salaris van de advocaat)."
)
# ECLI:NL:GHDHA:2016:1982, r.o. 4
GIJZELING = (
    "Zoals het hof hiervoor heeft overwogen heeft de rechtbank het juiste criterium "
    "geformuleerd met betrekking tot de toepassing van het dwangmiddel gijzeling. Naar het "
    "oordeel van het hof heeft de man in zijn grieven geen nieuwe feiten gesteld die een ander "
    "licht op de zaak doen schijnen."
)
# ECLI:NL:RBROT:2018:7312, r.o. 1 and 4.1-4.2 (the paragraph number inside the chunk)
BIJSTAND = (
    "Bij afzonderlijk besluit van dezelfde datum heeft verweerder eiser een voorschot ter "
    "hoogte van € 536,67 toegekend. De bijschrijvingen, zo heeft eiser verklaard, zijn bedragen "
    "die zijn broer naar hem heeft overgemaakt ter financiële ondersteuning. 4.2 De rechtbank "
    "is van oordeel dat verweerder zich terecht op het standpunt heeft gesteld dat eiser zijn "
    "bijstandbehoevendheid niet aannemelijk heeft gemaakt."
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


@pytest.mark.parametrize(
    ("chunk", "answer"),
    [
        # a court for another, where the window names both
        (TOLPLAS, TOLPLAS.split(". ")[1].replace("De voorzieningenrechter", "De kantonrechter")),
        (
            GIJZELING,
            GIJZELING.split(". ", maxsplit=1)[0].replace("de rechtbank", "het gerechtshof") + ".",
        ),
        (GIJZELING, GIJZELING.split(". ")[1].replace("het hof", "de rechtbank")),
        (BIJSTAND, BIJSTAND.split("4.2 ")[1].replace("De rechtbank", "Het gerechtshof")),
        # a party for another
        (GIJZELING, GIJZELING.split(". ")[1].replace("de man", "de vrouw")),
        (TOLPLAS, TOLPLAS.split(". ")[2].replace("[eiser]", "De Tolplas")),
        (BIJSTAND, BIJSTAND.split("4.2 ")[1].replace("dat eiser", "dat verweerder")),
        # two parties trading places
        (
            BIJSTAND,
            BIJSTAND.split(". ", maxsplit=1)[0].replace("verweerder eiser", "eiser verweerder")
            + ".",
        ),
        (
            TOLPLAS,
            TOLPLAS.split(". ", maxsplit=1)[0]
            .replace("De Tolplas geen", "[eiser] geen")
            .replace("van [eiser] opnieuw", "van De Tolplas opnieuw")
            + ".",
        ),
    ],
)
def test_another_court_or_party_in_a_copied_sentence_is_not_supported(
    chunk: str, answer: str
) -> None:
    [result] = judge(chunk, answer)
    assert not result.supported, answer
    assert any(r.kind == "fact_mismatch" for r in result.reasons)


@pytest.mark.parametrize(
    ("chunk", "answer"),
    [
        # the copies themselves, and paraphrases that name the same court or party
        (TOLPLAS, TOLPLAS.split(". ")[1] + "."),
        (TOLPLAS, TOLPLAS.split(". ")[2]),
        (GIJZELING, GIJZELING),
        (BIJSTAND, BIJSTAND.split(". ", maxsplit=1)[0] + "."),
        (
            GIJZELING,
            "Het gerechtshof is van oordeel dat de man in zijn grieven geen nieuwe feiten heeft "
            "gesteld die een ander licht op de zaak doen schijnen.",
        ),
        (
            TOLPLAS,
            "De rechtbank zal de vordering tot het aangesloten houden van gas en elektriciteit "
            "toewijzen onder de hiervoor omschreven voorwaarde.",
        ),
        (
            BIJSTAND,
            "Volgens de rechter heeft verweerder zich terecht op het standpunt gesteld dat eiser "
            "zijn bijstandbehoevendheid niet aannemelijk heeft gemaakt.",
        ),
        (
            BIJSTAND,
            "Verweerder heeft eiser bij afzonderlijk besluit van dezelfde datum een voorschot "
            "van € 536,67 toegekend.",
        ),
        (
            BIJSTAND,
            "Eiser is bij afzonderlijk besluit van dezelfde datum door verweerder een voorschot "
            "van € 536,67 toegekend.",
        ),
        (
            BIJSTAND,
            "Hij heeft volgens de rechtbank zijn bijstandbehoevendheid niet aannemelijk gemaakt.",
        ),
    ],
)
def test_the_same_court_and_parties_are_supported(chunk: str, answer: str) -> None:
    assert all(verdicts(chunk, answer)), answer


def test_a_procedural_role_may_be_named_by_who_holds_it() -> None:
    """ "verweerder" is often the college or the minister: naming either is no swap."""
    passage = "Bij besluit van 1 mei 2018 heeft verweerder de aanvraag van eiser afgewezen."
    sentence = "Bij besluit van 1 mei 2018 heeft het college de aanvraag van eiser afgewezen."
    assert substituted(sentence, passage) is None
    assert substituted(sentence.replace("eiser", "verweerder"), passage) == "verweerder"


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


# ECLI:NL:GHDHA:2016:1982, the end of r.o. 4 (one chunk) and r.o. 7 (another), which says it
# again in other words
HOLDING = (
    "Naar het oordeel van het hof heeft de rechtbank bij het toepassen van het dwangmiddel "
    "gijzeling het juiste criterium geformuleerd."
)


@pytest.mark.parametrize(
    ("changed", "detail"),
    [
        (HOLDING.replace("de rechtbank", "het gerechtshof"), ("fact_mismatch", "het gerechtshof")),
        (HOLDING.replace("heeft de rechtbank", "heeft niet de rechtbank"), ("negation", "niet")),
    ],
)
def test_a_looser_passage_does_not_make_a_changed_copy_faithful(
    changed: str, detail: tuple[str, str]
) -> None:
    """The copy of r.o. 4 with "het gerechtshof" for "de rechtbank", or a "niet" added, was
    flagged against r.o. 4 and then supported by r.o. 7, whose words it holds but for one
    (a check of 2026-12-07): the passages it copies most closely decide."""
    chunks = [HOLDING, GIJZELING]
    returned = []
    for rank, chunk in enumerate(chunks, start=1):
        sentences = chunk_sentences(chunk)
        vectors = np.zeros((len(sentences), 4), dtype=np.float32)
        returned.append(ReturnedChunk(f"c{rank}", rank, build_passages(sentences, vectors)))
    faithful, judged = judge_sentences(
        [HOLDING, changed], np.zeros((2, 4), dtype=np.float32), returned, 2, Calibration(0.7, 1.0)
    )
    assert faithful.supported
    assert not judged.supported
    assert [(r.kind, r.detail) for r in judged.reasons] == [detail]
