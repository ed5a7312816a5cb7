-- Training text for `ewall model adapt` (app/model/repository.py). Only chunks and their
-- documents are read, never the evaluation tables: no evaluation question can become a
-- training pair. The caller's access is applied (RLS and the same predicate), so a model
-- trained as a person learns only from what that person may read.

-- name: training_chunks
SELECT d.source || ':' || d.external_id AS document_key,
       d.source, d.doc_type, d.title, c.section_path, c.ordinal, c.body
FROM chunks c
JOIN documents d ON d.document_id = c.document_id
WHERE c.wall_group_id = ANY(CAST(:wall_groups AS text[]))
  AND c.source_acl_id = ANY(CAST(:source_acls AS text[]))
  AND NOT c.suppressed
  AND d.status = 'active'
  AND d.search_state = 'active'
ORDER BY document_key, c.ordinal
