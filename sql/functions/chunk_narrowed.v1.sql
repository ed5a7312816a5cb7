-- The caller's narrowing filters on a chunk (migration 20261208_0059): the search's
-- filters (doc_types, sources, matter_ids, the modified range) and a bound session's
-- matter (public sources, which have no matter, stay in). NULL: no such filter. Each only
-- removes rows. The hybrid statement's legs (sql/search.sql) each call it beside the
-- visibility rule; it was written out four times there.
--
-- Plans: like ewall_chunk_visible, a LANGUAGE sql function with a single expression,
-- IMMUTABLE, not STRICT, so the planner inlines it; the filters are the caller's bound
-- parameters, constants when the statement is planned, so a filter that is NULL folds away
-- and one that is set is the statement's own clause (the btree on matter_id serves a
-- matter filter as before).
CREATE OR REPLACE FUNCTION ewall_chunk_narrowed(
    doc_type text, source text, matter_id text, modified_at timestamptz,
    doc_types text[], sources text[], matter_ids text[], session_matter_id text,
    modified_from timestamptz, modified_to timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT (doc_types IS NULL OR doc_type = ANY(doc_types))
       AND (sources IS NULL OR source = ANY(sources))
       AND (matter_ids IS NULL OR matter_id = ANY(matter_ids))
       AND (session_matter_id IS NULL OR matter_id = session_matter_id OR matter_id IS NULL)
       AND (modified_from IS NULL OR modified_at >= modified_from)
       AND (modified_to IS NULL OR modified_at <= modified_to)
$fn$;
