"""Partitioned chunks (hash by document) and halfvec storage: the relayout keeps everything
that references chunks, and the search and wall safety net holds on every layout.

The safety-net tests of tests/search and tests/walls are imported below and run again here
against databases converted with ``ewall_chunks_relayout`` (the module's ``db`` and
``module_db`` fixtures override the shared ones): 4 hash partitions with vector storage, and
4 partitions with halfvec storage.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import psycopg
import pytest
from alembic import command
from fastapi.testclient import TestClient
from psycopg import sql
from sqlalchemy import create_engine, pool, text

from app.chunks import service
from app.db import migrate
from app.db.engine import sqlalchemy_url
from app.embeddings import vector_literal
from app.settings import Settings
from tests import pg
from tests.conftest import DbHandle, Tokens, fresh_database
from tests.helpers import Firm, graph_built_after_load
from tests.search import test_dense_graph as _dense_graph
from tests.search import test_full_topk as _full_topk
from tests.search import test_lexeme_cut as _lexeme_cut
from tests.search import test_search_api as _search_api
from tests.walls import test_backstop_during_retag as _backstop
from tests.walls import test_ingest_into_walls as _ingest_walls
from tests.walls import test_walls_api as _walls_api

# fixtures and safety-net tests of tests/search and tests/walls, collected here again so
# that they run against this module's db / module_db (the relaid-out databases)
allowed = _full_topk.allowed
corpus = _full_topk.corpus
overridden = _full_topk.overridden
firm = _search_api.firm
worker_client = _walls_api.worker_client
test_full_top_k_at_every_selectivity = _full_topk.test_full_top_k_at_every_selectivity
test_exact_results_are_the_true_nearest_neighbours = (
    _full_topk.test_exact_results_are_the_true_nearest_neighbours
)
test_walls_and_source_acls_both_apply = _search_api.test_walls_and_source_acls_both_apply
test_rls_backstop_sees_nothing_even_when_the_predicate_is_forgotten = (
    _search_api.test_rls_backstop_sees_nothing_even_when_the_predicate_is_forgotten
)
test_no_leaks_for_random_walls = _search_api.test_no_leaks_for_random_walls
test_backstop_alone_hides_pending_matters_and_source_denies = (
    _backstop.test_backstop_alone_hides_pending_matters_and_source_denies
)
test_documents_pushed_into_walled_matters_are_hidden_before_any_retag = (
    _ingest_walls.test_documents_pushed_into_walled_matters_are_hidden_before_any_retag
)
test_retag_resumes_after_a_crash = _walls_api.test_retag_resumes_after_a_crash
# migration 20261203_0044 (ALTER COLUMN ... SET EXPRESSION) reaches every partition
test_the_migration_and_its_downgrade_rebuild_column_statistics_and_rules = (
    _lexeme_cut.test_the_migration_and_its_downgrade_rebuild_column_statistics_and_rules
)
# migration 20261204_0049 (REINDEX CONCURRENTLY) reaches every partition's graph
test_the_graph_is_built_with_ef_construction_128_and_the_downgrade_takes_it_back = (
    _dense_graph.test_the_graph_is_built_with_ef_construction_128_and_the_downgrade_takes_it_back
)

LAYOUTS = [(4, "vector"), (4, "halfvec")]
LAYOUT_IDS = [f"{n}p-{s}" for n, s in LAYOUTS]


def _relayout(handle: DbHandle, partitions: int, storage: str) -> service.Relayout:
    return service.relayout(handle.superuser_url, partitions, storage)


@pytest.fixture(scope="module", params=LAYOUTS, ids=LAYOUT_IDS)
def module_layout(request: pytest.FixtureRequest) -> tuple[int, str]:
    return tuple(request.param)


@pytest.fixture(params=LAYOUTS, ids=LAYOUT_IDS)
def layout(request: pytest.FixtureRequest) -> tuple[int, str]:
    return tuple(request.param)


@pytest.fixture(scope="module")
def module_db(
    pg_server: pg.Server, settings: Settings, module_layout: tuple[int, str]
) -> Iterator[DbHandle]:
    with fresh_database(pg_server, settings) as handle:
        _relayout(handle, *module_layout)
        yield handle


@pytest.fixture
def db(pg_server: pg.Server, settings: Settings, layout: tuple[int, str]) -> Iterator[DbHandle]:
    with fresh_database(pg_server, settings) as handle:
        _relayout(handle, *layout)
        yield handle


# --- the relayout itself --------------------------------------------------------------------


def _catalog(url: str) -> dict[str, Any]:
    with psycopg.connect(url) as su:
        one = su.execute
        return {
            "partitions": sorted(
                r[0]
                for r in one(
                    "SELECT c.relname FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid "
                    "WHERE h.inhparent = 'chunks'::regclass"
                )
            ),
            "storage": one(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'"
            ).fetchone()[0],  # type: ignore[index]
            "triggers": sorted(
                r[0]
                for r in one(
                    "SELECT tgname FROM pg_trigger WHERE tgrelid = 'chunks'::regclass "
                    "AND NOT tgisinternal"
                )
            ),
            "policies": sorted(
                tuple(r)
                for r in one(
                    "SELECT policyname, cmd, qual, with_check FROM pg_policies "
                    "WHERE tablename = 'chunks'"
                )
            ),
            "rls": one(
                "SELECT relrowsecurity, relforcerowsecurity FROM pg_class "
                "WHERE oid = 'chunks'::regclass"
            ).fetchone(),
            "indexes": sorted(
                r[0]
                for r in one(
                    "SELECT indexdef FROM pg_indexes WHERE tablename = 'chunks' "
                    "AND indexname <> 'pk_chunks'"
                )
            ),
            "fks": sorted(
                r[0]
                for r in one(
                    "SELECT conname FROM pg_constraint WHERE conrelid = 'chunks'::regclass "
                    "AND contype = 'f'"
                )
            ),
            "grants": sorted(
                tuple(r)
                for r in one(
                    "SELECT grantee, privilege_type FROM information_schema.role_table_grants "
                    "WHERE table_name = 'chunks'"
                )
            ),
        }


def test_relayout_moves_everything_that_references_chunks(
    client: TestClient, auth: Tokens, db: DbHandle, layout: tuple[int, str]
) -> None:
    partitions, storage = layout
    firm = Firm(client, auth)
    firm.person("ann@firm.nl")
    firm.client_("C", "Client")
    firm.matter("M-1", "C")
    for i in range(6):
        firm.document(
            f"d{i}", f"octrooi uitvinding werkwijze nummer {i}.", client_id="C", matter_id="M-1"
        )
    assert len(firm.search("ann@firm.nl", "octrooi", k=10)["results"]) == 6
    before = _catalog(db.superuser_url)
    assert len(before["partitions"]) == partitions
    assert before["storage"] == f"{storage}(384)"
    # each partition has its own HNSW and GIN index (the parent's, created per partition)
    with psycopg.connect(db.superuser_url) as su:
        per_partition = {
            (r[0], r[1])
            for r in su.execute(
                "SELECT t.relname, am.amname FROM pg_inherits h "
                "JOIN pg_class t ON t.oid = h.inhrelid JOIN pg_index x ON x.indrelid = t.oid "
                "JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am am ON am.oid = i.relam "
                "WHERE h.inhparent = 'chunks'::regclass"
            )
        }
        opclasses = {
            r[0]
            for r in su.execute(
                "SELECT opc.opcname FROM pg_index x JOIN pg_opclass opc "
                "ON opc.oid = x.indclass[0] JOIN pg_class i ON i.oid = x.indexrelid "
                "JOIN pg_am am ON am.oid = i.relam WHERE am.amname = 'hnsw' "
                "AND (x.indrelid = 'chunks'::regclass OR x.indrelid IN "
                "(SELECT inhrelid FROM pg_inherits WHERE inhparent = 'chunks'::regclass))"
            )
        }
        counts = su.execute(
            "SELECT (SELECT count(*) FROM chunks), (SELECT n_chunks FROM corpus_stats), "
            "(SELECT sum(n_chunks) FROM wall_group_sizes), "
            "(SELECT sum(n_chunks) FROM search_document_stats)"
        ).fetchone()
    for name in before["partitions"]:
        assert {(name, "hnsw"), (name, "gin")} <= per_partition
    assert opclasses == {f"{storage}_cosine_ops"}
    # the statement triggers counted every row once (inserted through the parent)
    assert counts is not None and counts[0] > 0 and len(set(counts)) == 1, counts

    # converting back (rows kept) and forth again keeps triggers, policies, RLS and grants
    back = _relayout(db, 1, "vector")
    assert back.archive is not None and back.after.partitions == 1
    plain = _catalog(db.superuser_url)
    assert plain["partitions"] == [] and plain["storage"] == "vector(384)"
    again = _relayout(db, partitions, storage)
    assert again.archive is not None
    after = _catalog(db.superuser_url)
    assert after == before
    for key in ("triggers", "policies", "rls", "fks", "grants"):
        assert plain[key] == before[key], key
    with psycopg.connect(db.superuser_url) as su:
        assert su.execute("SELECT count(*) FROM chunks").fetchone() == (counts[0],)
        # the earlier layouts are kept (nothing dropped), without grants or triggers
        kept = su.execute(
            "SELECT count(*) FROM pg_class WHERE relname IN (%s, %s)",
            (back.archive, again.archive),
        ).fetchone()
        assert kept == (2,)
        assert su.execute(
            "SELECT count(*) FROM information_schema.role_table_grants WHERE table_name = %s "
            "AND grantee = %s",
            (again.archive, pg.APP_ROLE),
        ).fetchone() == (0,)
        assert su.execute(
            "SELECT count(*) FROM pg_trigger WHERE tgrelid = CAST(%s AS regclass) "
            "AND NOT tgisinternal",
            (again.archive,),
        ).fetchone() == (0,)
    # the service still finds everything after the round trip
    assert len(firm.search("ann@firm.nl", "octrooi", k=10)["results"]) == 6


def test_a_partition_read_by_name_shows_nothing_to_the_app_role(
    client: TestClient, auth: Tokens, db: DbHandle, layout: tuple[int, str]
) -> None:
    """The wall holds on the partitions themselves: the app role has no grant on them, and
    row-level security is forced on each (with no policy: even a grant would show nothing)."""
    firm = Firm(client, auth)
    firm.person("ann@firm.nl")
    firm.client_("C", "Client")
    firm.matter("M-1", "C")
    for i in range(8):
        firm.document(f"d{i}", f"octrooi werkwijze {i}.", client_id="C", matter_id="M-1")
    with psycopg.connect(db.superuser_url) as su:
        names = [
            r[0]
            for r in su.execute(
                "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity FROM pg_inherits h "
                "JOIN pg_class c ON c.oid = h.inhrelid WHERE h.inhparent = 'chunks'::regclass "
                "AND c.relrowsecurity AND c.relforcerowsecurity"
            )
        ]
    assert len(names) == layout[0]
    with psycopg.connect(db.app_url) as app:
        app.execute("SET ROLE ewall_writer")
        for name in names:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                app.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(name)))
            app.rollback()
        # through the parent, as the writer: every row (the policies apply as before)
        app.execute("SET ROLE ewall_writer")
        assert app.execute("SELECT count(*) FROM chunks").fetchone() == (8,)


def test_relayout_refuses_bad_input_and_changes_nothing(db: DbHandle) -> None:
    before = _catalog(db.superuser_url)
    for partitions, storage in ((0, "vector"), (257, "vector"), (4, "float16")):
        with pytest.raises(service.LayoutError):
            _relayout(db, partitions, storage)
    assert _catalog(db.superuser_url) == before
    # the same layout again: nothing done, nothing kept
    same = _relayout(db, len(before["partitions"]) or 1, before["storage"].split("(")[0])
    assert same.archive is None


def test_relayout_gives_up_while_another_transaction_holds_chunks(db: DbHandle) -> None:
    before = _catalog(db.superuser_url)
    with psycopg.connect(db.superuser_url) as holder:
        holder.execute("SELECT count(*) FROM chunks")  # ACCESS SHARE until rollback
        with pytest.raises(service.LayoutError, match="LockNotAvailable"):
            service.relayout(db.superuser_url, 2, "vector", lock_timeout_ms=200)
        holder.rollback()
    assert _catalog(db.superuser_url) == before


def test_a_new_database_gets_the_layout_of_the_settings_and_downgrades(
    pg_server: pg.Server, settings: Settings
) -> None:
    """The migration applies EWALL_CHUNK_PARTITIONS / EWALL_EMBEDDING_STORAGE to a new
    (empty) database; the downgrade returns to the plain vector table."""
    name = f"t_layout_{np.random.default_rng().integers(1 << 40):x}"
    with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = pg_server.url_for(name)
    try:
        cfg = migrate.alembic_config(url, app_role=pg.APP_ROLE, embedding_dim=384)
        cfg.attributes["chunk_partitions"] = 3
        cfg.attributes["embedding_storage"] = "halfvec"
        command.upgrade(cfg, "head")
        layout, archives = service.current(url)
        assert (layout.partitions, layout.storage) == (3, "halfvec")
        assert archives == []  # the empty table before it is not kept
        command.downgrade(cfg, "20261201_0027")
        layout, _ = service.current(url)
        assert (layout.partitions, layout.storage) == (1, "vector")
    finally:
        pg.drop_database(pg_server, name)


# --- the retrieval statement over partitions ------------------------------------------------


@pytest.mark.parametrize("mode", ["dense", "hybrid", "sparse"])
@pytest.mark.parametrize(("person", "values", "strategy"), _full_topk.STRATEGIES)
def test_every_strategy_returns_only_allowed_chunks(
    corpus: TestClient,
    auth: Tokens,
    allowed: dict[str, set[str]],
    person: str,
    values: dict[str, Any],
    strategy: str,
    mode: str,
) -> None:
    """test_full_topk's case on the partitioned layouts: a full top-k of allowed chunks
    whatever the strategy. That corpus holds each matter in one document, so on partitions
    by document a matter's chunks share one partition and the starved HNSW scan finds them
    all in its first pass: the fallback may not be needed (it is forced below, on a corpus
    of many documents)."""
    with overridden(corpus, **values):
        out = Firm(corpus, auth).search(person, "octrooi uitvinding werkwijze", k=100, mode=mode)
    _full_topk._check(out, allowed[person], 100)
    dense = _full_topk._dense_strategy(out)
    if mode == "sparse":
        assert dense == "none"
    elif strategy == "hnsw->exact":
        assert dense in ("hnsw", "hnsw->exact")
    else:
        assert dense == strategy


def test_hnsw_that_under_returns_over_partitions_falls_back_to_exact(
    client: TestClient, auth: Tokens, db: DbHandle
) -> None:
    """10,000 chunks in 500 documents spread over the partitions; ann may see one matter of
    five documents (100 chunks); smaller partitions than test_full_topk's 2,500 rows make
    the planner prefer a btree scan and a sort to the HNSW scans. A starved HNSW scan (at most 100 tuples per partition)
    finds a few of them per partition, fewer than min(candidates, allowed): the statement
    re-runs exact and the answer is the full, exact top-k."""
    firm = Firm(client, auth)
    firm.person("ann@firm.nl")
    firm.client_("C", "Client")
    firm.matter("M-open", "C")
    firm.matter("M-walled", "C")
    firm.wall(kind="exclusionary", protects={"matters": ["M-walled"]}, screened=["ann@firm.nl"])
    rng = np.random.default_rng(5)
    with psycopg.connect(db.superuser_url) as su:
        groups: dict[str, str] = dict(
            su.execute("SELECT matter_id, wall_group_id FROM matter_wall_groups").fetchall()
        )
        su.execute("DELETE FROM retag_pending")
        rows = []
        for d in range(500):
            matter = "M-open" if d < 5 else "M-walled"
            doc_id = su.execute(
                "INSERT INTO documents (source, external_id, status, client_id, matter_id, "
                "doc_type, title, source_acl_id) VALUES ('bench', %s, 'active', 'C', %s, "
                "'other', %s, 'public') RETURNING document_id",
                (f"doc-{d}", matter, f"doc {d}"),
            ).fetchone()[0]  # type: ignore[index]
            for j in range(20):
                vec = rng.normal(size=384)
                vec /= np.linalg.norm(vec)
                rows.append(
                    (
                        f"bench:{d}:{j}",
                        doc_id,
                        matter,
                        groups[matter],
                        j,
                        f"octrooi werkwijze {d} {j}",
                        vector_literal(vec.astype(np.float32)),
                        f"{d:032x}{j:032x}",
                    )
                )
        # one COPY, not 10,000 INSERTs: the statistics triggers run per statement
        with (
            graph_built_after_load(su),
            su.cursor() as cur,
            cur.copy(
                "COPY chunks (chunk_id, document_id, matter_id, wall_group_id, ordinal, body, "
                "embedding, content_sha256, source, external_id, client_id, doc_type, "
                "source_acl_id, token_count) FROM STDIN"
            ) as copy,
        ):
            for row in rows:
                copy.write_row((*row, "bench", "x", "C", "other", "public", 20))
        su.execute("ANALYZE chunks")
        spread = su.execute(
            "SELECT count(DISTINCT tableoid) FROM chunks WHERE matter_id = 'M-open'"
        ).fetchone()
        allowed_ids = {
            r[0] for r in su.execute("SELECT chunk_id FROM chunks WHERE matter_id = 'M-open'")
        }
    assert spread is not None and spread[0] >= 2  # the allowed rows span partitions
    starved = {**FORCE_HNSW, "hnsw_max_scan_tuples_cap": 100}
    for k in (10, 100):
        with overridden(client, **starved):
            out = firm.search("ann@firm.nl", "octrooi", k=k, mode="dense")
        assert out["strategy"] == "hnsw->exact"
        _full_topk._check(out, allowed_ids, k)
        with overridden(client, **FORCE_HNSW):
            full = firm.search("ann@firm.nl", "octrooi", k=k, mode="dense")
        assert full["strategy"] in ("hnsw", "hnsw->exact")
        _full_topk._check(full, allowed_ids, k)


FORCE_HNSW = _full_topk.FORCE_HNSW


def test_hnsw_form_scans_every_partitions_own_index(
    corpus: TestClient, module_db: DbHandle, module_layout: tuple[int, str]
) -> None:
    """PostgreSQL plans the HNSW form over partitions as a Merge Append of one HNSW index
    scan per partition (each with the iterative scan), the dense leg's LIMIT over the
    merge: per-partition depth is whatever the merge pulls, never a fixed share."""
    engine = create_engine(sqlalchemy_url(module_db.superuser_url), poolclass=pool.NullPool)
    qvec = vector_literal(np.ones(384, dtype=np.float32) / np.sqrt(384))
    with engine.connect() as conn:
        conn.execute(text("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)"))
        conn.execute(text("SELECT set_config('enable_seqscan', 'off', true)"))
        plan = conn.execute(
            text(
                "EXPLAIN (FORMAT TEXT) SELECT chunk_id FROM chunks c "
                "WHERE (c.wall_group_id || '') = ANY(:g) "
                "ORDER BY c.embedding <=> CAST(:q AS vector) LIMIT 100"
            ),
            {"g": ["x"], "q": qvec},
        ).scalars()
        lines = list(plan)
    engine.dispose()
    joined = "\n".join(lines)
    assert "Merge Append" in joined, joined
    scans = [ln for ln in lines if "Index Scan using" in ln and "embedding" in ln]
    assert len(scans) == module_layout[0], joined


@pytest.mark.parametrize("person", ["p10@firm.nl", "p100@firm.nl"])
def test_hnsw_recall_over_partitions_is_near_exact_and_never_short(
    corpus: TestClient,
    auth: Tokens,
    allowed: dict[str, set[str]],
    module_db: DbHandle,
    person: str,
) -> None:
    """Forced HNSW over the partitions against the exact top-10 over the allowed rows
    (superuser, no index), on ten questions: never short, mean recall@10 >= 0.8. The corpus
    is random 384-d vectors and the questions real embeddings: near-ties everywhere, the
    hardest case for HNSW (bench.search measures recall on clustered vectors); a merge that
    lost partitions would score about 1/N."""
    firm = Firm(corpus, auth)
    matters = {"p10@firm.nl": ["M-a", "M-b", "M-c"], "p100@firm.nl": ["M-a", "M-b", "M-c", "M-d"]}
    denied = "acl-deny-p100" if person == "p100@firm.nl" else ""
    embedder = corpus.app.state.resources.embedder  # type: ignore[attr-defined]
    recalls = []
    questions = ["octrooi", "uitvinding", "werkwijze", "stand techniek", "conclusie"]
    questions += [f"{q} nieuwheid" for q in questions]
    # ef_search at its top: the random corpus puts near-ties everywhere, and at the default
    # 200 the graph's own randomness (its build is not seeded) moved the mean around the
    # bound (0.79 in one fresh-clone run); what this test guards is the merge of partitions
    with overridden(corpus, exact_max_rows=0, hnsw_ef_search=1000):
        for question in questions:
            out = firm.search(person, question, k=10, mode="dense")
            assert out["strategy"] in ("hnsw", "hnsw->exact")
            got = [r["chunk_id"] for r in out["results"]]
            assert len(got) == 10 and set(got) <= allowed[person]
            qvec = vector_literal(embedder.embed_query(question))
            with psycopg.connect(module_db.superuser_url) as su:
                su.execute("SET enable_indexscan = off")
                truth = [
                    r[0]
                    for r in su.execute(
                        "SELECT chunk_id FROM chunks WHERE matter_id = ANY(%s) "
                        "AND source_acl_id <> %s ORDER BY embedding <=> %s::vector LIMIT 10",
                        (matters[person], denied, qvec),
                    )
                ]
            recalls.append(len(set(got) & set(truth)) / 10)
    assert sum(recalls) / len(recalls) >= 0.8, recalls
