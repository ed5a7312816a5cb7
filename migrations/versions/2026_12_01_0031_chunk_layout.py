"""Chunk layout: hash partitions by document and halfvec storage, one relayout function.

Revision ID: 20261201_0031
Revises: 20261201_0030
Create Date: 2026-12-01

``ewall_chunks_relayout(partitions, storage)`` rebuilds ``chunks`` in another layout in ONE
transaction: N hash partitions by ``document_id`` (1: a plain table, the default) and the
embedding stored as ``vector`` or ``halfvec`` (half the bytes of the heap and of the HNSW
graph). It is what a Citus distributed table gives per shard on one machine: each partition
has its own HNSW and GIN index (the parent's indexes are created on every partition).

What references chunks moves with it, read from the catalog rather than repeated here: the
columns (generated ``body_tsv``, storage, statistics targets), the indexes (the HNSW opclass
follows the storage), the primary key (``(chunk_id, document_id)`` when partitioned: a key
of a partitioned table must hold the partition key; ``chunk_id`` is derived from the
document's source and external id, so it stays unique), the foreign key to documents, the
statement triggers (statistics, search_document_stats: they are created after the copy, the
copied rows are counted once already), row-level security (ENABLE + FORCE and every policy),
and the grants. Each partition has row-level security forced and no policy and no grant: a
read of a partition by name sees nothing; every read goes through the parent's policies.

Nothing is deleted: the old table is renamed ``chunks_before_<timestamp>`` (its partitions
with it), its grants revoked and its triggers dropped (so it no longer counts writes nobody
makes); the operator drops it once the new layout is verified (docs/scale-out.md).

For a new database the migration applies the layout of the settings ``EWALL_CHUNK_PARTITIONS``
and ``EWALL_EMBEDDING_STORAGE`` while chunks is empty; an existing database with chunks is
left as it is (a warning says so) and converted with ``ewall chunks relayout``.
"""

import logging
from collections.abc import Sequence

from alembic import context, op
from psycopg import sql

from app.db.function_sources import apply_function_source
from app.settings import get_settings

revision: str = "20261201_0031"
down_revision: str | None = "20261201_0030"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("alembic.runtime.migration")

DOWNGRADE = r"""
DROP FUNCTION ewall_chunks_relayout(integer, text);
"""

LAYOUT = r"""
SELECT (SELECT count(*) FROM pg_inherits WHERE inhparent = to_regclass('public.chunks')),
       (SELECT format_type(atttypid, NULL) FROM pg_attribute
        WHERE attrelid = to_regclass('public.chunks') AND attname = 'embedding'),
       EXISTS (SELECT 1 FROM chunks)
"""


def _run(statement: str) -> list[tuple[object, ...]]:
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)
        return list(cur.fetchall()) if cur.description else []


def _layout() -> tuple[int, str, bool]:
    row = _run(LAYOUT)[0]
    return max(1, int(str(row[0]))), str(row[1]), bool(row[2])


def _wanted() -> tuple[int, str]:
    settings = get_settings()
    partitions = int(context.config.attributes.get("chunk_partitions", settings.chunk_partitions))
    storage = str(context.config.attributes.get("embedding_storage", settings.embedding_storage))
    return partitions, storage


def upgrade() -> None:
    apply_function_source(
        "chunks_relayout.v1.sql", "c7168350a54e4409056a2215192bccbc48b2350e593337aeebc6cf6fa31beb2e"
    )
    # no EXECUTE for PUBLIC (a function's default)
    _run("REVOKE ALL ON FUNCTION ewall_chunks_relayout(integer, text) FROM PUBLIC")
    partitions, storage = _wanted()
    have_partitions, have_storage, has_rows = _layout()
    if (partitions, storage) == (have_partitions, have_storage):
        return
    if has_rows:
        log.warning(
            "chunks holds rows: its layout (%s partitions, %s) is left as it is; "
            "convert it with `ewall chunks relayout --partitions %s --storage %s`",
            have_partitions,
            have_storage,
            partitions,
            storage,
        )
        return
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute("SELECT ewall_chunks_relayout(%s, %s)", (partitions, storage))
        archive = str(cur.fetchone()[0])
        # the new database's empty table before the layout: nothing in it to keep
        cur.execute(sql.SQL("DROP TABLE {} CASCADE").format(sql.Identifier("public", archive)))


def downgrade() -> None:
    # back to the plain vector table the earlier revisions know (rows kept; the
    # relayout leaves the partitioned table as chunks_before_<timestamp>)
    if _layout()[:2] != (1, "vector"):
        _run("SELECT ewall_chunks_relayout(1, 'vector')")
    _run(DOWNGRADE)
