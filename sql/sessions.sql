-- Sessions and wall exposure, read from the retrieval audit.
--
-- A session is a caller-chosen id (a chat thread, an agent run) that searches carry; it
-- is scoped by person: two people who pick the same id have two sessions. A session bound
-- to a matter keeps the binding of its latest bound search.

-- name: lock_session
-- Until the transaction ends, no other search of this person's unbound session binds it:
-- a session's first binding is the only change its binding ever makes (rebinding is
-- refused), so only searches that find it unbound take this. Exclusive for a search that
-- would bind it, shared (lock_session_shared) for one that reads it unbound: two first
-- searches naming two matters would otherwise both bind it, and an unbound search would
-- be recorded unnarrowed in a session bound meanwhile. A key's hash: two sessions that
-- share one only wait for each other.
SELECT pg_advisory_xact_lock(:namespace, hashtext(:person_id || chr(31) || :session_id))

-- name: lock_session_shared
SELECT pg_advisory_xact_lock_shared(:namespace, hashtext(:person_id || chr(31) || :session_id))

-- name: session_binding
-- The matter the person's session is bound to, if any (ix_audit_retrievals_session_id_seq).
-- Also a binding recorded under the person's id decomposed (NFD), as versions before ids
-- were read in NFC recorded it (audit rows are never rewritten): the session stays bound.
SELECT session_matter_id
FROM audit_retrievals
WHERE session_id = :session_id
  AND person_id IN (CAST(:person_id AS text), normalize(CAST(:person_id AS text), NFD))
  AND session_matter_id IS NOT NULL
ORDER BY seq DESC
LIMIT 1

-- name: session_matters
-- Every matter a session's retrievals returned chunks of, per person (NULL matter: public
-- sources); :person_id NULL reads every person's part of the session (compliance). Every
-- audited result counts, the sections a collapsed search named under a hit (sub_rank > 0)
-- too: the session learnt of them, so they taint it as what it read does.
SELECT r.person_id, x.matter_id, count(x.chunk_id) AS chunks
FROM audit_retrievals r
LEFT JOIN audit_retrieval_results x ON x.retrieval_id = r.retrieval_id
WHERE r.session_id = :session_id
  AND (CAST(:person_id AS text) IS NULL OR r.person_id = CAST(:person_id AS text))
GROUP BY r.person_id, x.matter_id
ORDER BY r.person_id, x.matter_id

-- name: session_documents
-- Every document a session's retrievals returned chunks of, per person, with the matters the
-- retrievals recorded it under (read_in) and its matter and source ACL now (a document moved into another matter, or whose ACL changed since, is
-- judged as it is now), or, for one the firm no longer holds (deleted since), none: `gone`.
-- The document is the one its chunk id names (ewall_chunk_document), taken once per
-- document before uq_documents_source_external_id finds it. Reads documents, never chunks:
-- only matter and ACL ids, whether it is quarantined now and whether search may return it
-- now (search_state: a withdrawn or held decision is visible to no one) leave this
-- statement.
WITH read AS (
    SELECT r.person_id, ewall_chunk_document(x.chunk_id) AS document,
           array_remove(array_agg(DISTINCT x.matter_id), NULL) AS read_in
    FROM audit_retrievals r
    JOIN audit_retrieval_results x ON x.retrieval_id = r.retrieval_id
    WHERE r.session_id = :session_id
      AND (CAST(:person_id AS text) IS NULL OR r.person_id = CAST(:person_id AS text))
    GROUP BY r.person_id, ewall_chunk_document(x.chunk_id)
)
SELECT rd.person_id, rd.document, rd.read_in, d.matter_id, d.source_acl_id,
       d.document_id IS NULL AS gone,
       COALESCE(d.status = 'quarantined', false) AS quarantined,
       COALESCE(d.search_state, 'active') AS search_state
FROM read rd
LEFT JOIN documents d
  ON d.source = split_part(rd.document, ':', 1)
 AND d.external_id = substr(rd.document, length(split_part(rd.document, ':', 1)) + 2)
ORDER BY rd.person_id, rd.document

-- name: exposure
-- Who retrieved chunks of :matter_ids since :since, per person, session and matter, with the
-- documents (the one each chunk id names, "<source>:<external_id>"). Every audited result
-- counts as retrieved, the sections a collapsed search named under a hit too. A result
-- counts under the matter its retrieval recorded when that is one of :matter_ids, else
-- under the one of them that holds its document now: a document read elsewhere and refiled
-- under a protected matter was read all the same.
-- Only the rows of the people the wall denies are read and grouped. The conflict graph
-- decides who they are and passes them in one of two forms: :denied (an exclusionary wall:
-- a few people, and the readers the matrix does not know, whom every wall denies), or
-- :admitted (an inclusionary wall: everyone but its insiders). The retrievals come first, materialised:
-- for a few denied people that is their retrievals within the lookback
-- (ix_audit_retrievals_person_id_at), whose results then come by primary key, instead of
-- every result of a much-read matter joined back to its retrieval.
WITH candidates AS MATERIALIZED (
    SELECT r.retrieval_id, r.person_id, r.session_id, r.at
    FROM audit_retrievals r
    WHERE r.at >= CAST(:since AS timestamptz)
      AND (CAST(:denied AS text[]) IS NULL OR r.person_id = ANY(CAST(:denied AS text[])))
      AND (CAST(:admitted AS text[]) IS NULL OR r.person_id <> ALL(CAST(:admitted AS text[])))
),
counted AS (
    -- read under a covered matter
    SELECT r.person_id, r.session_id, r.at, x.chunk_id, x.matter_id,
           ewall_chunk_document(x.chunk_id) AS document
    FROM candidates r
    JOIN audit_retrieval_results x ON x.retrieval_id = r.retrieval_id
    WHERE x.matter_id = ANY(CAST(:matter_ids AS text[]))
      -- the candidates' results by primary key, not every result of the matters
      AND x.retrieval_id = ANY(ARRAY(SELECT retrieval_id FROM candidates))
    UNION ALL
    -- read elsewhere, of a document a covered matter holds now: from the documents, each
    -- one's results found by ix_audit_retrieval_results_document (a filter on every
    -- candidate's results would weigh them all: 13-18 times slower for an inclusionary wall)
    SELECT r.person_id, r.session_id, r.at, x.chunk_id, d.matter_id,
           ewall_chunk_document(x.chunk_id) AS document
    FROM documents d
    JOIN audit_retrieval_results x
      ON ewall_chunk_document(x.chunk_id) = d.source || ':' || d.external_id
    JOIN candidates r ON r.retrieval_id = x.retrieval_id
    WHERE d.matter_id = ANY(CAST(:matter_ids AS text[]))
      AND (x.matter_id IS NULL OR x.matter_id <> ALL(CAST(:matter_ids AS text[])))
)
SELECT person_id, session_id, matter_id,
       min(at) AS first_at, max(at) AS last_at,
       count(DISTINCT chunk_id) AS chunks,
       array_agg(DISTINCT document) AS documents
FROM counted
GROUP BY person_id, session_id, matter_id

-- name: readers
-- Everyone who ever made a retrieval (the caller keeps those its matrix snapshot does not
-- know: a stranger sees only unwalled matters, so every wall denies them). One probe of
-- ix_audit_retrievals_person_id_at per distinct reader (a skip scan), not a read of every
-- retrieval.
WITH RECURSIVE readers AS (
    (SELECT person_id FROM audit_retrievals ORDER BY person_id LIMIT 1)
    UNION ALL
    SELECT (SELECT r.person_id FROM audit_retrievals r
            WHERE r.person_id > readers.person_id ORDER BY r.person_id LIMIT 1)
    FROM readers
    WHERE readers.person_id IS NOT NULL
)
SELECT readers.person_id
FROM readers
WHERE readers.person_id IS NOT NULL

-- name: exposure_any
-- Whether anyone retrieved chunks of :matter_ids since :since, or of a document they hold
-- now (ix_audit_retrieval_results_document: one probe per document they hold, when nobody
-- read them); stops at the first row.
SELECT EXISTS (
    SELECT 1
    FROM audit_retrieval_results x
    JOIN audit_retrievals r ON r.retrieval_id = x.retrieval_id
    WHERE x.matter_id = ANY(CAST(:matter_ids AS text[]))
      AND r.at >= CAST(:since AS timestamptz)
) OR EXISTS (
    SELECT 1
    FROM documents d
    JOIN audit_retrieval_results x
      ON ewall_chunk_document(x.chunk_id) = d.source || ':' || d.external_id
    JOIN audit_retrievals r ON r.retrieval_id = x.retrieval_id
    WHERE d.matter_id = ANY(CAST(:matter_ids AS text[]))
      AND r.at >= CAST(:since AS timestamptz)
)

-- name: chunks_in_matters
-- Chunks a wall over :matter_ids would re-tag (run as a writer: a count, never rows).
SELECT count(*) FROM chunks WHERE matter_id = ANY(CAST(:matter_ids AS text[]))
