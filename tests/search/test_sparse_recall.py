"""The sparse leg's recall against brute force (issue 29, point 3): bench/sparse_recall.py
scores EVERY chunk the person may see with the same formula, from the chunks themselves
(not the postings), and the shipped sparse search's top-10 must be that reference's top-10,
in the same order, in each of its forms (every matching document scored, every visible
posting summed, and impact order with its stop). The reference itself is checked on a tiny case against BM25 written out in
Python."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime

import psycopg
import pytest
from fastapi.testclient import TestClient

from app.search.service import analyze_configured
from app.walls.access import access_for, apply
from bench.sparse_recall import Reference, reference_top
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, retag

LAWYER = "alice@firm.nl"
FILLER = (
    "De rechtbank overweegt dat partijen uitvoerig hebben gecorrespondeerd over de levering "
    "van de goederen, de facturen en de betalingstermijnen die in de overeenkomst staan. "
)


def _firm(client: TestClient, auth: Tokens) -> Firm:
    """alice works on M-OPEN; M-SECRET is behind a wall that screens her."""
    firm = Firm(client, auth)
    firm.person(LAWYER)
    firm.person("bob@firm.nl")
    firm.client_("C-1")
    firm.client_("C-2")
    firm.matter("M-OPEN", "C-1", team=[LAWYER, "bob@firm.nl"])
    firm.matter("M-SECRET", "C-2", team=["bob@firm.nl"])
    firm.wall(kind="exclusionary", protects={"matters": ["M-SECRET"]}, screened=[LAWYER])
    retag(client)
    return firm


def _reference(client: TestClient, query: str, *, full: bool = False, k: int = 10) -> Reference:
    resources = client.app.state.resources  # type: ignore[attr-defined]
    with resources.database.transaction() as conn:
        resolution = resources.require_resolver().resolve(
            resources.database, LAWYER, datetime.now(UTC)
        )
        access = access_for(conn, resolution)
        apply(conn, access)
        groups, acls = list(access.wall_groups), list(access.source_acl_ids)
        analysis = analyze_configured(
            conn, query, wall_groups=groups, source_acl_ids=acls, full=full
        )
        return reference_top(conn, wall_groups=groups, source_acl_ids=acls, analysis=analysis, k=k)


def _shipped(firm: Firm, query: str, form: str = "none") -> list[str]:
    answer = firm.search(LAWYER, query, mode="sparse", k=10)
    assert answer["strategy"] == form
    return [r["chunk_id"] for r in answer["results"]]


def test_reference_is_bm25_over_every_allowed_match(
    db: DbHandle, client: TestClient, auth: Tokens, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hand-checkable: one query word, single-chunk documents with 3 and 1 occurrences, a
    two-chunk document, a document without the word and a walled one full of it. The
    reference's scores are BM25 over documents as written out here (the IDF over the chunks
    alice may see, her document's length against the fixed reference length), chunk n of a
    document gets score / n, and nothing behind the wall is counted or returned."""
    firm = _firm(client, auth)
    docs = {
        "drie-keer": "De dwangsom, de dwangsom en nog eens de dwangsom werd verbeurd.",
        "een-keer": "De rechter legde een dwangsom op aan de gedaagde partij.",
        "zonder": "De koper vordert schadevergoeding wegens gebreken aan de woning.",
        "twee-delen": (
            f"Deel 1. De dwangsom en de hoogte van de dwangsom. {FILLER * 6}\n\n"
            f"Deel 2. Een dwangsom blijft verschuldigd. {FILLER * 6}"
        ),
    }
    for external_id, body in docs.items():
        firm.document(external_id, body, client_id="C-1", matter_id="M-OPEN")
    firm.document(
        "verborgen", "dwangsom dwangsom dwangsom " * 20, client_id="C-2", matter_id="M-SECRET"
    )

    ref = _reference(client, "dwangsom")

    with psycopg.connect(db.superuser_url) as conn:
        rows = conn.execute(
            """
            SELECT c.chunk_id, d.external_id, c.token_count,
                   coalesce(array_length((SELECT u.positions FROM unnest(c.body_tsv) AS u
                                          WHERE u.lexeme = (ewall_query_lexemes('dwangsom'))[1]),
                                         1), 0) AS tf
            FROM chunks c JOIN documents d ON d.document_id = c.document_id
            WHERE NOT c.suppressed
            ORDER BY c.chunk_id
            """
        ).fetchall()
    visible = [r for r in rows if r[1] != "verborgen"]
    assert {r[1] for r in visible} == set(docs)
    by_doc: dict[str, list[tuple[str, int, int]]] = {}
    for chunk_id, external_id, tokens, tf in visible:
        by_doc.setdefault(external_id, []).append((str(chunk_id), int(tokens), int(tf)))
    # the two parts are chunks of their own (the filler may spill into a third)
    assert sum(1 for _, _, tf in by_doc["twee-delen"] if tf) == 2
    matching = {d: parts for d, parts in by_doc.items() if any(tf for _, _, tf in parts)}
    assert set(matching) == {"drie-keer", "een-keer", "twee-delen"}
    # the IDF over alice's chunks: how many she may see, how many of them hold the word
    n_chunks = len(visible)
    df = sum(1 for r in visible if r[3])
    idf = math.log(1 + (n_chunks - df + 0.5) / (df + 0.5))
    expected: dict[str, float] = {}
    for parts in matching.values():
        tf = sum(p[2] for p in parts)
        dl = sum(p[1] for p in parts)
        score = idf * tf * 4.0 / (tf + 3.0 * (0.1 + 0.9 * dl / 2000.0))
        # inside a document: chunks by their own saturated tf, then score / rank
        ordered = sorted((p for p in parts if p[2]), key=lambda p: (-p[2] / (p[2] + 1.2), p[0]))
        for rank, (chunk_id, _, _) in enumerate(ordered, 1):
            expected[chunk_id] = score / rank

    assert ref.pool_size == len(expected) == 4  # the walled chunk is not counted
    assert sorted(ref.ids) == sorted(expected)
    for chunk_id, relevance in zip(ref.ids, ref.relevance, strict=True):
        assert math.isclose(relevance, expected[chunk_id], rel_tol=1e-6), chunk_id
    assert ref.relevance == sorted(ref.relevance, reverse=True)
    # three occurrences outrank one in documents of about the same length
    first_doc = next(d for d, parts in matching.items() if ref.ids[0] in {p[0] for p in parts})
    assert first_doc in ("drie-keer", "twee-delen")
    # and the shipped leg agrees, in every form
    assert _shipped(firm, "dwangsom") == ref.ids
    monkeypatch.setattr("app.search.service.SPARSE_ROW_TEST_MIN_SHARE", 0)  # the GIN index
    assert _shipped(firm, "dwangsom") == ref.ids
    monkeypatch.setattr("app.search.service.SPARSE_FILTER_FIRST_MAX", 0)
    assert _shipped(firm, "dwangsom", "none+postings") == ref.ids
    monkeypatch.setattr("app.search.service.SPARSE_SUM_MAX_DF", -1)
    monkeypatch.setattr("app.search.service.SPARSE_IMPACT_MAX_LEXEMES", 1 << 30)
    assert _shipped(firm, "dwangsom", "none+impact") == ref.ids


WORDS = [
    "dwangsom",
    "huurachterstand",
    "ontbinding",
    "woonruimte",
    "octrooi",
    "inbreuk",
    "fundering",
    "koper",
    "verkoper",
    "werkgever",
    "werknemer",
    "vergoeding",
    "kantonrechter",
    "verjaring",
    "aansprakelijkheid",
    "schade",
    "beslag",
    "executie",
    "hoger",
    "beroep",
    "cassatie",
    "arbitrage",
    "mediation",
    "faillissement",
    "curator",
    "pand",
    "hypotheek",
    "borgtocht",
    "geheimhouding",
    "concurrentiebeding",
]


def _text(rng: random.Random, words: int) -> str:
    # a Zipf-like mix: early words common, late ones rare
    weights = [1 / (i + 1) for i in range(len(WORDS))]
    picked = rng.choices(WORDS, weights=weights, k=words)
    return "De rechtbank overweegt: " + " ".join(picked) + "."


@pytest.mark.parametrize("form", ["none", "none+gin", "none+postings", "none+impact"])
def test_shipped_sparse_top10_is_the_brute_force_top10(
    client: TestClient, auth: Tokens, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    """A seeded corpus (alice's matter and a walled one, single- and multi-chunk
    documents): for rare, common and mixed questions the sparse search's top-10 is the
    reference's, ids and order, whether every matching document is scored (its match
    tested on each allowed row, as for a small allowed set, or read from the GIN index, as
    for a rare match: forced here) or the best parts come from the postings alone, every
    visible posting summed or read in impact order (both forced), and the reference without
    the match budget and the common-word cut agrees too (the ranking lexemes are the
    same)."""
    if form == "none+gin":
        monkeypatch.setattr("app.search.service.SPARSE_ROW_TEST_MIN_SHARE", 0)
        form = "none"
    if form in ("none+postings", "none+impact"):
        monkeypatch.setattr("app.search.service.SPARSE_FILTER_FIRST_MAX", 0)
    if form == "none+impact":
        monkeypatch.setattr("app.search.service.SPARSE_SUM_MAX_DF", -1)
        monkeypatch.setattr("app.search.service.SPARSE_IMPACT_MAX_LEXEMES", 1 << 30)
    firm = _firm(client, auth)
    rng = random.Random(29)
    for d in range(24):
        if d % 4 == 0:
            body = "\n\n".join(
                f"Deel {p}. {_text(rng, 12)} {FILLER * 6}" for p in range(1, rng.randint(2, 4))
            )
        else:
            body = _text(rng, rng.randint(8, 40))
        firm.document(f"open-{d}", body, client_id="C-1", matter_id="M-OPEN")
    for d in range(6):
        firm.document(f"secret-{d}", _text(rng, 60) * 3, client_id="C-2", matter_id="M-SECRET")
    queries = [
        "dwangsom",
        "dwangsom huurachterstand ontbinding",  # the corpus's most common words
        "concurrentiebeding geheimhouding",  # its rarest
        "wat zegt de kantonrechter over de verjaring van schade bij faillissement",
        "hypotheek borgtocht pand curator",
    ]
    full_tops = 0
    for query in queries:
        ref = _reference(client, query)
        lifted = _reference(client, query, full=True)
        assert ref.pool_size > 0
        full_tops += len(ref.ids) == 10
        got = _shipped(firm, query, form)
        assert got == ref.ids, query
        assert lifted.ids == ref.ids, query
    assert full_tops >= 3  # the comparison is over full top-10s, not near-empty lists
