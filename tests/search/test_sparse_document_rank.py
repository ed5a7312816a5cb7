"""The sparse leg ranks documents (BM25 over a document's chunks, from its impact postings),
and the per-document lengths follow every change to the chunks."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from app.auth.service import Principal
from app.errors import AppError
from app.search.schemas import SearchIn
from app.search.service import SearchOverrides, run_search
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import Firm, ok

FILLER = (
    "De rechtbank overweegt dat partijen uitvoerig hebben gecorrespondeerd over de levering "
    "van de goederen, de facturen en de betalingstermijnen die in de overeenkomst staan. "
)
QUERY = "dwangsom huurachterstand ontbinding woonruimte"


def _parts(*sentences: str) -> str:
    """One paragraph per sentence, each long enough to be a chunk of its own."""
    return "\n\n".join(f"Deel {n}. {s} " + FILLER * 6 for n, s in enumerate(sentences, 1))


def _stats_match_chunks(db: DbHandle) -> list[tuple[int, int, int]]:
    with psycopg.connect(db.superuser_url) as conn:
        stats = conn.execute(
            "SELECT document_id, n_chunks, n_tokens FROM search_document_stats ORDER BY 1"
        ).fetchall()
        chunks = conn.execute(
            "SELECT document_id, count(*), sum(token_count) FROM chunks GROUP BY 1 ORDER BY 1"
        ).fetchall()
        totals = conn.execute(
            "SELECT n_documents, n_document_tokens FROM corpus_stats WHERE id = 1"
        ).fetchone()
    assert [tuple(int(v) for v in r) for r in stats] == [tuple(int(v) for v in r) for r in chunks]
    # the ranking reads the corpus's document count and total length from one row, which
    # its triggers must keep equal to the table
    assert totals is not None
    assert (int(totals[0]), int(totals[1])) == (len(stats), sum(int(r[2]) for r in stats))
    return [tuple(int(v) for v in r) for r in stats]  # type: ignore[misc]


def test_a_document_whose_chunks_cover_the_question_outranks_one_dense_chunk(
    client: Any, auth: Tokens
) -> None:
    """ "spread" holds each of the four query words in a chunk of its own; "dense" holds two
    of them in one chunk. A chunk ranking would put dense's chunk first (two words against
    one); ranked by document, spread answers more of the question and comes first."""
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.client_("C", "Client")
    firm.matter("M", "C", team=["alice@firm.nl"])
    firm.document(
        "spread",
        _parts(
            "Er is een dwangsom opgelegd.",
            "De huurachterstand liep op.",
            "De ontbinding werd gevorderd.",
            "Het ging om woonruimte.",
        ),
        client_id="C",
        matter_id="M",
    )
    firm.document(
        "dense",
        _parts("De dwangsom en de huurachterstand.", "Niets.", "Nog niets."),
        client_id="C",
        matter_id="M",
    )
    hits = firm.search("alice@firm.nl", QUERY, mode="sparse", k=10)["results"]
    docs = [h["document"]["external_id"] for h in hits]
    assert docs[0] == "spread"
    assert docs.count("spread") == 4  # every chunk holding a query word is listed


def test_document_lengths_follow_ingestion_replacement_and_deletion(
    db: DbHandle, client: Any, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.client_("C", "Client")
    firm.matter("M", "C", team=["alice@firm.nl"])
    firm.document("a", _parts("Een.", "Twee.", "Drie."), client_id="C", matter_id="M")
    firm.document("b", "Kort.", client_id="C", matter_id="M")
    before = _stats_match_chunks(db)
    assert len(before) == 2
    assert sorted(n for _, n, _ in before)[-1] >= 3

    # re-ingested shorter: the old chunks go, the length follows
    firm.document("a", "Nu kort.", client_id="C", matter_id="M")
    after = _stats_match_chunks(db)
    assert sorted(n for _, n, _ in after) == [1, 1]

    admin = auth("admin@firm.nl", "admin")
    ok(client.delete("/v1/documents/api/a", headers=admin))
    assert len(_stats_match_chunks(db)) == 1


def test_a_dense_weight_of_0_runs_no_dense_leg_and_encodes_no_question(
    db: DbHandle, auth: Tokens, embedder: Any
) -> None:
    """Dense weight 0 (MiniLM's calibrated weight, docs/quality.md): hybrid is the sparse
    leg's ranking, scores and all, the question is never encoded, and a question with no
    word in common with the corpus finds nothing. With a weight above 0 the dense leg runs
    and answers that question."""
    with make_client(db, make_settings(dense_weight=0.0), embedder) as client:
        firm = Firm(client, auth)
        firm.person("alice@firm.nl")
        firm.client_("C", "Client")
        firm.matter("M", "C", team=["alice@firm.nl"])
        firm.document("one", "De dwangsom en de huurachterstand.", client_id="C", matter_id="M")
        firm.document("two", "Alleen de dwangsom.", client_id="C", matter_id="M")
        firm.document(
            "three", "Een brief over de levering van goederen.", client_id="C", matter_id="M"
        )

        def hits(query: str, mode: str) -> list[tuple[str, Any, Any, Any]]:
            found = firm.search("alice@firm.nl", query, mode=mode, k=10)
            return [
                (
                    h["document"]["external_id"],
                    h["score"],
                    h["ranks"]["sparse"],
                    h["ranks"]["dense"],
                )
                for h in found["results"]
            ]

        encoded = embedder.encode_calls
        sparse = hits("dwangsom huurachterstand", "sparse")
        assert [d for d, *_ in sparse] == ["one", "two"]
        assert hits("dwangsom huurachterstand", "hybrid") == sparse  # ids, scores, ranks
        assert hits("landlord complaint", "hybrid") == []
        assert embedder.encode_calls == encoded  # no question was encoded

        # an evaluation's overrides cannot turn both legs off either
        resources = client.app.state.resources  # type: ignore[attr-defined]
        alice = Principal("alice@firm.nl", frozenset({"lawyer"}))
        with (
            resources.database.transaction() as conn,
            pytest.raises(AppError, match="no leg"),
        ):
            run_search(
                conn,
                resources,
                alice,
                SearchIn(query="dwangsom"),
                qvec=None,
                overrides=SearchOverrides(sparse_weight=0.0),
            )

    with make_client(db, make_settings(dense_weight=0.5), embedder) as client:
        found = Firm(client, auth).search("alice@firm.nl", "landlord complaint", k=10)
        assert embedder.encode_calls == encoded + 1
        assert found["results"]
        assert all(h["ranks"]["dense"] is not None for h in found["results"])
