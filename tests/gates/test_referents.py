"""A court, role, procedure or outcome that an answer names and no returned chunk names is
no support (app/gates/referents.py). A fuzz of the gate (2026-12-05) replaced one content
word of copied sentences by a legal term that no returned chunk held ("... heeft de
curator vernietigd", "... het cassatieberoep verzekeraar"): 67 of 89 stayed supported,
since containment lets one word in five be anything."""

from __future__ import annotations

import numpy as np
import pytest

from app.gates.evidence import document_facts
from app.gates.judge import Calibration, ReturnedChunk, SentenceResult, judge_sentences
from app.gates.negation import negation_words
from app.gates.passages import build_passages, chunk_sentences
from app.gates.referents import (
    FAMILIES,
    family,
    held_outcomes,
    outcome,
    stated_outcomes,
)

FIRST = (
    "De Inspecteur heeft aan belanghebbende over het jaar 2015 een naheffingsaanslag in de "
    "omzetbelasting opgelegd. Het Hof heeft de uitspraak van de Inspecteur bevestigd en het "
    "beroep van belanghebbende ongegrond verklaard."
)
SECOND = (
    "De rechtbank heeft de vordering van de curator tot betaling van de huurachterstand "
    "toegewezen na het faillissement van de huurder."
)


def judge_in(chunk: str, sentences: list[str], threshold: float = 0.8) -> list[SentenceResult]:
    """``sentences`` judged against one returned chunk of text ``chunk``."""
    parts = chunk_sentences(chunk)
    returned = [
        ReturnedChunk("c1", 1, build_passages(parts, np.zeros((len(parts), 4), dtype=np.float32)))
    ]
    vectors = np.zeros((len(sentences), 4), dtype=np.float32)
    return judge_sentences(sentences, vectors, returned, 1, Calibration(threshold, 1.0))


def judge(sentences: list[str]) -> list[SentenceResult]:
    returned = []
    for rank, text in enumerate((FIRST, SECOND), start=1):
        parts = chunk_sentences(text)
        vectors = np.zeros((len(parts), 4), dtype=np.float32)
        returned.append(ReturnedChunk(f"c{rank}", rank, build_passages(parts, vectors)))
    vectors = np.zeros((len(sentences), 4), dtype=np.float32)
    return judge_sentences(sentences, vectors, returned, 2, Calibration(0.8, 1.0))


@pytest.mark.parametrize(
    ("sentence", "word"),
    [
        (
            "Het Hof heeft de uitspraak van de kantonrechter bevestigd en het beroep van "
            "belanghebbende ongegrond verklaard.",
            "kantonrechter",
        ),
        (
            "De Inspecteur heeft aan belanghebbende over het jaar 2015 een dwangsom in de "
            "omzetbelasting opgelegd.",
            "dwangsom",
        ),
        (
            "Het Hof heeft de uitspraak van de Inspecteur geschorst en het beroep van "
            "belanghebbende ongegrond verklaard.",
            "geschorst",
        ),
    ],
)
def test_a_referent_no_returned_chunk_names_is_no_support(sentence: str, word: str) -> None:
    (verdict,) = judge([sentence])
    assert not verdict.supported
    assert [(r.kind, r.detail) for r in verdict.reasons] == [("fact_mismatch", word)]


def test_a_referent_another_returned_chunk_names_is_held() -> None:
    """Only the retrieval is asked: the curator and the bankruptcy stand in the second chunk,
    and a sentence copied from the first, or from the second, is supported as before."""
    copied, other, reworded = judge(
        [
            "Het Hof heeft de uitspraak van de Inspecteur bevestigd en het beroep van "
            "belanghebbende ongegrond verklaard.",
            "De rechtbank heeft de vordering van de curator tot betaling van de "
            "huurachterstand toegewezen na het faillissement van de huurder.",
            "De rechtbank wees de vordering van de curatoren toe na het faillissement van de "
            "huurder tot betaling van de huurachterstand.",
        ]
    )
    assert copied.supported and other.supported and reworded.supported, (copied, other, reworded)


def test_a_marker_on_a_sentence_with_an_unheld_referent_is_not_cited_support() -> None:
    (verdict,) = judge(
        [
            "Het Hof heeft de uitspraak van de Inspecteur bevestigd en het beroep van de "
            "notaris ongegrond verklaard. [1]"
        ]
    )
    assert not verdict.supported and verdict.cited_supported is False


def test_families_read_inflections_and_keep_apart() -> None:
    assert family("faillissement") == family("failliet") == family("gefailleerd")
    assert family("octrooi") == family("patentrecht")
    assert family("kantonrechter") != family("strafrechter")
    assert family("rechter") is None and family("uitspraak") is None
    prefixes = [p for f in FAMILIES for p in f]
    assert len(prefixes) == len(set(prefixes))  # one family per prefix


def test_a_referent_inside_a_chunk_s_compound_is_held() -> None:
    """A review: the chunk's "derdenbeslag", "minderheidsaandeelhouder" or "onderaannemer"
    name the referent an answer calls "beslag", "aandeelhouder" or "aannemer"."""
    chunk = "Eiser heeft derdenbeslag gelegd onder de werkgever van gedaagde."
    answer = ["Eiser heeft beslag gelegd onder de werkgever van gedaagde."]
    (verdict,) = judge_in(chunk, answer)
    assert verdict.supported, verdict.reasons


@pytest.mark.parametrize(
    "word", ["beslagen", "verzekerd", "hypothetische", "vereffend", "competent", "officieel"]
)
def test_ordinary_words_that_begin_like_a_referent_are_none(word: str) -> None:
    """A review found these read as referents ("goed beslagen ten ijs", "ervan verzekerd")."""
    assert family(word) is None


# --- an outcome must stand in the supporting passage ----------------------------------------

RULING = (
    "De rechtbank heeft de vordering van de verhuurder tot ontruiming van de woning aan de "
    "Havenstraat toegewezen. Het hof oordeelt dat de huurder de huur over de maanden januari "
    "tot en met april niet tijdig heeft betaald en dat de verhuurder hem daarover meermaals "
    "schriftelijk heeft aangemaand. Het hof wijst de vordering van de verhuurder tot "
    "vergoeding van de schade aan de woning aan de Havenstraat af."
)
COPIED = (
    "Het hof oordeelt dat de huurder de huur over de maanden januari tot en met april niet "
    "tijdig heeft betaald en dat de verhuurder hem daarover meermaals schriftelijk heeft "
    "aangemaand"
)


def judge_ruling(sentences: list[str]) -> list[SentenceResult]:
    return judge_in(RULING, sentences)


@pytest.mark.parametrize(
    ("sentence", "word"),
    [
        (f"{COPIED}, zodat de verhuurder niet-ontvankelijk is.", "ontvankelijk"),
        (f"{COPIED} en vernietigt het vonnis.", "vernietigt"),
        (f"{COPIED}, waarna het vonnis wordt bekrachtigd.", "bekrachtigd"),
    ],
)
def test_an_outcome_added_to_a_copied_sentence_is_no_support(sentence: str, word: str) -> None:
    """The copy holds 13 of 15 content words (containment 0.87 passed it), and the
    retrieval speaks of success and failure elsewhere: the added outcome is a claim of its
    own, which the passage that holds the rest does not make. (A window of the three
    sentences states success and failure, "toegewezen" and "wijst ... af": an outcome of
    either kind is held there.)"""
    (verdict,) = judge_ruling([sentence])
    assert not verdict.supported
    assert ("fact_mismatch", word) in [(r.kind, r.detail) for r in verdict.reasons]


def test_an_outcome_the_passage_states_in_other_words_is_held() -> None:
    """ "Afgewezen" for the split verb "wijst ... af"; "toegewezen" copied; an outcome that
    the passage states beside the sentence's other words."""
    results = judge_ruling(
        [
            f"{COPIED}.",
            "Het hof heeft de vordering van de verhuurder tot vergoeding van de schade aan de "
            "woning aan de Havenstraat afgewezen.",
            "De rechtbank heeft de vordering van de verhuurder tot ontruiming van de woning "
            "aan de Havenstraat toegewezen.",
        ]
    )
    assert all(r.supported for r in results), [(r.text, r.reasons) for r in results]


def test_outcomes_read_their_synonyms_and_keep_success_from_failure() -> None:
    assert outcome("slaagt") == outcome("gegrond") == outcome("toegewezen")
    assert outcome("faalt") == outcome("ongegrond") == outcome("afgewezen") == outcome("verworpen")
    assert outcome("slaagt") != outcome("faalt")
    assert outcome("vernietigt") != outcome("bekrachtigt")
    assert outcome("beroep") is None and outcome("vordering") is None


def _held(text: str) -> set[int]:
    return held_outcomes(negation_words(text))


def test_a_decision_states_its_outcome_in_its_own_words() -> None:
    """A check of faithful answers (2026-12-06): "faalt" for "kan niet tot cassatie leiden",
    "slaagt" for "Dit betoog is juist", "falen" for "zijn niet gegrond" were flagged."""
    success, failure = outcome("slaagt"), outcome("faalt")
    assert _held("Middel II kan niet tot cassatie leiden.") == {failure}
    assert _held("De middelen zijn derhalve niet gegrond.") == {failure}
    assert _held("Het middel is gegrond.") == {success}
    assert success in _held("Dit betoog is juist. Geen rechtsregel staat eraan in de weg.")
    assert {success, outcome("vernietigt")} <= _held("De uitspraak kan niet in stand blijven.")
    assert _held("Het hof wijst de vordering af.") == {failure}
    assert _held("De rechtbank wees het verzoek toe.") == {success}


def test_words_that_only_begin_like_an_outcome_hold_none() -> None:
    """A review: the passage's "wezenlijke" held success and failure (the prefix of the split
    verb "wezen"), and "bevestigende" held an affirmation, so invented outcomes passed."""
    assert _held("Dat is van wezenlijke betekenis voor de tijdsduur van het recht.") == set()
    assert _held("Het vormt onvoldoende grondslag voor een bevestigende beantwoording.") == set()
    assert _held("Het hof wijst erop dat de termijn is verstreken.") == set()


def test_based_on_is_no_outcome() -> None:
    """A check of 2026-12-06: "Het Hof heeft dit oordeel gegrond op ..." (based on) held
    success, and an invented "het middel werd gegrond verklaard" passed beside it."""
    chunk = (
        "Het Hof heeft dit oordeel gegrond op de in de punten 4.2 tot en met 4.4 van zijn "
        "uitspraak vermelde overwegingen. Tegen voormeld oordeel keert zich middel I."
    )
    assert _held(chunk) == set()
    (verdict,) = judge_in(chunk, ["Middel I, dat zich tegen dit oordeel keert, is gegrond."])
    assert ("fact_mismatch", "gegrond") in [(r.kind, r.detail) for r in verdict.reasons]
    # an answer's "gegrond op" is still its claim of success (a review)
    rejected = "De Hoge Raad verwerpt het beroep van belanghebbende tegen de uitspraak van het hof."
    claim = (
        "De Hoge Raad verklaart het beroep van belanghebbende tegen de uitspraak van het hof "
        "gegrond op alle punten."
    )
    assert stated_outcomes(negation_words(claim)) == [("gegrond", outcome("slaagt"))]
    (verdict,) = judge_in(rejected, [claim], threshold=0.6)  # its words are held
    assert ("fact_mismatch", "gegrond") in [(r.kind, r.detail) for r in verdict.reasons]
    assert outcome("slaagt") in _held("Het middel is gegrond. Op dit punt beslist de HR.")


def test_a_split_verb_in_an_answer_states_its_outcome() -> None:
    """ "De rechtbank wijst het verzoek toe" where the chunk says "wijst ... af" passed: the
    answer's split verb was no outcome word."""
    chunk = "Het hof wijst de vordering van de verhuurder tot vergoeding van de schade af."
    answer = ["Het hof wijst de vordering van de verhuurder tot vergoeding van de schade toe."]
    (verdict,) = judge_in(chunk, answer)
    assert ("fact_mismatch", "wijst") in [(r.kind, r.detail) for r in verdict.reasons], verdict
    assert stated_outcomes(negation_words("De rechtbank wijst het verzoek af.")) == [
        ("wijst", outcome("faalt"))
    ]
    # "niet gegrond" states failure in an answer as in a decision
    assert stated_outcomes(negation_words("De middelen zijn derhalve niet gegrond.")) == [
        ("gegrond", outcome("faalt"))
    ]


def test_an_outcome_beside_its_reasons_is_held_in_the_decision_s_words() -> None:
    """A faithful summary joins a decision's outcome ("Het middel is gegrond.") to its
    reasons in the next sentence, in other words ("slaagt" for "gegrond")."""
    chunk = (
        "De verkoper heeft het mestquotum geleverd. 3.4. Het middel is gegrond. Nu het Hof "
        "niet heeft onderzocht of zulks zich in het onderhavige geval heeft voorgedaan, kan "
        "zijn uitspraak niet in stand blijven."
    )
    answer = [
        "Het middel slaagt, want het Hof heeft niet onderzocht of zulks zich in het "
        "onderhavige geval heeft voorgedaan."
    ]
    (verdict,) = judge_in(chunk, answer)
    assert verdict.supported, verdict.reasons


@pytest.mark.parametrize(
    "sentence",
    [
        "De veroordeelde heeft hoger beroep ingesteld tegen het vonnis van de rechtbank.",
        "De appellant komt op tegen de afwijzing van zijn aanvraag om een vergunning.",
    ],
)
def test_a_noun_that_begins_like_an_outcome_states_none(sentence: str) -> None:
    """A review: "de veroordeelde" (the party) and "de afwijzing van zijn aanvraag" (the
    refusal under appeal) were read as outcomes the passage had to state."""
    assert stated_outcomes(negation_words(sentence)) == []


@pytest.mark.parametrize(
    ("answer", "chunk"),
    [
        ("Het beroep slaagt.", "Het beroep is niet geslaagd."),
        (
            "De verdachte wordt vrijgesproken.",
            "Het verzoek om vrijspraak van de verdachte wordt verworpen.",
        ),
        (
            "De vordering is toegewezen.",
            "De toewijzing van de vordering door de kantonrechter kan niet in stand blijven.",
        ),
        ("Het verzoek is afgewezen.", "Het hof vernietigt de afwijzing van het verzoek."),
        ("Het beroep slaagt.", "De slaagkans van het beroep is klein."),
        (
            "De vordering tot schadevergoeding faalt.",
            "De eiser heeft faalangst en de vordering tot schadevergoeding is ingesteld.",
        ),
    ],
)
def test_an_outcome_a_passage_negates_or_only_names_is_no_support(answer: str, chunk: str) -> None:
    """A review: with outcome words counted as their outcome by prefix, each of these passed
    ("niet geslaagd" held success; the nouns "vrijspraak", "toewijzing", "afwijzing",
    "slaagkans", "faalangst" held an outcome)."""
    (verdict,) = judge_in(chunk, [answer])
    assert not verdict.supported, (answer, chunk)


def _judge_titled(chunk: str, title: str, sentences: list[str]) -> list[SentenceResult]:
    parts = chunk_sentences(chunk)
    passages = build_passages(parts, np.zeros((len(parts), 4), dtype=np.float32))
    returned = [ReturnedChunk("c1", 1, passages, document_facts(title))]
    vectors = np.zeros((len(sentences), 4), dtype=np.float32)
    return judge_sentences(sentences, vectors, returned, 1, Calibration(0.8, 1.0))


def test_the_court_named_as_the_source_is_held_by_the_title_and_no_other_word() -> None:
    """A check of 2026-12-06: "Volgens de Hoge Raad ..." cost faithful paraphrases their
    support, since a decision's reasons never name the court that gives them. A name the
    sentence gives is held by the document's title; a word of the title the sentence uses
    in lower case is content of its own ("beroep" beside "Centrale Raad van Beroep")."""
    chunk = "De heffing wordt verlaagd met de afgevoerde mest van het heffingstijdvak zelf."
    supreme = "ECLI:NL:HR:1995:AA3120 (Hoge Raad, 1995-09-27)"
    said = "Volgens de Hoge Raad wordt de heffing verlaagd met de afgevoerde mest."
    assert _judge_titled(chunk, supreme, [said])[0].supported
    assert not _judge_titled(chunk, "ECLI:NL:CRVB:2013:1 (Centrale Raad van Beroep)", [said])[
        0
    ].supported  # another court: the name is not held
    appeal = "Het beroep verlaagt de heffing met de mest."
    assert not _judge_titled(
        chunk, "ECLI:NL:CRVB:2013:1 (Centrale Raad van Beroep, 2013-05-21)", [appeal]
    )[0].supported
