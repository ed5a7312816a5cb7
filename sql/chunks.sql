-- The chunks table's physical layout (migration 20261201_0031, docs/scale-out.md).

-- name: layout
-- Partitions (0: a plain table), the embedding's type and the rows, from the catalog.
SELECT (SELECT count(*) FROM pg_inherits
        WHERE inhparent = to_regclass('public.chunks')) AS partitions,
       (SELECT format_type(atttypid, NULL) FROM pg_attribute
        WHERE attrelid = to_regclass('public.chunks') AND attname = 'embedding') AS storage,
       (SELECT CAST(reltuples AS bigint) FROM pg_class
        WHERE oid = to_regclass('public.chunks')) AS estimated_rows,
       -- kept exact by the chunks triggers (what the layout advice reads)
       (SELECT n_chunks FROM corpus_stats WHERE id = 1) AS counted_rows

-- name: archives
-- Earlier layouts kept by ewall_chunks_relayout (nothing is dropped for the operator).
SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes
FROM pg_class c
WHERE c.relnamespace = CAST('public' AS regnamespace)
  AND c.relname ~ '^chunks_before_[0-9t]+$'
  AND c.relkind IN ('r', 'p')
ORDER BY c.relname

-- name: lock_timeout
-- Give up instead of queueing: a waiting ACCESS EXCLUSIVE request blocks every reader.
SELECT set_config('lock_timeout', CAST(:ms AS text) || 'ms', true)

-- name: relayout
SELECT ewall_chunks_relayout(CAST(:partitions AS integer), CAST(:storage AS text)) AS archive
