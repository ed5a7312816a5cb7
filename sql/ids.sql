-- Ids of the matrix stored in another form than NFC, and their re-keying (app/matrix/rekey.py).
--
-- Ids of people, clients and matters are read in NFC since 2026-12-07 (app/types.py); those
-- stored decomposed before are found here and moved to their NFC form, in every table that
-- keeps the id as a key or as what it refers to. search_postings follows chunks (its
-- trigger rebuilds a document's postings when its chunks' matter changes). Left as written:
-- the audit chains (audit_retrievals, audit_retrieval_results, gate_events, policy_events
-- are never rewritten), the history columns that name who did something (created_by,
-- started_by, judged_by, lifted_by), the raw ids a source gave (client_raw, matter_raw) and
-- the rate limits' buckets and slots (short-lived; a token's subject is NFC already).
-- The mapping travels as two arrays of equal length, :old_ids and :new_ids.

-- name: not_nfc
-- Every stored id that is not in NFC: its kind, where it is stored and in how many rows.
-- PostgreSQL's IS NFC NORMALIZED finds them (an index-only scan where one exists); the NFC
-- form that the re-key writes is Python's, as the API reads ids (app/types.py).
SELECT 'person' AS kind, 'people' AS tbl, 'person_id' AS col, person_id AS id, count(*) AS n
FROM people WHERE person_id IS NOT NFC NORMALIZED GROUP BY person_id
UNION ALL
SELECT 'person', 'matter_team', 'person_id', person_id, count(*)
FROM matter_team WHERE person_id IS NOT NFC NORMALIZED GROUP BY person_id
UNION ALL
SELECT 'person', 'wall_people', 'person_id', person_id, count(*)
FROM wall_people WHERE person_id IS NOT NFC NORMALIZED GROUP BY person_id
UNION ALL
SELECT 'person', 'person_aliases', 'person_id', person_id, count(*)
FROM person_aliases WHERE person_id IS NOT NFC NORMALIZED GROUP BY person_id
UNION ALL
SELECT 'person', 'console_sessions', 'person_id', person_id, count(*)
FROM console_sessions WHERE person_id IS NOT NFC NORMALIZED GROUP BY person_id
UNION ALL
SELECT 'person', 'jobs', 'person_id', person_id, count(*)
FROM jobs WHERE person_id IS NOT NFC NORMALIZED GROUP BY person_id
UNION ALL
SELECT 'person', 'eval_runs', 'person_id', person_id, count(*)
FROM eval_runs WHERE person_id IS NOT NFC NORMALIZED GROUP BY person_id
UNION ALL
SELECT 'person', 'relevance_queries', 'as_person', as_person, count(*)
FROM relevance_queries WHERE as_person IS NOT NFC NORMALIZED GROUP BY as_person
UNION ALL
SELECT 'client', 'clients', 'client_id', client_id, count(*)
FROM clients WHERE client_id IS NOT NFC NORMALIZED GROUP BY client_id
UNION ALL
SELECT 'client', 'clients', 'parent_id', parent_id, count(*)
FROM clients WHERE parent_id IS NOT NFC NORMALIZED GROUP BY parent_id
UNION ALL
SELECT 'client', 'matters', 'client_id', client_id, count(*)
FROM matters WHERE client_id IS NOT NFC NORMALIZED GROUP BY client_id
UNION ALL
SELECT 'client', 'wall_protected_clients', 'client_id', client_id, count(*)
FROM wall_protected_clients WHERE client_id IS NOT NFC NORMALIZED GROUP BY client_id
UNION ALL
SELECT 'client', 'documents', 'client_id', client_id, count(*)
FROM documents WHERE client_id IS NOT NFC NORMALIZED GROUP BY client_id
UNION ALL
SELECT 'client', 'chunks', 'client_id', client_id, count(*)
FROM chunks WHERE client_id IS NOT NFC NORMALIZED GROUP BY client_id
UNION ALL
SELECT 'matter', 'matters', 'matter_id', matter_id, count(*)
FROM matters WHERE matter_id IS NOT NFC NORMALIZED GROUP BY matter_id
UNION ALL
SELECT 'matter', 'matter_parties', 'matter_id', matter_id, count(*)
FROM matter_parties WHERE matter_id IS NOT NFC NORMALIZED GROUP BY matter_id
UNION ALL
SELECT 'matter', 'matter_team', 'matter_id', matter_id, count(*)
FROM matter_team WHERE matter_id IS NOT NFC NORMALIZED GROUP BY matter_id
UNION ALL
SELECT 'matter', 'matter_wall_groups', 'matter_id', matter_id, count(*)
FROM matter_wall_groups WHERE matter_id IS NOT NFC NORMALIZED GROUP BY matter_id
UNION ALL
SELECT 'matter', 'wall_protected_matters', 'matter_id', matter_id, count(*)
FROM wall_protected_matters WHERE matter_id IS NOT NFC NORMALIZED GROUP BY matter_id
UNION ALL
SELECT 'matter', 'retag_pending', 'matter_id', matter_id, count(*)
FROM retag_pending WHERE matter_id IS NOT NFC NORMALIZED GROUP BY matter_id
UNION ALL
SELECT 'matter', 'documents', 'matter_id', matter_id, count(*)
FROM documents WHERE matter_id IS NOT NFC NORMALIZED GROUP BY matter_id
UNION ALL
SELECT 'matter', 'chunks', 'matter_id', matter_id, count(*)
FROM chunks WHERE matter_id IS NOT NFC NORMALIZED GROUP BY matter_id

-- name: any_matrix_id_not_nfc
-- Whether a person, client or matter of the matrix is stored in another form than NFC: the
-- start-up warning and /readyz (every other place holds ids of these three tables).
SELECT EXISTS (SELECT 1 FROM people WHERE person_id IS NOT NFC NORMALIZED)
    OR EXISTS (SELECT 1 FROM clients WHERE client_id IS NOT NFC NORMALIZED)
    OR EXISTS (SELECT 1 FROM matters WHERE matter_id IS NOT NFC NORMALIZED)

-- name: people_stored
SELECT person_id FROM people WHERE person_id = ANY(CAST(:ids AS text[]))

-- name: clients_stored
SELECT client_id FROM clients WHERE client_id = ANY(CAST(:ids AS text[]))

-- name: matters_stored
SELECT matter_id FROM matters WHERE matter_id = ANY(CAST(:ids AS text[]))

-- name: lock_people
-- The rows to move, locked against a concurrent write of the same people until commit.
SELECT person_id FROM people WHERE person_id = ANY(CAST(:old_ids AS text[])) FOR UPDATE

-- name: lock_clients
SELECT client_id FROM clients WHERE client_id = ANY(CAST(:old_ids AS text[])) FOR UPDATE

-- name: lock_matters
SELECT matter_id FROM matters WHERE matter_id = ANY(CAST(:old_ids AS text[])) FOR UPDATE

-- People: a copy under the NFC id, every reference moved to it, the old row deleted (the
-- foreign keys have no ON UPDATE CASCADE; each statement leaves them satisfied).

-- name: copy_people
INSERT INTO people (person_id, name, active, created_at, updated_at)
SELECT m.new_id, p.name, p.active, p.created_at, p.updated_at
FROM people p
JOIN unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
  ON p.person_id = m.old_id

-- name: move_matter_team_people
UPDATE matter_team t SET person_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE t.person_id = m.old_id

-- name: move_wall_people
UPDATE wall_people w SET person_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE w.person_id = m.old_id

-- name: move_person_aliases
UPDATE person_aliases a SET person_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE a.person_id = m.old_id

-- name: move_console_sessions
UPDATE console_sessions s SET person_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE s.person_id = m.old_id

-- name: move_jobs
UPDATE jobs j SET person_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE j.person_id = m.old_id

-- name: move_eval_runs
UPDATE eval_runs e SET person_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE e.person_id = m.old_id

-- name: move_relevance_queries
UPDATE relevance_queries q SET as_person = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE q.as_person = m.old_id

-- name: delete_people
DELETE FROM people WHERE person_id = ANY(CAST(:old_ids AS text[]))

-- Clients.

-- name: copy_clients
INSERT INTO clients (client_id, name, name_norm, parent_id, created_at, updated_at)
SELECT m.new_id, c.name, c.name_norm, c.parent_id, c.created_at, c.updated_at
FROM clients c
JOIN unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
  ON c.client_id = m.old_id

-- name: move_client_parents
UPDATE clients c SET parent_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE c.parent_id = m.old_id

-- name: move_matter_clients
UPDATE matters x SET client_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE x.client_id = m.old_id

-- name: move_wall_protected_clients
UPDATE wall_protected_clients w SET client_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE w.client_id = m.old_id

-- name: move_document_clients
UPDATE documents d SET client_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE d.client_id = m.old_id

-- name: move_chunk_clients
UPDATE chunks c SET client_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE c.client_id = m.old_id

-- name: delete_clients
DELETE FROM clients WHERE client_id = ANY(CAST(:old_ids AS text[]))

-- Matters.

-- name: copy_matters
INSERT INTO matters (matter_id, client_id, title, status, created_at, updated_at)
SELECT m.new_id, x.client_id, x.title, x.status, x.created_at, x.updated_at
FROM matters x
JOIN unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
  ON x.matter_id = m.old_id

-- name: move_matter_parties
UPDATE matter_parties p SET matter_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE p.matter_id = m.old_id

-- name: move_matter_team_matters
UPDATE matter_team t SET matter_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE t.matter_id = m.old_id

-- name: move_matter_wall_groups
UPDATE matter_wall_groups g SET matter_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE g.matter_id = m.old_id

-- name: move_wall_protected_matters
UPDATE wall_protected_matters w SET matter_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE w.matter_id = m.old_id

-- name: move_retag_pending
UPDATE retag_pending r SET matter_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE r.matter_id = m.old_id

-- name: move_document_matters
UPDATE documents d SET matter_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE d.matter_id = m.old_id

-- name: move_chunk_matters
-- In writer mode; the chunks' trigger rebuilds their documents' postings under the new id.
UPDATE chunks c SET matter_id = m.new_id
FROM unnest(CAST(:old_ids AS text[]), CAST(:new_ids AS text[])) AS m(old_id, new_id)
WHERE c.matter_id = m.old_id

-- name: delete_matters
DELETE FROM matters WHERE matter_id = ANY(CAST(:old_ids AS text[]))
