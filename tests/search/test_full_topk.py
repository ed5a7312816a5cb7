"""Invariant 3: a full top-k from what the person may see, at 0.1%, 1%, 10% and 100%."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import psycopg
import pytest
from fastapi.testclient import TestClient

from app.embeddings import vector_literal
from tests.conftest import DbHandle, Tokens, make_client
from tests.helpers import Firm

N = 10_000
WORDS = [
    "octrooi",
    "inventiviteit",
    "uitvinding",
    "nieuwheid",
    "stand",
    "techniek",
    "conclusie",
    "werkwijze",
]


@pytest.fixture(scope="module")
def corpus(module_db: DbHandle, settings: Any, embedder: Any, auth: Tokens) -> Iterator[TestClient]:
    """10,000 chunks: bob may see 10, 100, 1,000 or all of them, depending on the walls."""
    with make_client(module_db, settings, embedder) as client:
        firm = Firm(client, auth)
        for p in ("p100@firm.nl", "p10@firm.nl", "p1@firm.nl", "p01@firm.nl"):
            firm.person(p)
        firm.client_("C", "Client")
        # matter sizes in chunks; a person at selectivity s may see only the first buckets
        buckets = {"M-a": 10, "M-b": 90, "M-c": 900, "M-d": 9000}
        for matter in buckets:
            firm.matter(matter, "C")
        firm.wall(
            kind="exclusionary",
            protects={"matters": ["M-b", "M-c", "M-d"]},
            screened=["p01@firm.nl"],
        )
        firm.wall(
            kind="exclusionary", protects={"matters": ["M-c", "M-d"]}, screened=["p1@firm.nl"]
        )
        firm.wall(kind="exclusionary", protects={"matters": ["M-d"]}, screened=["p10@firm.nl"])
        rng = np.random.default_rng(3)
        with psycopg.connect(module_db.superuser_url) as su:
            groups: dict[str, str] = dict(
                su.execute("SELECT matter_id, wall_group_id FROM matter_wall_groups").fetchall()
            )
            su.execute("DELETE FROM retag_pending")
            rows = []
            ordinal = 0
            for matter, count in buckets.items():
                doc_id = su.execute(
                    "INSERT INTO documents (source, external_id, status, client_id, matter_id, "
                    "doc_type, title, source_acl_id) VALUES ('bench', %s, 'active', 'C', %s, "
                    "'other', %s, 'public') RETURNING document_id",
                    (matter, matter, matter),
                ).fetchone()[0]  # type: ignore[index]
                for _ in range(count):
                    vec = rng.normal(size=384)
                    vec /= np.linalg.norm(vec)
                    words = " ".join(rng.choice(WORDS, size=12))
                    rows.append(
                        (
                            f"bench:{matter}:{ordinal:016x}",
                            doc_id,
                            matter,
                            groups[matter],
                            ordinal,
                            f"{words} {ordinal}",
                            vector_literal(vec.astype(np.float32)),
                            f"{ordinal:064x}",
                        )
                    )
                    ordinal += 1
            with su.cursor() as cur:
                cur.executemany(
                    "INSERT INTO chunks (chunk_id, document_id, source, external_id, client_id, "
                    "matter_id, wall_group_id, source_acl_id, doc_type, ordinal, body, embedding, "
                    "content_sha256, token_count) VALUES (%s, %s, 'bench', 'x', 'C', %s, %s, "
                    "'public', 'other', %s, %s, %s::vector, %s, 20)",
                    rows,
                )
            su.execute("ANALYZE chunks")
        yield client


SELECTIVITY = {"p01@firm.nl": 10, "p1@firm.nl": 100, "p10@firm.nl": 1000, "p100@firm.nl": N}


@pytest.mark.parametrize("person", sorted(SELECTIVITY))
@pytest.mark.parametrize("mode", ["hybrid", "dense", "sparse"])
@pytest.mark.parametrize("k", [10, 100])
def test_full_top_k_at_every_selectivity(
    corpus: TestClient, auth: Tokens, person: str, mode: str, k: int
) -> None:
    firm = Firm(corpus, auth)
    out = firm.search(person, "octrooi uitvinding werkwijze", k=k, mode=mode)
    assert len(out["results"]) == min(k, SELECTIVITY[person]), out["strategy"]
    allowed = {
        "p01@firm.nl": {"M-a"},
        "p1@firm.nl": {"M-a", "M-b"},
        "p10@firm.nl": {"M-a", "M-b", "M-c"},
    }.get(person)
    if allowed is not None:
        assert {r["matter_id"] for r in out["results"]} <= allowed


@pytest.mark.parametrize("person", sorted(SELECTIVITY))
def test_forced_hnsw_falls_back_to_exact_when_it_under_returns(
    corpus: TestClient, auth: Tokens, person: str
) -> None:
    """Plain filtered HNSW cannot be trusted at low selectivity: with the HNSW form forced,
    the result is still complete, through the exact fallback where needed."""
    settings = corpus.app.state.resources.settings  # type: ignore[attr-defined]
    saved = (settings.exact_max_rows, settings.exact_max_fraction)
    settings.__dict__["exact_max_rows"] = 0
    settings.__dict__["exact_max_fraction"] = 0.0
    try:
        out = Firm(corpus, auth).search(person, "octrooi", k=100, mode="dense")
    finally:
        settings.__dict__["exact_max_rows"], settings.__dict__["exact_max_fraction"] = saved
    assert out["strategy"] in ("hnsw", "hnsw->exact")
    assert len(out["results"]) == min(100, SELECTIVITY[person])


def test_exact_results_are_the_true_nearest_neighbours(
    corpus: TestClient, auth: Tokens, module_db: DbHandle
) -> None:
    firm = Firm(corpus, auth)
    out = firm.search("p1@firm.nl", "octrooi", k=20, mode="dense")
    assert out["strategy"] == "exact"
    embedder = corpus.app.state.resources.embedder  # type: ignore[attr-defined]
    qvec = vector_literal(embedder.embed_query("octrooi"))
    with psycopg.connect(module_db.superuser_url) as su:
        truth = [
            r[0]
            for r in su.execute(
                "SELECT chunk_id FROM chunks WHERE matter_id IN ('M-a', 'M-b') "
                "ORDER BY embedding <=> %s::vector, chunk_id LIMIT 20",
                (qvec,),
            )
        ]
    assert [r["chunk_id"] for r in out["results"]] == truth
