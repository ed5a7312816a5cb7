"""Invariant 3: a full top-k from what the person may see, at 0.1%, 1%, 10% and 100%, and
invariant 1 under every dense strategy (exact, hnsw, hnsw->exact) in every mode.

The corpus is built with exact_max_rows = 2,000, so the 100% person runs HNSW without any
forcing while the others run exact; the forced cases pin the strategy they mean to test.
Every result set is checked against the allowed chunk ids computed here, from the walls
and the source ACL as the fixture defines them (not by the service).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
import pytest
from fastapi.testclient import TestClient

from app.embeddings import vector_literal
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import Firm, graph_built_after_load, ok

N = 10_000
DENIED = 1_000  # chunks of M-d in a document whose source ACL denies p100
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
# who may see which matters, straight from the walls below
ALLOWED_MATTERS = {
    "p01@firm.nl": {"M-a"},
    "p1@firm.nl": {"M-a", "M-b"},
    "p10@firm.nl": {"M-a", "M-b", "M-c"},
    "p100@firm.nl": {"M-a", "M-b", "M-c", "M-d"},
}
DENY_ACL = "acl-deny-p100"


@pytest.fixture(scope="module")
def corpus(module_db: DbHandle, settings: Any, embedder: Any, auth: Tokens) -> Iterator[TestClient]:
    """10,000 chunks: bob may see 10, 100, 1,000 or all of them, depending on the walls."""
    corpus_settings = make_settings(exact_max_rows=2_000)
    with make_client(module_db, corpus_settings, embedder) as client:
        firm = Firm(client, auth)
        for p in ("p100@firm.nl", "p10@firm.nl", "p1@firm.nl", "p01@firm.nl"):
            firm.person(p, aliases=[f"imanage:user:{p.split('@')[0]}"])
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
            su.execute(
                "INSERT INTO source_acls (source_acl_id, default_access, deny) "
                "VALUES (%s, 'public', ARRAY['imanage:user:p100'])",
                (DENY_ACL,),
            )
            rows = []
            ordinal = 0
            parts = [(m, n, "public") for m, n in buckets.items()]
            parts[-1] = ("M-d", buckets["M-d"] - DENIED, "public")
            parts.append(("M-d", DENIED, DENY_ACL))
            for matter, count, acl in parts:
                doc_id = su.execute(
                    "INSERT INTO documents (source, external_id, status, client_id, matter_id, "
                    "doc_type, title, source_acl_id) VALUES ('bench', %s, 'active', 'C', %s, "
                    "'other', %s, %s) RETURNING document_id",
                    (f"{matter}-{acl}", matter, matter, acl),
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
                            acl,
                        )
                    )
                    ordinal += 1
            # one COPY, not 10,000 INSERTs: the statistics triggers run per statement
            with (
                graph_built_after_load(su),
                su.cursor() as cur,
                cur.copy(
                    "COPY chunks (chunk_id, document_id, matter_id, wall_group_id, ordinal, "
                    "body, embedding, content_sha256, source_acl_id, source, external_id, "
                    "client_id, doc_type, token_count) FROM STDIN"
                ) as copy,
            ):
                for row in rows:
                    copy.write_row((*row, "bench", "x", "C", "other", 20))
            su.execute("ANALYZE chunks")
        yield client


@pytest.fixture(scope="module")
def allowed(corpus: TestClient, module_db: DbHandle) -> dict[str, set[str]]:
    """Each person's visible chunk ids, from the definitions above (superuser, no RLS)."""
    out: dict[str, set[str]] = {}
    with psycopg.connect(module_db.superuser_url) as su:
        for person, matters in ALLOWED_MATTERS.items():
            denied = DENY_ACL if person == "p100@firm.nl" else ""
            out[person] = {
                r[0]
                for r in su.execute(
                    "SELECT chunk_id FROM chunks WHERE matter_id = ANY(%s) AND source_acl_id <> %s",
                    (sorted(matters), denied),
                )
            }
    assert {p: len(ids) for p, ids in out.items()} == {
        "p01@firm.nl": 10,
        "p1@firm.nl": 100,
        "p10@firm.nl": 1000,
        "p100@firm.nl": N - DENIED,
    }
    return out


@contextmanager
def overridden(client: TestClient, **values: Any) -> Iterator[None]:
    """Temporarily change the running app's settings (strategy thresholds)."""
    settings = client.app.state.resources.settings  # type: ignore[attr-defined]
    saved = {name: getattr(settings, name) for name in values}
    settings.__dict__.update(values)
    try:
        yield
    finally:
        settings.__dict__.update(saved)


def _dense_strategy(out: dict[str, Any]) -> str:
    """The dense strategy that ran ("none" when the mode has no dense leg), without the
    sparse leg's form ("+postings", "+impact", "+full-sparse")."""
    return str(out["strategy"]).split("+")[0]


def _check(out: dict[str, Any], allowed_ids: set[str], k: int) -> None:
    ids = [r["chunk_id"] for r in out["results"]]
    assert len(ids) == len(set(ids))
    assert set(ids) <= allowed_ids, (out["strategy"], sorted(set(ids) - allowed_ids)[:5])
    assert len(ids) == min(k, len(allowed_ids)), out["strategy"]


@pytest.mark.parametrize("person", sorted(ALLOWED_MATTERS))
@pytest.mark.parametrize("mode", ["hybrid", "dense", "sparse"])
@pytest.mark.parametrize("k", [10, 100])
def test_full_top_k_at_every_selectivity(
    corpus: TestClient,
    auth: Tokens,
    allowed: dict[str, set[str]],
    person: str,
    mode: str,
    k: int,
) -> None:
    out = Firm(corpus, auth).search(person, "octrooi uitvinding werkwijze", k=k, mode=mode)
    _check(out, allowed[person], k)
    expected = "none" if mode == "sparse" else "hnsw" if person == "p100@firm.nl" else "exact"
    assert _dense_strategy(out) == expected


FORCE_HNSW = {"exact_max_rows": 0}
# (person, settings, the strategy that must run): HNSW that completes on its own, and HNSW
# whose scan budget is too small for 0.1% selectivity, so it under-returns and falls back
STRATEGIES = [
    ("p1@firm.nl", {}, "exact"),
    ("p10@firm.nl", {}, "exact"),
    ("p100@firm.nl", {}, "hnsw"),
    ("p10@firm.nl", FORCE_HNSW, "hnsw"),
    ("p100@firm.nl", FORCE_HNSW, "hnsw"),
    ("p01@firm.nl", {**FORCE_HNSW, "hnsw_max_scan_tuples_cap": 1000}, "hnsw->exact"),
    ("p1@firm.nl", {**FORCE_HNSW, "hnsw_max_scan_tuples_cap": 1000}, "hnsw->exact"),
]


@pytest.mark.parametrize("mode", ["dense", "hybrid", "sparse"])
@pytest.mark.parametrize(("person", "values", "strategy"), STRATEGIES)
def test_every_strategy_returns_only_allowed_chunks(
    corpus: TestClient,
    auth: Tokens,
    allowed: dict[str, set[str]],
    person: str,
    values: dict[str, Any],
    strategy: str,
    mode: str,
) -> None:
    """Forced or natural, each dense strategy returns a subset of the allowed set, a full
    top-k, and the strategy the case is meant to exercise (sparse has no dense leg)."""
    with overridden(corpus, **values):
        out = Firm(corpus, auth).search(person, "octrooi uitvinding werkwijze", k=100, mode=mode)
    _check(out, allowed[person], 100)
    assert _dense_strategy(out) == ("none" if mode == "sparse" else strategy)
    if strategy == "hnsw->exact" and mode != "sparse":
        # the audit row names exactly the results of the fallback, not the short HNSW run
        audited = ok(
            corpus.get(
                f"/v1/audit/retrievals/{out['retrieval_id']}",
                headers=auth("co@firm.nl", "compliance"),
            )
        )
        assert audited["strategy"] == out["strategy"]
        assert _dense_strategy(audited) == "hnsw->exact"
        assert audited["result_count"] == len(out["results"])
        assert [(r["rank"], r["chunk_id"], r["content_sha256"]) for r in audited["results"]] == [
            (r["rank"], r["chunk_id"], r["content_sha256"]) for r in out["results"]
        ]


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


@pytest.mark.parametrize("person", sorted(ALLOWED_MATTERS))
@pytest.mark.parametrize("mode", ["sparse", "hybrid"])
def test_the_sparse_legs_index_choice_changes_nothing_but_speed(
    corpus: TestClient, auth: Tokens, allowed: dict[str, set[str]], person: str, mode: str
) -> None:
    """The sparse leg's wall test through the btree (small allowed sets) and as a filter
    after the GIN scan (large ones) return the same allowed rows, in the same order."""
    outs = []
    for fraction in (1.0, 0.0):  # btree at every selectivity, then at none
        with overridden(corpus, sparse_group_index_max_fraction=fraction):
            out = Firm(corpus, auth).search(
                person, "octrooi uitvinding werkwijze", k=100, mode=mode
            )
        _check(out, allowed[person], 100)
        outs.append([(r["chunk_id"], r["score"]) for r in out["results"]])
    assert outs[0] == outs[1]
