"""The dense leg's HNSW graph is built with ef_construction 128 (migration 20261204_0049): at
1,000,000 chunks the graph built with 64 missed neighbours no ef_search could find (recall@10
0.83-0.93 at 10-100% allowed), the one built with 128 found them (0.97-1.000;
docs/scale-out.md). The recall is a property of a million rows, measured by bench.search;
here, that every index the dense leg reads gets the option, on one table and on partitions
(tests/search/test_chunk_layouts.py runs this again on a partitioned layout), and that the
downgrade takes it back."""

from __future__ import annotations

import psycopg

from app.db import migrate
from app.settings import Settings
from tests import pg
from tests.conftest import DbHandle

BEFORE = "20261204_0048"


def _graph_options(url: str) -> list[str]:
    """The build options of every index the dense leg reads: the partitions' indexes on a
    partitioned table, the index itself on one table."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT pg_get_indexdef(i.oid) FROM pg_class AS i"
            " WHERE i.oid IN (SELECT relid FROM pg_partition_tree('ix_chunks_embedding_hnsw')"
            "                 WHERE isleaf)"
            "    OR (i.relname = 'ix_chunks_embedding_hnsw' AND i.relkind = 'i')"
            " ORDER BY i.relname"
        ).fetchall()
    return [r[0][r[0].index(" WITH (") :] for r in rows]


def test_the_graph_is_built_with_ef_construction_128_and_the_downgrade_takes_it_back(
    db: DbHandle, settings: Settings
) -> None:
    url = db.superuser_url
    head = _graph_options(url)
    assert head and set(head) == {" WITH (m='16', ef_construction='128')"}, head
    migrate.downgrade(
        url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim, revision=BEFORE
    )
    assert _graph_options(url) == [" WITH (m='16', ef_construction='64')"] * len(head)
    migrate.upgrade(url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim)
    assert _graph_options(url) == head
    with psycopg.connect(url) as conn:
        # REINDEX CONCURRENTLY leaves no invalid index behind
        assert conn.execute("SELECT count(*) FROM pg_index WHERE NOT indisvalid").fetchone() == (0,)
