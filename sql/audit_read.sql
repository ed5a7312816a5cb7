-- Compliance reads of the audit log.

-- name: list_retrievals
-- Newest first; :before_seq is the cursor (the last seq of the previous page).
-- :hidden_matters (NULL: none) are the matters the reader may not see now
-- (app/walls/visibility.py): a result of one never satisfies the matter or chunk filter, so
-- a filter on a hidden matter, or on a chunk of one, matches as a filter on an unknown id
-- does (nothing), instead of confirming which of the reader's retrievals returned it.
-- :person_id and :matter_id (NFC, as the API reads ids) also match rows recorded under the
-- id decomposed (NFD), as versions before ids were read in NFC stored them: audit rows are
-- never rewritten, and `ewall ids normalize` re-keyed the matrix (docs/hardening.md). Two
-- values of an index (ix_audit_retrievals_person_id_at), not a function of every row.
SELECT r.*
FROM audit_retrievals r
WHERE (CAST(:person_id AS text) IS NULL
       OR r.person_id IN (CAST(:person_id AS text), normalize(CAST(:person_id AS text), NFD)))
  AND (CAST(:since AS timestamptz) IS NULL OR r.at >= CAST(:since AS timestamptz))
  AND (CAST(:until AS timestamptz) IS NULL OR r.at < CAST(:until AS timestamptz))
  AND (CAST(:before_seq AS bigint) IS NULL OR r.seq < CAST(:before_seq AS bigint))
  AND (CAST(:matter_id AS text) IS NULL OR EXISTS (
        SELECT 1 FROM audit_retrieval_results x
        WHERE x.retrieval_id = r.retrieval_id
          AND x.matter_id IN (CAST(:matter_id AS text), normalize(CAST(:matter_id AS text), NFD))
          AND (CAST(:hidden_matters AS text[]) IS NULL
               OR x.matter_id <> ALL(CAST(:hidden_matters AS text[])))))
  AND (CAST(:chunk_id AS text) IS NULL OR EXISTS (
        SELECT 1 FROM audit_retrieval_results x
        WHERE x.retrieval_id = r.retrieval_id AND x.chunk_id = CAST(:chunk_id AS text)
          -- found by its document (ix_audit_retrieval_results_document)
          AND ewall_chunk_document(x.chunk_id) = ewall_chunk_document(CAST(:chunk_id AS text))
          AND (x.matter_id IS NULL OR CAST(:hidden_matters AS text[]) IS NULL
               OR x.matter_id <> ALL(CAST(:hidden_matters AS text[])))))
  AND (CAST(:purpose AS text) IS NULL OR r.purpose = CAST(:purpose AS text))
  AND (CAST(:session_id AS text) IS NULL OR r.session_id = CAST(:session_id AS text))
ORDER BY r.seq DESC
LIMIT :limit

-- name: results_for
-- Every chunk each retrieval named: its hits (sub_rank 0) and the sections listed under them.
SELECT retrieval_id, rank, sub_rank, chunk_id, matter_id, content_sha256, score
FROM audit_retrieval_results
WHERE retrieval_id = ANY(:retrieval_ids)
ORDER BY retrieval_id, rank, sub_rank

-- name: export_retrievals
-- One page of an export. :after_seq continues it (and a later export) without gaps:
-- sequence numbers are taken under the chain head's row lock, so they follow commit order
-- (the times in `at` are taken before it).
SELECT r.*
FROM audit_retrievals r
WHERE (CAST(:since AS timestamptz) IS NULL OR r.at >= CAST(:since AS timestamptz))
  AND (CAST(:until AS timestamptz) IS NULL OR r.at < CAST(:until AS timestamptz))
  AND (CAST(:after_seq AS bigint) IS NULL OR r.seq > CAST(:after_seq AS bigint))
  AND r.seq <= CAST(:upto AS bigint)
ORDER BY r.seq
LIMIT :limit

-- name: last_retrieval_seq
-- Where an export ends: the chain as it stood when the export began (a slow reader of a
-- busy audit would otherwise chase its head for ever).
SELECT max(seq) FROM audit_retrievals

-- name: list_policy_events
-- :object_id finds an event by its subject or by any object its changes name (an import
-- is filed under one subject and changes many; ix_policy_events_changes), also under the
-- id decomposed (NFD), as events before ids were read in NFC recorded it (list_retrievals).
SELECT * FROM policy_events
WHERE (CAST(:since AS timestamptz) IS NULL OR at >= CAST(:since AS timestamptz))
  AND (CAST(:until AS timestamptz) IS NULL OR at < CAST(:until AS timestamptz))
  AND (CAST(:object_id AS text) IS NULL
       OR object_id IN (CAST(:object_id AS text), normalize(CAST(:object_id AS text), NFD))
       OR details -> 'changes' @> jsonb_build_array(jsonb_build_object('id', CAST(:object_id AS text)))
       OR details -> 'changes' @> jsonb_build_array(
              jsonb_build_object('id', normalize(CAST(:object_id AS text), NFD))))
  AND (CAST(:before_seq AS bigint) IS NULL OR seq < CAST(:before_seq AS bigint))
ORDER BY seq DESC
LIMIT :limit

-- name: list_gate_events
-- Newest first, like list_retrievals; :before_seq is the cursor.
-- :person_id also matches rows recorded under the id decomposed (list_retrievals says why).
SELECT * FROM gate_events
WHERE (CAST(:person_id AS text) IS NULL
       OR person_id IN (CAST(:person_id AS text), normalize(CAST(:person_id AS text), NFD)))
  AND (CAST(:gate AS text) IS NULL OR gate = CAST(:gate AS text))
  AND (CAST(:ok AS boolean) IS NULL OR ok = CAST(:ok AS boolean))
  AND (CAST(:session_id AS text) IS NULL OR request->>'session_id' = CAST(:session_id AS text))
  AND (CAST(:since AS timestamptz) IS NULL OR at >= CAST(:since AS timestamptz))
  AND (CAST(:until AS timestamptz) IS NULL OR at < CAST(:until AS timestamptz))
  AND (CAST(:before_seq AS bigint) IS NULL OR seq < CAST(:before_seq AS bigint))
ORDER BY seq DESC
LIMIT :limit

-- name: retrieval
SELECT * FROM audit_retrievals WHERE retrieval_id = :retrieval_id
