-- Case law: the withdrawal state of each ECLI (case_law) and the visibility of its stored
-- document (documents.search_state, chunks.suppressed). Run by app/caselaw/repository.py.

-- name: case_by_ecli
SELECT ecli, court, decision_date, area_of_law, procedure, relations, withdrawn,
       replaced_by, set_aside_by, state, held_reason, crosscheck, updated_at
FROM case_law
WHERE ecli = :ecli

-- name: case_by_ecli_for_update
SELECT ecli, court, decision_date, area_of_law, procedure, relations, withdrawn,
       replaced_by, set_aside_by, state, held_reason, crosscheck, updated_at
FROM case_law
WHERE ecli = :ecli
FOR UPDATE

-- name: insert_case
INSERT INTO case_law (ecli, court, decision_date, area_of_law, procedure, relations,
                      withdrawn, replaced_by, set_aside_by, state, held_reason, crosscheck)
VALUES (:ecli, :court, :decision_date, :area_of_law, :procedure, CAST(:relations AS jsonb),
        :withdrawn, :replaced_by, :set_aside_by, :state, :held_reason,
        CAST(:crosscheck AS jsonb))

-- name: update_case
UPDATE case_law
SET court = :court, decision_date = :decision_date, area_of_law = :area_of_law,
    procedure = :procedure, relations = CAST(:relations AS jsonb), withdrawn = :withdrawn,
    replaced_by = :replaced_by, set_aside_by = :set_aside_by, state = :state,
    held_reason = :held_reason, crosscheck = CAST(:crosscheck AS jsonb), updated_at = now()
WHERE ecli = :ecli

-- name: confirm_case_state
UPDATE case_law SET state = :state, held_reason = NULL, updated_at = now()
WHERE ecli = :ecli

-- name: set_document_search_state
UPDATE documents SET search_state = :state, updated_at = now()
WHERE source = :source AND external_id = :ecli AND search_state <> :state
RETURNING document_id

-- name: set_chunks_suppressed
UPDATE chunks SET suppressed = :suppressed
WHERE document_id = :document_id AND suppressed <> :suppressed

-- name: held_cases
SELECT ecli, held_reason, updated_at FROM case_law
WHERE state = 'held'
ORDER BY updated_at, ecli
LIMIT :limit

-- name: list_cases
SELECT ecli, state, held_reason, court, decision_date, updated_at FROM case_law
WHERE CAST(:state AS text) IS NULL OR state = CAST(:state AS text)
ORDER BY ecli
LIMIT :limit

-- name: case_document
SELECT d.document_id, d.search_state, d.title,
       (SELECT count(*) FROM chunks c WHERE c.document_id = d.document_id) AS chunks,
       (SELECT count(*) FROM chunks c
        WHERE c.document_id = d.document_id AND NOT c.suppressed) AS searchable_chunks
FROM documents d
WHERE d.source = :source AND d.external_id = :ecli

-- name: run_events_of_kinds
SELECT kind, external_id, reason, details FROM ingest_run_events
WHERE run_id = :run_id AND kind = ANY(:kinds)
ORDER BY seq
LIMIT 5000
