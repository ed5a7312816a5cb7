-- Training text for `ewall model adapt` (app/model/repository.py). Only chunks and their
-- documents are read, never the evaluation tables: no evaluation question can become a
-- training pair. The caller's access is applied (RLS and the visibility rule, so a matter
-- pending re-tag is left out as in a search), so a model trained as a person learns only
-- from what that person may read.

-- name: training_chunks
SELECT d.source || ':' || d.external_id AS document_key,
       d.source, d.doc_type, d.title, c.section_path, c.ordinal, c.body
FROM chunks c
JOIN documents d ON d.document_id = c.document_id
WHERE ewall_chunk_visible(c.wall_group_id, c.source_acl_id, c.matter_id, c.suppressed,
                          CAST(:wall_groups AS text[]), CAST(:source_acls AS text[]),
                          (SELECT ewall_retag_pending()))
  AND d.status = 'active'
  AND d.search_state = 'active'
ORDER BY document_key, c.ordinal
