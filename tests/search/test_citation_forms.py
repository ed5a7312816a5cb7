"""Statute citations as decisions write them become one token (migration 20261210_0061,
sql/functions/legal_normalize.v2.sql). A check of 2026-12-06 found 26 of the 35 Awb and BW
citations in the demo's decisions without one, so "art. 6:18 Awb" did not find the decision
that turns on articles 6:18 and 6:19 Awb."""

from __future__ import annotations

import psycopg
import pytest
from fastapi.testclient import TestClient

from app.search.service import analyze_configured
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm


@pytest.mark.parametrize(
    ("written", "tokens"),
    [
        ("artikel 8:29, eerste lid, van de Awb", {"art8x29awb"}),
        ("artikel 8:29, tweede en derde lid, aanhef en onder a, Awb", {"art8x29awb"}),
        ("artikel 6:19 van de Algemene wet bestuursrecht (Awb)", {"art6x19awb"}),
        ("de artikelen 6:18 en 6:19, eerste lid, van de Awb", {"art6x18awb", "art6x19awb"}),
        ("de artikelen 8:72, 8:74 en 8:75 Awb", {"art8x72awb", "art8x74awb", "art8x75awb"}),
        ("artikel 6:162 van het Burgerlijk Wetboek", {"art6x162bw"}),
        ("6:162 (oud) BW", {"art6x162bw"}),
        ("6:162BW", {"art6x162bw"}),
        ("art. 6: 162 BW", {"art6x162bw"}),
        ("art. 6:162 lid 2 e.v. BW", {"art6x162bw"}),
        ("artikel 162 van Boek 6 BW", {"art6x162bw"}),
        ("Boek 6 artikel 248", {"art6x248bw"}),
        ("Boek 1 artikel 3 van het Wetboek van Burgerlijke Rechtsvordering", {"art3rv"}),
        ("Artikel 5 Handelsnaamwet", {"art5hnw"}),
        ("art. 5 Hnw", {"art5hnw"}),
        ("artikel 53 Rijksoctrooiwet 1995", {"art53row"}),
        ("art. 10 Wob", {"art10wob"}),
        ("artikel 10 van de Wet openbaarheid van bestuur", {"art10wob"}),
        ("art. 81 RO", {"art81ro"}),
        ("Artikel 5:24 van de Algemene wet bestuursrecht (hierna: Awb) luidt", {"art5x24awb"}),
        ("artikel 2:23, lid 1, (oud) BW", {"art2x23bw"}),
        ("art. 56 EPC", {"art56eov"}),
        (
            "de artikelen 6:18 en 6:19, eerste lid, in verbinding met artikel 6:24 van de "
            "Algemene wet bestuursrecht",
            {"art6x18awb", "art6x19awb", "art6x24awb"},
        ),
        ("artikel 2:276, letter c, (oud) van het Burgerlijk Wetboek (hierna: BW)", {"art2x276bw"}),
        ("artikel 6:162 jo. 6:163 BW", {"art6x162bw", "art6x163bw"}),
        ("art. 23 E-wet", {"art23ew"}),
        ("art. 23 Elektriciteitswet 1998", {"art23ew"}),
        # a review: what stands before a citation keeps its own (an ECLI's ordinal, a time)
        ("ECLI:NL:HR:2019:1278, artikel 6:18 Awb", {"art6x18awb"}),
        ("om 10:30, artikel 8:29 Awb", {"art8x29awb"}),
        ("Johannes 3:16 juncto artikel 6:18 Awb", {"art6x18awb"}),
        ("de score was 2:1 of art. 6:18 Awb", {"art6x18awb"}),
        ("artikel 3 van boek 2 van de Awb", set()),
        ("artt. 3:40 en 3:44 BW", {"art3x40bw", "art3x44bw"}),
        # version 1's forms, unchanged
        ("art. 56 EOV", {"art56eov"}),
        ("BW art. 6:162", {"art6x162bw"}),
        ("artikel 6:162 lid 1 BW", {"art6x162bw"}),
    ],
)
def test_a_citation_as_written_becomes_its_token(
    db: DbHandle, written: str, tokens: set[str]
) -> None:
    with psycopg.connect(db.superuser_url) as conn:
        (lexemes,) = conn.execute(
            "SELECT tsvector_to_array(ewall_nl_tsvector(%s))", (written,)
        ).fetchone()  # type: ignore[misc]
    citations = {x for x in lexemes if x.startswith("art") and any(c.isdigit() for c in x)}
    assert citations == tokens, lexemes
    if "ECLI" in written:
        assert "eclinlhr20191278" in lexemes, lexemes


@pytest.mark.parametrize(
    "text", ["om 10:30 uur", "de stand was 2:1", "artikel 6 en 7", "6:1 en 6:2", "om 10:30 en"]
)
def test_what_is_no_citation_gets_no_token(db: DbHandle, text: str) -> None:
    with psycopg.connect(db.superuser_url) as conn:
        (lexemes,) = conn.execute(
            "SELECT tsvector_to_array(ewall_nl_tsvector(%s))", (text,)
        ).fetchone()  # type: ignore[misc]
    assert not [x for x in lexemes if x.startswith("art") and any(c.isdigit() for c in x)]


def test_a_decision_citing_an_article_in_a_list_is_found_by_that_article(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.client_("C", "Client")
    firm.matter("M", "C", team=["alice@firm.nl"])
    # two decisions of one length: one cites the article once, the other writes "Awb"
    # thirty times and never cites it
    firm.document(
        "lijst",
        "Gelet op de artikelen 6:18 en 6:19, eerste lid, van de Awb richt het beroep zich van "
        "rechtswege mede tegen het nieuwe besluit. "
        + " ".join(f"Het college heeft regel {i} van het besluit toegepast." for i in range(15)),
        client_id="C",
        matter_id="M",
    )
    firm.document(
        "awb",
        " ".join(f"Volgens de Awb geldt regel {i} van de Awb voor beroep." for i in range(15)),
        client_id="C",
        matter_id="M",
    )
    for i in range(10):  # the rest of the corpus: the code is not rare, the citation is
        firm.document(
            f"ander-{i}",
            f"Een uitspraak over huur en koop nummer {i}.",
            client_id="C",
            matter_id="M",
        )
    found = firm.documents_found("alice@firm.nl", "art. 6:18 Awb", mode="sparse", k=10)
    # the code beside the citation weighs as a synonym does: the decision that writes "Awb"
    # thirty times came first
    assert found[:1] == ["lijst"], found


def test_a_code_beside_its_citation_weighs_as_a_synonym_does(db: DbHandle) -> None:
    """ "art. 6:18 Awb" reads art6x18awb and awb: the citation says which law already, and a
    decision that writes "Awb" thirty times outranked the one citing art. 6:18 (the demo's
    ECLI:NL:CRVB:2013:1886 was not in the top 10; now first). A code typed on its own keeps
    its weight."""
    with db.database.engine.connect() as conn:
        cited, alone = (
            analyze_configured(conn, q, wall_groups=["open"], source_acl_ids=["public"], full=True)
            for q in ("art. 6:18 Awb", "bezwaar Awb")
        )
    weights = dict(zip(cited.rank_lexemes, cited.rank_weights, strict=True))
    assert (weights["art6x18awb"], weights["awb"]) == (1.0, 0.3), weights
    assert dict(zip(alone.rank_lexemes, alone.rank_weights, strict=True))["awb"] == 1.0


def test_a_single_letter_neither_matches_nor_ranks_beside_other_words(db: DbHandle) -> None:
    """ "12/2272 WWB-G" put a statute with items a) to g) first: its "g" matched them (a
    check of 2026-12-06). A question of single letters alone keeps them."""
    with db.database.engine.connect() as conn:
        cased, letters = (
            analyze_configured(conn, q, wall_groups=["open"], source_acl_ids=["public"], full=True)
            for q in ("12/2272 WWB-G", "a b")
        )
        digit = analyze_configured(
            conn,
            "richtlijn 5 artikel 3",
            wall_groups=["open"],
            source_acl_ids=["public"],
            full=True,
        )
    assert "g" not in cased.rank_lexemes and "'g'" not in cased.match_tsq, cased
    assert sorted(letters.rank_lexemes) == ["a", "b"], letters
    # a single digit is no letter: "richtlijn 5" keeps its number (a review)
    assert {"5", "3"} <= set(digit.rank_lexemes), digit
