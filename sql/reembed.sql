-- Re-embedding every chunk with another model (app/reembed/), and the live model.
--
-- embedding_live names the model whose vectors chunks.embedding holds. A re-embed adds
-- chunks.embedding_next vector(<new dimension>) and embedding_next_model, fills them in
-- batches (each batch commits with its progress, so a crash loses at most one batch), builds
-- their HNSW index CONCURRENTLY, and switches in ONE short transaction: the live model row,
-- then an ACCESS EXCLUSIVE lock on chunks (under a lock_timeout: a search waits at most that
-- long), then column and index renames and the old column's drop (all catalog-only).
-- Searches read the live model after taking ACCESS SHARE on chunks, so a search sees the
-- old columns and the old model, or the new ones, never a mix.
--
-- While the run's columns exist, a chunk whose document's context changed (ingestion
-- encodes it again, or touches its vector where the live model has no room for the context)
-- loses its next vector (trigger chunks_reembed_forget_next, function
-- ewall_reembed_forget_next), and a batch writes only the chunks whose row it read is still
-- the current one: no next vector is made from a context that is no longer the document's.

-- name: live_model
SELECT model_id, model_name, dimension FROM embedding_live WHERE id = 1

-- name: live_model_at
-- A search's model check, with the instant its access is decided at: the database's clock
-- when this statement began (app/db/clock.py), after the ACCESS SHARE lock was granted.
-- One row whether or not a model is live yet.
SELECT l.model_id, l.model_name, l.dimension, statement_timestamp() AS at
FROM (SELECT 1) AS one
LEFT JOIN embedding_live l ON l.id = 1

-- name: live_model_for_share
-- Ingestion's write transaction: a switch (which updates this row first) waits for it, and
-- it waits for a switch in progress, then sees the new model.
SELECT model_id, model_name, dimension FROM embedding_live WHERE id = 1 FOR SHARE

-- name: claim_live_model
-- The first service or ingestion with a model records it as live (no row changes after).
UPDATE embedding_live
SET model_id = :model_id, model_name = :model_name, dimension = :dimension, since = now()
WHERE id = 1 AND model_id IS NULL

-- name: lock_chunks_shared
-- A search takes this before it reads the live model (see the header).
LOCK TABLE chunks IN ACCESS SHARE MODE

-- name: active_run
SELECT run_id, target_model, target_model_id, dimension, from_model_id, status, total, done,
       started_by, started_at, updated_at, finished_at
FROM reembed_runs WHERE status IN ('filling', 'indexing', 'switching')

-- name: last_run
SELECT run_id, target_model, target_model_id, dimension, from_model_id, status, total, done,
       started_by, started_at, updated_at, finished_at
FROM reembed_runs ORDER BY started_at DESC LIMIT 1

-- name: insert_run
INSERT INTO reembed_runs (run_id, target_model, target_model_id, dimension, from_model_id,
                          status, total, done, started_by)
VALUES (:run_id, :target_model, :target_model_id, :dimension, :from_model_id, 'filling',
        :total, 0, :started_by)

-- name: set_run_status
UPDATE reembed_runs
SET status = :status, updated_at = now(),
    finished_at = CASE WHEN :status IN ('switched', 'cancelled') THEN now() END
WHERE run_id = :run_id

-- name: set_run_counts
UPDATE reembed_runs SET total = :total, done = :done, updated_at = now() WHERE run_id = :run_id

-- name: count_chunks
-- Writer mode: every chunk, whatever the reader's access (numbers only).
SELECT count(*) AS total, count(*) FILTER (WHERE embedding_next IS NULL) AS missing
FROM chunks

-- name: missing_batch
-- The next chunks without a new vector (the partial index ix_chunks_embedding_next_missing
-- serves this on a large table), with what their encoder input is made of besides the text:
-- the section, the document's title and summary (app/embeddings.py passage_input; ingestion
-- builds the same), and the version of the row read (its xmin: write_batch writes only if
-- the row is still that one). Writer mode.
SELECT c.chunk_id, c.row_version, c.body, c.section_path, d.title,
       (SELECT x.body FROM chunks x
        WHERE x.document_id = c.document_id AND ewall_is_summary_section(x.section_path)
        ORDER BY x.ordinal LIMIT 1) AS summary
FROM (SELECT chunk_id, CAST(xmin AS text) AS row_version, body, section_path, document_id
      FROM chunks
      WHERE embedding_next IS NULL ORDER BY chunk_id LIMIT :limit) AS c
LEFT JOIN documents d ON d.document_id = c.document_id  -- never skip a chunk
ORDER BY c.chunk_id

-- name: any_missing
SELECT EXISTS (SELECT 1 FROM chunks WHERE embedding_next IS NULL) AS missing

-- name: write_batch
-- One batch of new vectors and the run's progress, in one transaction. A chunk deleted or
-- already filled meanwhile is skipped (its id names its text, so the vector is right), and
-- so is one whose row changed since the batch read it (another xmin: ingestion may have
-- encoded it again from a new context, which the batch's vector does not have); the next
-- batch reads it again. A row locked by a writer is tested again once that writer commits.
WITH written AS (
    UPDATE chunks AS c
    SET embedding_next = CAST(v.embedding AS vector), embedding_next_model = :model_id
    FROM unnest(CAST(:chunk_ids AS text[]), CAST(:row_versions AS text[]),
                CAST(:embeddings AS text[])) AS v (chunk_id, row_version, embedding)
    WHERE c.chunk_id = v.chunk_id AND c.xmin = CAST(v.row_version AS xid)
      AND c.embedding_next IS NULL
    RETURNING 1
)
UPDATE reembed_runs
SET done = done + (SELECT count(*) FROM written), updated_at = now()
WHERE run_id = :run_id
RETURNING (SELECT count(*) FROM written) AS written

-- name: chunk_models
-- Tests and the run's report: how many chunks hold each model's vector. Writer mode.
SELECT coalesce(embedding_model, '') AS model_id, count(*) AS n
FROM chunks GROUP BY 1 ORDER BY 1

-- name: layout
-- chunks as a plain table ('r') or a partitioned one ('p') with its leaf partitions, each
-- with the names of its re-embed indexes (quoted).
SELECT c.relkind,
       coalesce((SELECT array_agg(format('%I.%I', n.nspname, p.relname) ORDER BY p.relname)
                 FROM pg_partition_tree(c.oid) t
                 JOIN pg_class p ON p.oid = t.relid
                 JOIN pg_namespace n ON n.oid = p.relnamespace
                 WHERE t.isleaf AND t.relid <> c.oid), '{}') AS partitions,
       coalesce((SELECT array_agg(format('%I', left(p.relname, 40) || '_' || :suffix)
                                  ORDER BY p.relname)
                 FROM pg_partition_tree(c.oid) t
                 JOIN pg_class p ON p.oid = t.relid
                 WHERE t.isleaf AND t.relid <> c.oid), '{}') AS partition_indexes
FROM pg_class c WHERE c.oid = to_regclass('public.chunks')

-- name: column_dimension
SELECT atttypmod AS dimension FROM pg_attribute
WHERE attrelid = to_regclass('public.chunks') AND attname = :column AND NOT attisdropped

-- name: index_valid
-- NULL: no such index; false: a CONCURRENTLY build that was interrupted (dropped, rebuilt).
SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass(:name)

-- name: index_attached
SELECT EXISTS (SELECT 1 FROM pg_inherits
               WHERE inhrelid = to_regclass(:child) AND inhparent = to_regclass(:parent))
       AS attached

-- name: set_lock_timeout
SELECT set_config('lock_timeout', :value, false)

-- name: add_next_columns
-- {dim}: the new model's dimension (an integer the code formats in). ADD COLUMN without a
-- default is catalog-only; it needs ACCESS EXCLUSIVE briefly (under the lock_timeout).
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS embedding_next vector({dim}),
    ADD COLUMN IF NOT EXISTS embedding_next_model text;
ALTER TABLE chunks ALTER COLUMN embedding_next SET STORAGE PLAIN

-- name: forget_next_trigger
-- With the run's columns only (the function reads them): made after add_next_columns, and
-- again before the index and the switch, so that a run prepared by a version without it has
-- it too. CREATE TRIGGER takes a brief SHARE ROW EXCLUSIVE lock (under the lock_timeout).
DO $ddl$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_attribute
               WHERE attrelid = 'chunks'::regclass AND attname = 'embedding_next'
                 AND NOT attisdropped) THEN
        CREATE OR REPLACE TRIGGER chunks_reembed_forget_next
            BEFORE UPDATE OF embedding ON chunks
            FOR EACH ROW EXECUTE FUNCTION ewall_reembed_forget_next();
    END IF;
END
$ddl$

-- name: drop_next_columns
DROP TRIGGER IF EXISTS chunks_reembed_forget_next ON chunks;
ALTER TABLE chunks DROP COLUMN IF EXISTS embedding_next,
    DROP COLUMN IF EXISTS embedding_next_model

-- name: create_missing_index
-- {index} {table}: quoted names the code formats in.
CREATE INDEX CONCURRENTLY {index} ON {table} (chunk_id) WHERE embedding_next IS NULL

-- name: create_missing_index_parent
CREATE INDEX IF NOT EXISTS {index} ON ONLY chunks (chunk_id) WHERE embedding_next IS NULL

-- name: create_hnsw_index
CREATE INDEX CONCURRENTLY {index} ON {table}
    USING hnsw (embedding_next vector_cosine_ops) WITH (m = 16, ef_construction = 128)

-- name: create_hnsw_index_parent
CREATE INDEX IF NOT EXISTS {index} ON ONLY chunks
    USING hnsw (embedding_next vector_cosine_ops) WITH (m = 16, ef_construction = 128)

-- name: attach_index
ALTER INDEX {parent} ATTACH PARTITION {child}

-- name: drop_index
DROP INDEX CONCURRENTLY IF EXISTS {index}

-- name: drop_index_parent
DROP INDEX IF EXISTS {index}

-- name: switch_live_model
-- First statement of the switch: the live model row (ingestion's FOR SHARE waits on it).
UPDATE embedding_live
SET model_id = :model_id, model_name = :model_name, dimension = :dimension, since = now()
WHERE id = 1

-- name: owner_sees_every_chunk
-- The schema owner's switch transaction must see every chunk for its last check, and stay
-- the owner for the DDL that follows (entering ewall_writer would lose the ownership). A
-- superuser owner passes RLS anyway; any other owner passes through its own maintenance
-- policy, which reads this setting (migration 20261202_0036, chunks_owner_maintenance).
SELECT set_config('ewall.writer', 'on', true)

-- name: lock_chunks_exclusive
LOCK TABLE chunks IN ACCESS EXCLUSIVE MODE

-- name: switch_columns
-- Catalog-only: renames, and dropping the old vector column (its HNSW index goes with it).
-- chunks.embedding is nullable from here until finalise_not_null restores NOT NULL. The
-- trigger goes first: it reads the columns being renamed (and depends on the dropped one).
DROP TRIGGER IF EXISTS chunks_reembed_forget_next ON chunks;
ALTER TABLE chunks DROP COLUMN embedding, DROP COLUMN embedding_model;
ALTER TABLE chunks RENAME COLUMN embedding_next TO embedding;
ALTER TABLE chunks RENAME COLUMN embedding_next_model TO embedding_model;
DROP INDEX IF EXISTS ix_chunks_embedding_next_missing;
ALTER INDEX ix_chunks_embedding_next_hnsw RENAME TO ix_chunks_embedding_hnsw;
-- partitioned: each partition's index too (the names layout gives), or the next run would
-- find its wanted names taken by indexes attached to this parent, and could never attach
DO $rename$
DECLARE
    part record;
BEGIN
    FOR part IN
        SELECT n.nspname, i.relname AS index_name,
               left(p.relname, 40) || '_embedding_hnsw' AS live_name
        FROM pg_inherits h
        JOIN pg_class i ON i.oid = h.inhrelid
        JOIN pg_index x ON x.indexrelid = i.oid
        JOIN pg_class p ON p.oid = x.indrelid
        JOIN pg_namespace n ON n.oid = i.relnamespace
        WHERE h.inhparent = to_regclass('public.ix_chunks_embedding_hnsw')
          AND i.relname = left(p.relname, 40) || '_embedding_next_hnsw'
    LOOP
        EXECUTE format('ALTER INDEX %I.%I RENAME TO %I',
                       part.nspname, part.index_name, part.live_name);
    END LOOP;
END
$rename$

-- name: not_null_check_add
-- NOT NULL again without a long lock: a NOT VALID check (brief lock), validated under
-- SHARE UPDATE EXCLUSIVE (reads and writes go on), then SET NOT NULL skips its scan.
ALTER TABLE chunks ADD CONSTRAINT ck_chunks_embedding_present
    CHECK (embedding IS NOT NULL) NOT VALID

-- name: not_null_check_validate
ALTER TABLE chunks VALIDATE CONSTRAINT ck_chunks_embedding_present

-- name: not_null_set
ALTER TABLE chunks ALTER COLUMN embedding SET NOT NULL;
ALTER TABLE chunks DROP CONSTRAINT ck_chunks_embedding_present

-- name: embedding_nullable
SELECT NOT attnotnull AS nullable FROM pg_attribute
WHERE attrelid = to_regclass('public.chunks') AND attname = 'embedding' AND NOT attisdropped

-- name: check_constraint_exists
SELECT EXISTS (SELECT 1 FROM pg_constraint
               WHERE conrelid = to_regclass('public.chunks')
                 AND conname = 'ck_chunks_embedding_present') AS present

-- name: try_run_lock
-- One `ewall reembed` at a time (session-level advisory lock on the owner's connection).
SELECT pg_try_advisory_lock(hashtext('ewall.reembed')) AS locked

-- name: release_run_lock
SELECT pg_advisory_unlock(hashtext('ewall.reembed')) AS released
