-- Relevance sets, their queries and graded judgements, and saved evaluation runs
-- (app/evaluation/repository.py).

-- name: set_by_name
SELECT s.set_id, s.name, s.description, s.created_by, s.created_at,
       (SELECT count(*) FROM relevance_queries q WHERE q.set_id = s.set_id) AS queries
FROM relevance_sets s
WHERE s.name = :name

-- name: all_sets
SELECT s.set_id, s.name, s.description, s.created_by, s.created_at,
       coalesce(c.n, 0) AS queries
FROM relevance_sets s
LEFT JOIN (SELECT set_id, count(*) AS n FROM relevance_queries GROUP BY set_id) c
       ON c.set_id = s.set_id
ORDER BY s.name

-- name: insert_set_if_absent
INSERT INTO relevance_sets (name, description, created_by)
VALUES (:name, :description, :created_by)
ON CONFLICT (name) DO NOTHING

-- name: update_set_description
UPDATE relevance_sets SET description = :description WHERE name = :name

-- name: set_id_by_name
SELECT set_id FROM relevance_sets WHERE name = :name

-- name: delete_runs_of_set
-- eval_runs.set_id has no cascade: a set's saved runs go with it.
DELETE FROM eval_runs WHERE set_id = :set_id

-- name: delete_set
DELETE FROM relevance_sets WHERE set_id = :set_id

-- name: upsert_queries
-- Existing keys get the new text and person.
INSERT INTO relevance_queries (set_id, query_key, text, as_person)
SELECT :set_id, t.query_key, t.text, t.as_person
FROM unnest(CAST(:keys AS text[]), CAST(:texts AS text[]), CAST(:as_persons AS text[]))
     AS t(query_key, text, as_person)
ON CONFLICT (set_id, query_key) DO UPDATE
SET text = EXCLUDED.text, as_person = EXCLUDED.as_person
RETURNING query_key, query_id

-- name: delete_queries_except
DELETE FROM relevance_queries
WHERE set_id = :set_id AND query_key <> ALL(CAST(:keep AS text[]))

-- name: delete_judgements_of_queries
-- A query whose text changed is another question: its judgements were made for the old one
DELETE FROM relevance_judgements WHERE query_id = ANY(CAST(:query_ids AS bigint[]))

-- name: upsert_judgements
-- The same grade again is no change: the judgement keeps the time it was made, so reloading
-- a shipped set is a true no-op.
INSERT INTO relevance_judgements (query_id, target_kind, target_id, grade, judged_by, judged_at)
SELECT * FROM unnest(CAST(:query_ids AS bigint[]), CAST(:target_kinds AS text[]),
                     CAST(:target_ids AS text[]), CAST(:grades AS smallint[]),
                     CAST(:judged_by AS text[]), CAST(:judged_at AS timestamptz[]))
ON CONFLICT (query_id, target_kind, target_id, judged_by) DO UPDATE
SET grade = EXCLUDED.grade, judged_at = EXCLUDED.judged_at
WHERE relevance_judgements.grade <> EXCLUDED.grade

-- name: queries_of_set
SELECT query_id, query_key, text, as_person
FROM relevance_queries
WHERE set_id = :set_id
ORDER BY query_id

-- name: judgements_of_set
-- All judgements of the set, or only one rater's when :judged_by is not null.
SELECT q.query_key, j.target_kind, j.target_id, j.grade, j.judged_by, j.judged_at
FROM relevance_judgements j
JOIN relevance_queries q ON q.query_id = j.query_id
WHERE q.set_id = :set_id
  AND (CAST(:judged_by AS text) IS NULL OR j.judged_by = CAST(:judged_by AS text))
ORDER BY q.query_id, j.target_kind, j.target_id, j.judged_by

-- name: query_id_by_key
-- Locked FOR KEY SHARE until commit (a judgement is written next): a set replaced at the
-- same time deletes the query after this transaction, or before it and this finds none.
SELECT query_id FROM relevance_queries WHERE set_id = :set_id AND query_key = :query_key
FOR KEY SHARE

-- name: count_rated_queries
-- How many of the set's queries this person has judged at least one target of.
SELECT count(DISTINCT q.query_id)
FROM relevance_queries q
JOIN relevance_judgements j ON j.query_id = q.query_id
WHERE q.set_id = :set_id AND j.judged_by = :person_id

-- name: chunks_of_documents
-- The chunks of these (source, external_id) documents that the person may read (the
-- visibility rule; the caller's RLS access applies too).
SELECT d.source, d.external_id, c.chunk_id
FROM unnest(CAST(:sources AS text[]), CAST(:external_ids AS text[])) AS t(source, eid)
JOIN documents d ON d.source = t.source AND d.external_id = t.eid
JOIN chunks c ON c.document_id = d.document_id
WHERE ewall_chunk_visible(c.wall_group_id, c.source_acl_id, c.matter_id, c.suppressed,
                          CAST(:wall_groups AS text[]), CAST(:source_acl_ids AS text[]),
                          (SELECT ewall_retag_pending()))

-- name: insert_run
INSERT INTO eval_runs (run_id, set_id, person_id, config, metrics, per_query)
VALUES (:run_id, :set_id, :person_id, CAST(:config AS jsonb), CAST(:metrics AS jsonb),
        CAST(:per_query AS jsonb))

-- name: run_by_id
SELECT run_id, config, metrics, per_query FROM eval_runs WHERE run_id = :run_id
