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

-- name: insert_chunk
INSERT INTO chunks (chunk_id, document_id, source, external_id, client_id, matter_id,
                    wall_group_id, source_acl_id, doc_type, section_path, page_from, page_to,
                    ordinal, body, embedding, embedding_model, content_sha256, token_count,
                    suppressed, modified_at)
VALUES (:chunk_id, :document_id, :source, :external_id, :client_id, :matter_id,
        :wall_group_id, :source_acl_id, :doc_type, :section_path, :page_from, :page_to,
        :ordinal, :body, CAST(:embedding AS vector), CAST(:embedding_model AS text),
        :content_sha256, :token_count, :suppressed, :modified_at)

-- name: delete_chunks
DELETE FROM chunks WHERE chunk_id = ANY(:chunk_ids)

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
UPDATE chunks
SET ordinal = CAST(:ordinal AS integer), section_path = CAST(:section_path AS text),
    page_from = CAST(:page_from AS integer), page_to = CAST(:page_to AS integer)
WHERE chunk_id = :chunk_id
  AND (ordinal, section_path, page_from, page_to) IS DISTINCT FROM
      (CAST(:ordinal AS integer), CAST(:section_path AS text), CAST(:page_from AS integer),
       CAST(:page_to AS integer))

-- name: upsert_source_acl
INSERT INTO source_acls (source_acl_id, default_access, allow, deny, resolvable)
VALUES (:source_acl_id, :default_access, :allow, :deny, :resolvable)
ON CONFLICT (source_acl_id) DO NOTHING

-- name: matter_client
SELECT matter_id, client_id FROM matters WHERE matter_id = :matter_id

-- name: client_exists
SELECT 1 FROM clients WHERE client_id = :client_id
