-- What the demo load reports about the database it loaded into (app/demo/repository.py).

-- name: summary_counts
-- Counts over the whole firm. Counting chunks reads past the chunks RLS policy: the caller
-- marks its transaction as a writer and returns only these numbers.
SELECT
    (SELECT count(*) FROM people) AS people,
    (SELECT count(*) FROM clients) AS clients,
    (SELECT count(*) FROM matters) AS matters,
    (SELECT count(*) FROM walls) AS walls,
    (SELECT count(*) FROM walls
      WHERE lifted_at IS NULL
        AND (effective_from IS NULL OR effective_from <= now())
        AND (effective_until IS NULL OR now() < effective_until)) AS active_walls,
    (SELECT count(*) FROM documents) AS documents,
    (SELECT count(*) FROM chunks) AS chunks,
    (SELECT count(*) FROM documents WHERE status = 'quarantined') AS quarantined_documents,
    (SELECT version FROM policy_state WHERE id = 1) AS policy_version

-- name: quarantined_documents
SELECT source, external_id, title, quarantine_reason
FROM documents
WHERE status = 'quarantined'
ORDER BY source, external_id

-- name: has_matters_or_documents
SELECT EXISTS (SELECT 1 FROM matters) OR EXISTS (SELECT 1 FROM documents)
