"""Bulk loading for the benchmarks: COPY of documents and chunks with the secondary indexes
dropped and rebuilt, chunk statistics, the HNSW build and prewarming."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql
from rich.progress import Progress

from app.chunks import service as chunks_service
from bench.common import Stopwatch, console, progress_bar
from bench.server import BenchDatabase, physical_memory

# --- bulk loading ---------------------------------------------------------------------

CHUNK_COPY_COLUMNS = (
    "chunk_id",
    "document_id",
    "source",
    "external_id",
    "client_id",
    "matter_id",
    "wall_group_id",
    "source_acl_id",
    "doc_type",
    "ordinal",
    "body",
    "embedding",
    "content_sha256",
    "token_count",
)
CHUNK_COPY_TYPES = (
    "text",
    "int8",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "int4",
    "text",
    "vector",
    "text",
    "int4",
)
DOCUMENT_COPY_COLUMNS = (
    "document_id",
    "source",
    "external_id",
    "status",
    "client_id",
    "matter_id",
    "doc_type",
    "title",
    "source_acl_id",
    "content_sha256",
)
DOCUMENT_COPY_TYPES = (
    "int8",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
)


@dataclass(frozen=True)
class IndexDef:
    name: str
    ddl: str
    method: str


def secondary_indexes(conn: psycopg.Connection[Any], table: str) -> list[IndexDef]:
    """Indexes that no constraint owns (the primary key stays: COPY needs no help to keep
    it, and dropping it would need the constraint recreated too)."""
    rows = conn.execute(
        """
        SELECT i.relname, pg_get_indexdef(i.oid), am.amname
        FROM pg_index x
        JOIN pg_class i ON i.oid = x.indexrelid
        JOIN pg_am am ON am.oid = i.relam
        WHERE x.indrelid = CAST(%s AS regclass)
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid)
        ORDER BY i.relname
        """,
        (table,),
    ).fetchall()
    return [IndexDef(str(r[0]), str(r[1]), str(r[2])) for r in rows]


def copy_rows(
    conn: psycopg.Connection[Any],
    table: str,
    columns: Sequence[str],
    types: Sequence[str],
    batches: Iterable[Sequence[Sequence[Any]]],
    *,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Binary COPY (vectors go as pgvector's binary form: no float formatting in Python)."""
    from pgvector.psycopg import register_vector

    register_vector(conn)
    statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
        sql.Identifier(table), sql.SQL(", ").join(sql.Identifier(c) for c in columns)
    )
    total = 0
    with conn.cursor() as cur, cur.copy(statement) as copy:
        copy.set_types(list(types))
        for batch in batches:
            for row in batch:
                copy.write_row(row)
            total += len(batch)
            if on_batch is not None:
                on_batch(len(batch))
    return total


def recompute_chunk_stats(conn: psycopg.Connection[Any]) -> None:
    """What the chunks statement triggers maintain (wall_group_sizes, lexeme_stats,
    corpus_stats, search_document_stats, the search_key_* tables, search_postings),
    recomputed from the table after a load that ran with them disabled.
    lexeme_stats.ndoc is a document frequency: the trigger counts each lexeme once per
    chunk (tsvector lexemes are distinct), which is exactly ts_stat's ndoc."""
    conn.execute("DELETE FROM wall_group_sizes")
    conn.execute(
        "INSERT INTO wall_group_sizes (wall_group_id, n_chunks) "
        "SELECT wall_group_id, count(*) FROM chunks GROUP BY wall_group_id"
    )
    conn.execute("DELETE FROM lexeme_stats")
    conn.execute(
        "INSERT INTO lexeme_stats (lexeme, ndoc) "
        "SELECT word, ndoc FROM ts_stat('SELECT body_tsv FROM chunks')"
    )
    conn.execute("UPDATE corpus_stats SET n_chunks = (SELECT count(*) FROM chunks) WHERE id = 1")
    # the sparse ranking's per-document lengths; its totals follow through their triggers
    conn.execute("DELETE FROM search_document_stats")
    conn.execute(
        "INSERT INTO search_document_stats (document_id, n_chunks, n_tokens) "
        "SELECT document_id, count(*), sum(token_count) FROM chunks GROUP BY document_id"
    )
    # the per-access-key figures the search weighs (migration 20261203_0042): chunks anyone
    # may see (not suppressed); the document rows go first, their trigger counts documents
    conn.execute("DELETE FROM search_key_document_stats")
    conn.execute("DELETE FROM search_key_lexeme_stats")
    conn.execute("DELETE FROM search_key_stats")
    conn.execute(
        "INSERT INTO search_key_stats (wall_group_id, source_acl_id, n_chunks, n_document_tokens) "
        "SELECT wall_group_id, source_acl_id, count(*), sum(token_count) FROM chunks "
        "WHERE NOT suppressed GROUP BY 1, 2"
    )
    conn.execute(
        "INSERT INTO search_key_document_stats "
        "(document_id, wall_group_id, source_acl_id, n_chunks, n_tokens) "
        "SELECT document_id, wall_group_id, source_acl_id, count(*), sum(token_count) "
        "FROM chunks WHERE NOT suppressed GROUP BY 1, 2, 3"
    )
    conn.execute(
        "INSERT INTO search_key_lexeme_stats (lexeme, wall_group_id, source_acl_id, n_chunks) "
        "SELECT lex, wall_group_id, source_acl_id, count(*) "
        "FROM chunks, unnest(tsvector_to_array(body_tsv)) AS lex WHERE NOT suppressed "
        "GROUP BY 1, 2, 3"
    )
    # the sparse leg's impact postings (migration 20261203_0045) by the triggers' own
    # function, into the table without its indexes (built once after, as the migration does)
    rebuild_postings(conn)


def rebuild_postings(conn: psycopg.Connection[Any]) -> None:
    """search_postings recomputed from chunks: its indexes and key dropped, the table
    filled by ewall_postings_rebuild, then the same definitions built again."""
    key = conn.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = 'search_postings'::regclass AND contype = 'p'"
    ).fetchall()
    indexes = conn.execute(
        "SELECT c.relname, pg_get_indexdef(x.indexrelid) FROM pg_index x "
        "JOIN pg_class c ON c.oid = x.indexrelid "
        "WHERE x.indrelid = 'search_postings'::regclass AND NOT x.indisprimary"
    ).fetchall()
    # names are identifiers (quoted by psycopg); definitions are the catalog's own DDL text
    for name, _ in key:
        conn.execute(
            sql.SQL("ALTER TABLE search_postings DROP CONSTRAINT {}").format(sql.Identifier(name))
        )
    for name, _ in indexes:
        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
    conn.execute("TRUNCATE search_postings")
    conn.execute(
        "SELECT ewall_postings_rebuild(ARRAY(SELECT DISTINCT document_id FROM chunks ORDER BY 1))"
    )
    for name, definition in key:
        conn.execute(
            sql.SQL("ALTER TABLE search_postings ADD CONSTRAINT {} {}").format(
                sql.Identifier(name), sql.SQL(definition)
            )
        )
    for _, definition in indexes:
        conn.execute(sql.SQL(definition))
    conn.execute("ANALYZE search_postings")


def maintenance_memory(rows: int, dim: int) -> str:
    """pgvector builds fastest while the graph fits in maintenance_work_mem (it says so with
    a NOTICE when it stops fitting): about the vector plus m*3 neighbour slots per row."""
    wanted = rows * (dim * 4 + 16 * 3 * 10 + 200) * 5 // 4
    cap = physical_memory() // 4
    mb = max(256, min(wanted, cap) >> 20)
    return f"{mb}MB"


def build_index(
    url: str, index: IndexDef, *, maintenance_work_mem: str, progress: Progress
) -> tuple[float, list[str]]:
    """CREATE INDEX on one connection while another polls pg_stat_progress_create_index."""
    notices: list[str] = []
    errors: list[BaseException] = []
    watch = Stopwatch()
    with (
        psycopg.connect(url, autocommit=True) as conn,
        psycopg.connect(url, autocommit=True) as monitor,
    ):
        conn.add_notice_handler(lambda d: notices.append(str(d.message_primary)))
        conn.execute(
            "SELECT set_config('maintenance_work_mem', %s, false)", (maintenance_work_mem,)
        )
        pid = conn.info.backend_pid

        def run() -> None:
            try:
                conn.execute(index.ddl)  # the catalog's own definition, re-executed as is
            except BaseException as exc:  # re-raised in the caller's thread
                errors.append(exc)

        worker = threading.Thread(target=run, name=f"create-{index.name}")
        task = progress.add_task(f"{index.name} ({index.method})", total=None)
        worker.start()
        while worker.is_alive():
            row = monitor.execute(
                "SELECT phase, blocks_done, blocks_total, tuples_done, tuples_total "
                "FROM pg_stat_progress_create_index WHERE pid = %s",
                (pid,),
            ).fetchone()
            if row is not None:
                phase, blocks_done, blocks_total, tuples_done, tuples_total = row
                if tuples_total:
                    progress.update(task, total=tuples_total, completed=tuples_done)
                elif blocks_total:
                    progress.update(task, total=blocks_total, completed=blocks_done)
                progress.update(task, description=f"{index.name} ({index.method}): {phase}")
            worker.join(0.5)
        progress.update(
            task,
            total=1,
            completed=1,
            description=f"{index.name} ({index.method}) {watch.elapsed():.1f} s",
        )
        progress.stop_task(task)
    if errors:
        raise errors[0]
    return watch.elapsed(), notices


@dataclass
class LoadReport:
    rows: int
    copy_s: float
    stats_s: float
    index_s: dict[str, float] = field(default_factory=dict)
    analyze_s: float = 0.0
    notices: list[str] = field(default_factory=list)

    @property
    def total_s(self) -> float:
        return self.copy_s + self.stats_s + sum(self.index_s.values()) + self.analyze_s


def load_chunks(
    bdb: BenchDatabase,
    documents: Sequence[Sequence[Any]],
    chunk_batches: Iterable[Sequence[Sequence[Any]]],
    total_rows: int,
) -> LoadReport:
    """Bulk-load documents and chunks as the superuser: secondary indexes dropped first and
    rebuilt after (HNSW last, with memory for its graph), COPY with the statement triggers
    off (session_replication_role = replica skips every trigger not marked ALWAYS; the FK
    checks are triggers too, which is why the documents go in first), then the trigger-kept
    statistics recomputed in SQL, VACUUM ANALYZE."""
    dim = bdb.settings.embedding_dim
    with bdb.superuser() as conn:
        indexes = secondary_indexes(conn, "chunks")
        for index in indexes:
            conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(index.name)))
        conn.commit()
        conn.execute("SET session_replication_role = replica")
        watch = Stopwatch()
        copy_rows(conn, "documents", DOCUMENT_COPY_COLUMNS, DOCUMENT_COPY_TYPES, [documents])
        with progress_bar() as bar:
            task = bar.add_task("COPY chunks", total=total_rows)
            copy_rows(
                conn,
                "chunks",
                CHUNK_COPY_COLUMNS,
                CHUNK_COPY_TYPES,
                chunk_batches,
                on_batch=lambda n: bar.advance(task, n),
            )
        conn.execute(
            "SELECT setval(pg_get_serial_sequence('documents', 'document_id'), "
            "(SELECT coalesce(max(document_id), 1) FROM documents))"
        )
        conn.commit()
        copy_s = watch.elapsed()
        conn.execute("RESET session_replication_role")
        watch = Stopwatch()
        conn.execute("SET work_mem = '256MB'")
        recompute_chunk_stats(conn)
        conn.commit()
        stats_s = watch.elapsed()
    report = LoadReport(total_rows, copy_s, stats_s)
    console.print(
        f"  loaded {total_rows:,} chunks in {copy_s:.1f} s "
        f"({total_rows / max(copy_s, 1e-9):,.0f} rows/s); statistics in {stats_s:.1f} s"
    )
    memory = maintenance_memory(total_rows, dim)
    # HNSW last: the btrees and GIN are quick, and the graph build wants all the memory
    ordered = sorted(indexes, key=lambda i: (i.method == "hnsw", i.method == "gin", i.name))
    with progress_bar() as bar:
        for index in ordered:
            seconds, notices = build_index(
                bdb.superuser_url, index, maintenance_work_mem=memory, progress=bar
            )
            report.index_s[index.name] = seconds
            report.notices.extend(notices)
    for notice in report.notices:
        console.print(f"  [yellow]notice[/] {notice}")
    watch = Stopwatch()
    with bdb.superuser(autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE) chunks")
        # the impact scans are index-only once the visibility map is set
        conn.execute("VACUUM (ANALYZE) search_postings")
        conn.execute("ANALYZE documents, wall_group_sizes, lexeme_stats, corpus_stats")
        conn.execute("ANALYZE search_document_stats")
    report.analyze_s = watch.elapsed()
    console.print(
        "  indexes: "
        + ", ".join(f"{k} {v:.1f} s" for k, v in report.index_s.items())
        + f"; vacuum analyze {report.analyze_s:.1f} s (maintenance_work_mem {memory})"
    )
    return report


def prewarm(bdb: BenchDatabase, relations: Sequence[str]) -> None:
    """Load the relations into shared buffers (pg_prewarm ships with contrib) so that the
    first timed queries do not pay for cold pages; silently skipped where unavailable."""
    with bdb.superuser(autocommit=True) as conn:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        except psycopg.Error:
            return
        for relation in relations:
            try:
                conn.execute("SELECT pg_prewarm(CAST(%s AS regclass))", (relation,))
            except psycopg.Error:
                continue


# --- chunk layouts: hash partitions and halfvec (docs/scale-out.md) ----------------------

DEFAULT_HNSW = IndexDef(
    "ix_chunks_embedding_hnsw",
    "CREATE INDEX ix_chunks_embedding_hnsw ON public.chunks USING hnsw "
    "(embedding vector_cosine_ops) WITH (m='16', ef_construction='128')",
    "hnsw",
)


@dataclass
class LayoutReport:
    partitions: int
    storage: str
    relayout_s: float  # copy into the layout + its btree and GIN indexes, per partition
    hnsw_s: float  # the HNSW build over every partition (one index each)
    sizes: dict[str, int] = field(default_factory=dict)  # bytes over all partitions

    @property
    def name(self) -> str:
        return f"{self.partitions}p {self.storage}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "partitions": self.partitions,
            "storage": self.storage,
            "relayout_s": round(self.relayout_s, 1),
            "hnsw_build_s": round(self.hnsw_s, 1),
            "bytes": self.sizes,
        }


def layout_sizes(conn: psycopg.Connection[Any]) -> dict[str, int]:
    """pg_relation_size of the heap and of each index of chunks, summed over partitions."""
    rows = conn.execute(
        """
        WITH rel AS (
            SELECT CAST('chunks' AS regclass) AS oid, 'heap' AS name
            UNION ALL
            SELECT x.indexrelid, i.relname
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
            WHERE x.indrelid = CAST('chunks' AS regclass)
        )
        SELECT r.name,
               CASE WHEN c.relkind IN ('p', 'I')
                    THEN (SELECT sum(pg_relation_size(t.relid))
                          FROM pg_partition_tree(r.oid) t WHERE t.isleaf)
                    ELSE pg_relation_size(r.oid) END
        FROM rel r JOIN pg_class c ON c.oid = r.oid
        """
    ).fetchall()
    return {str(r[0]): int(r[1] or 0) for r in rows}


def layout_relations(conn: psycopg.Connection[Any]) -> list[str]:
    """The leaf tables of chunks and their indexes (what pg_prewarm can load)."""
    rows = conn.execute(
        """
        WITH leaf AS (
            SELECT CAST('chunks' AS regclass) AS relid
            WHERE (SELECT relkind FROM pg_class WHERE oid = CAST('chunks' AS regclass)) = 'r'
            UNION ALL
            SELECT t.relid FROM pg_partition_tree('chunks') t WHERE t.isleaf
        )
        SELECT CAST(relid AS regclass)::text FROM leaf
        UNION ALL
        SELECT CAST(x.indexrelid AS regclass)::text
        FROM leaf JOIN pg_index x ON x.indrelid = leaf.relid
        """
    ).fetchall()
    return [str(r[0]) for r in rows]


def apply_layout(bdb: BenchDatabase, partitions: int, storage: str) -> LayoutReport:
    """Bring the bench database's chunks to a layout the way an operator would
    (``ewall_chunks_relayout``), with the HNSW index dropped first and built after, timed on
    its own. The bench drops the kept old table (its own copy): disk for the next layout."""
    with bdb.superuser() as conn:
        hnsw = [i for i in secondary_indexes(conn, "chunks") if i.method == "hnsw"]
        for index in hnsw:
            conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(index.name)))
        conn.commit()
    watch = Stopwatch()
    done = chunks_service.relayout(bdb.superuser_url, partitions, storage, lock_timeout_ms=60_000)
    relayout_s = watch.elapsed()
    if done.archive is not None:
        with bdb.superuser() as conn:
            conn.execute(sql.SQL("DROP TABLE {} CASCADE").format(sql.Identifier(done.archive)))
            conn.commit()
    memory = maintenance_memory(bdb_rows(bdb), bdb.settings.embedding_dim)
    hnsw_s = 0.0
    with progress_bar() as bar:
        for index in hnsw or [DEFAULT_HNSW]:
            ddl = re.sub(
                r"\b(vector|halfvec)_(l2|ip|cosine|l1)_ops\b",
                rf"{storage}_\2_ops",
                index.ddl.replace(" ON ONLY ", " ON "),
            )
            seconds, notices = build_index(
                bdb.superuser_url,
                IndexDef(index.name, ddl, index.method),
                maintenance_work_mem=memory,
                progress=bar,
            )
            hnsw_s += seconds
            for notice in notices:
                console.print(f"  [yellow]notice[/] {notice}")
    with bdb.superuser(autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE) chunks")
        sizes = layout_sizes(conn)
    report = LayoutReport(partitions, storage, relayout_s, hnsw_s, sizes)
    console.print(
        f"  layout {report.name}: relayout {relayout_s:.1f} s, HNSW build {hnsw_s:.1f} s, "
        + ", ".join(f"{k} {v / 2**20:,.1f} MiB" for k, v in sizes.items())
    )
    return report


def bdb_rows(bdb: BenchDatabase) -> int:
    with bdb.superuser() as conn:
        row = conn.execute("SELECT n_chunks FROM corpus_stats WHERE id = 1").fetchone()
    return int(row[0]) if row else 0
