-- Ingestion: documents are replaced in ONE transaction (a concurrent reader sees the old
-- version or the new one, never half). Chunks are content-addressed: unchanged chunks are
-- kept (a new vector only when their document's context changed), vanished ones deleted,
-- new ones inserted with their embeddings.

-- name: lock_document
SELECT document_id, status, client_id, matter_id, client_raw, matter_raw, doc_type, title,
       author, modified_at, source_acl_id, version, search_state, content_sha256, mime_type,
       source_url, metadata
FROM documents
WHERE source = :source AND external_id = :external_id
FOR UPDATE

-- name: lock_new_document
-- Serialises the first write of one document: two writers that both found no row take
-- this in turn, and the second then reads the row the first committed (a key's hash: two
-- documents that share one only wait for each other).
SELECT pg_advisory_xact_lock(:namespace, hashtext(:source || chr(31) || :external_id))

-- name: supersede_document_jobs
-- A write of a document (a push, a delete, a sync) is the latest word on it: the background
-- pushes of it queued before (kind 'ingest.document', app/ingest/router.py DOCUMENT_JOB;
-- for a job's own write, those older than it) are marked superseded, in the writer's
-- transaction under the document's lock, and find the mark when their turn comes.
UPDATE jobs
SET payload = jsonb_set(payload, '{superseded}', to_jsonb(CAST(:by AS text)))
WHERE kind = 'ingest.document'
  AND status IN ('queued', 'running')
  AND payload #>> '{document,source}' = :source
  AND payload #>> '{document,external_id}' = :external_id
  AND (CAST(:job_id AS bigint) IS NULL OR job_id < CAST(:job_id AS bigint))
  AND NOT payload ? 'superseded'

-- name: job_superseded
-- What superseded this background push, if anything (read under the document's lock).
SELECT payload ->> 'superseded' FROM jobs WHERE job_id = :job_id

-- name: insert_document
INSERT INTO documents (source, external_id, version, status, quarantine_reason, client_id,
                       matter_id, client_raw, matter_raw, doc_type, title, author, modified_at,
                       mime_type, content_sha256, source_acl_id, source_url, search_state,
                       metadata, last_run_id)
VALUES (:source, :external_id, :version, :status, :quarantine_reason, :client_id, :matter_id,
        :client_raw, :matter_raw, :doc_type, :title, :author, :modified_at, :mime_type,
        :content_sha256, :source_acl_id, :source_url, :search_state,
        CAST(:metadata AS jsonb), :last_run_id)
ON CONFLICT (source, external_id) DO NOTHING
RETURNING document_id

-- name: update_document
UPDATE documents
SET version = :version, status = :status, quarantine_reason = :quarantine_reason,
    client_id = :client_id, matter_id = :matter_id, client_raw = :client_raw,
    matter_raw = :matter_raw, doc_type = :doc_type, title = :title, author = :author,
    modified_at = :modified_at, mime_type = :mime_type, content_sha256 = :content_sha256,
    source_acl_id = :source_acl_id, source_url = :source_url, search_state = :search_state,
    metadata = CAST(:metadata AS jsonb), last_run_id = :last_run_id, updated_at = now()
WHERE document_id = :document_id

-- name: document_passages
-- A stored document's chunks in document order, with what their encoder input was made of
-- (app/embeddings.py passage_input): ingestion finds the kept chunks whose context changed.
SELECT chunk_id, section_path, body FROM chunks WHERE document_id = :document_id ORDER BY ordinal

-- name: refresh_embeddings
-- Kept chunks encoded again because their document's context (title, summary) changed.
UPDATE chunks AS c
SET embedding = CAST(v.embedding AS vector), embedding_model = CAST(:model_id AS text)
FROM unnest(CAST(:chunk_ids AS text[]), CAST(:embeddings AS text[])) AS v (chunk_id, embedding)
WHERE c.document_id = :document_id AND c.chunk_id = v.chunk_id

-- name: touch_embeddings
-- Kept chunks whose document's context (title, summary) changed where the live model has no
-- room for it beside the chunk: the live vector stays as it is. A re-embed run in progress
-- made its next vector from the old context, and the next model may have room for the new
-- one: the no-op update fires the run's trigger (chunks_reembed_forget_next, sql/reembed.sql),
-- which forgets that vector, and changes the row's version, so a batch that read it before
-- does not write it. Without an active run nothing is written.
UPDATE chunks AS c SET embedding = c.embedding
WHERE c.document_id = :document_id AND c.chunk_id = ANY(CAST(:chunk_ids AS text[]))
  AND EXISTS (SELECT 1 FROM reembed_runs WHERE status IN ('filling', 'indexing', 'switching'))

-- name: embeddings_by_content
-- Stored vectors of identical text in documents of the same title (another copy of a
-- document) with what their encoder input was made of (the chunk, its section, its
-- document's title and summary: app/embeddings.py passage_input). The caller reuses one only
-- where that input is its own; the title test keeps boilerplate shared by thousands of
-- documents from coming back thousands of times. One row per distinct input; writer mode.
SELECT DISTINCT ON (c.content_sha256, c.section_path, s.summary)
       c.content_sha256, c.section_path, s.summary, CAST(c.embedding AS text) AS embedding
FROM chunks c
JOIN documents d ON d.document_id = c.document_id
LEFT JOIN LATERAL (
    SELECT x.body AS summary FROM chunks x
    WHERE x.document_id = c.document_id AND ewall_is_summary_section(x.section_path)
    ORDER BY x.ordinal LIMIT 1
) AS s ON true
WHERE c.content_sha256 = ANY(:hashes) AND d.title = :title

-- name: insert_chunks
-- Every new chunk of one document in ONE statement (arrays, one element per chunk): the
-- statement triggers on chunks (the document's postings and statistics) then run once per
-- document, not once per chunk; row by row, a document of 700 chunks rebuilt its postings
-- 700 times (quadratic: half an hour), holding the corpus statistics row all along.
INSERT INTO chunks (chunk_id, document_id, source, external_id, client_id, matter_id,
                    wall_group_id, source_acl_id, doc_type, section_path, page_from, page_to,
                    ordinal, body, embedding, embedding_model, content_sha256, token_count,
                    suppressed, modified_at)
SELECT r.chunk_id, :document_id, :source, :external_id, CAST(:client_id AS text),
       CAST(:matter_id AS text), :wall_group_id, :source_acl_id, :doc_type, r.section_path,
       r.page_from, r.page_to, r.ordinal, r.body, CAST(r.embedding AS vector),
       CAST(:embedding_model AS text), r.content_sha256, r.token_count, :suppressed,
       CAST(:modified_at AS timestamptz)
FROM unnest(CAST(:chunk_ids AS text[]), CAST(:section_paths AS text[]),
            CAST(:pages_from AS integer[]), CAST(:pages_to AS integer[]),
            CAST(:ordinals AS integer[]), CAST(:bodies AS text[]), CAST(:embeddings AS text[]),
            CAST(:content_hashes AS text[]), CAST(:token_counts AS integer[]))
     AS r (chunk_id, section_path, page_from, page_to, ordinal, body, embedding,
           content_sha256, token_count)

-- name: delete_chunks
DELETE FROM chunks WHERE chunk_id = ANY(:chunk_ids)

-- name: unknown_denied_groups
SELECT DISTINCT d.principal
FROM source_acls a, unnest(a.deny_groups) AS d(principal)
WHERE a.deny_groups <> '{}'
  AND split_part(d.principal, ':', 1) = :source
  AND substr(d.principal, length(:source) + 8)
      NOT IN (SELECT g.group_id FROM source_groups g WHERE g.source = :source)
ORDER BY d.principal
LIMIT :limit

-- name: set_document_acl
-- The access rules read for a document whose content could not be read, or "nobody" (access
-- revoked, the deletion held): they stand at once. Without its input fingerprint, the next
-- read is no "unchanged" skip: it writes the document's rules again.
WITH doc AS (
    UPDATE documents SET source_acl_id = :acl_id, metadata = metadata - 'input_sha256'
    WHERE source = :source AND external_id = :external_id AND source_acl_id <> :acl_id
    RETURNING document_id
), moved AS (
    UPDATE chunks SET source_acl_id = :acl_id
    FROM doc WHERE chunks.document_id = doc.document_id
    RETURNING chunks.document_id
)
SELECT document_id FROM doc

-- name: update_chunk_metadata
-- Metadata of a document changed (matter, group, ACL, type, date): its unchanged chunks
-- follow without re-embedding.
UPDATE chunks
SET client_id = CAST(:client_id AS text), matter_id = CAST(:matter_id AS text),
    wall_group_id = :wall_group_id, source_acl_id = :source_acl_id, doc_type = :doc_type,
    suppressed = :suppressed, modified_at = CAST(:modified_at AS timestamptz)
WHERE document_id = :document_id
  AND (client_id IS DISTINCT FROM CAST(:client_id AS text)
       OR matter_id IS DISTINCT FROM CAST(:matter_id AS text)
       OR wall_group_id IS DISTINCT FROM :wall_group_id
       OR source_acl_id IS DISTINCT FROM :source_acl_id OR doc_type IS DISTINCT FROM :doc_type
       OR suppressed IS DISTINCT FROM :suppressed
       OR modified_at IS DISTINCT FROM CAST(:modified_at AS timestamptz))

-- name: update_chunk_positions
-- Kept chunks whose place in the document moved, in ONE statement (its statement triggers
-- once, as insert_chunks).
UPDATE chunks c
SET ordinal = r.ordinal, section_path = r.section_path, page_from = r.page_from,
    page_to = r.page_to
FROM unnest(CAST(:chunk_ids AS text[]), CAST(:ordinals AS integer[]),
            CAST(:section_paths AS text[]), CAST(:pages_from AS integer[]),
            CAST(:pages_to AS integer[]))
     AS r (chunk_id, ordinal, section_path, page_from, page_to)
WHERE c.chunk_id = r.chunk_id
  AND (c.ordinal, c.section_path, c.page_from, c.page_to) IS DISTINCT FROM
      (r.ordinal, r.section_path, r.page_from, r.page_to)

-- name: upsert_source_acl
INSERT INTO source_acls (source_acl_id, default_access, allow, deny, resolvable)
VALUES (:source_acl_id, :default_access, :allow, :deny, :resolvable)
ON CONFLICT (source_acl_id) DO NOTHING

-- name: matter_client
SELECT matter_id, client_id FROM matters WHERE matter_id = :matter_id

-- name: client_exists
SELECT 1 FROM clients WHERE client_id = :client_id

-- name: source_acl_rules
-- A document's stored rules, to judge whether a queued push only narrows them
-- (app.ingest.document_write.access_until_written).
SELECT default_access, allow, deny, resolvable FROM source_acls
WHERE source_acl_id = :source_acl_id
