-- What a person's ranking statistics must leave out while a matter is pending re-tag
-- (migration 20261205_0052; architecture invariant 12).
--
-- The statistics (search_key_stats, search_key_lexeme_stats) are kept per access key by
-- triggers on chunks. When a wall moves a matter to another wall group, its chunks keep the
-- old key until the re-tag worker has moved them; meanwhile the visibility rule hides the
-- matter from everyone (fail closed), but its chunks were still counted under the old key,
-- so the searches of those who hold that key weighed rows they could not see. A search now
-- subtracts these counts: its statistics are those of the rows it may see, during a re-tag
-- as after it.
--
-- For the keys passed (the person's allowed wall groups and source ACLs): the chunks of the
-- pending matters that are not suppressed (lexeme NULL), and per lexeme of ``lexemes`` the
-- chunks among them that hold it, counted from body_tsv as the statistics triggers count
-- (sql/functions/key_stats.v1.sql). Nothing pending (the usual case): no row is read.
--
-- SECURITY DEFINER: the service role cannot read the chunks of a pending matter (the
-- visibility rule hides them). The owner reads them, as a superuser or through its own
-- maintenance policy (ewall.writer, set for the call only; migration 20261202_0036), and
-- returns numbers only, for keys the caller names, as the statistics tables already show
-- the service role for every key. EXECUTE is granted to the service role and its writer role only.

CREATE OR REPLACE FUNCTION ewall_pending_key_counts(
    wall_groups text[], source_acl_ids text[], lexemes text[]
) RETURNS TABLE (lexeme text, n_chunks bigint)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path TO pg_catalog, public, pg_temp
SET "ewall.writer" TO 'on'
AS $fn$
    WITH pending AS MATERIALIZED (
        SELECT coalesce(array_agg(r.matter_id), '{}') AS matters FROM public.retag_pending AS r
    ), hidden AS MATERIALIZED (
        SELECT c.body_tsv
        FROM public.chunks AS c
        WHERE (SELECT cardinality(p.matters) FROM pending AS p) > 0
          AND c.matter_id = ANY(CAST((SELECT p.matters FROM pending AS p) AS text[]))
          AND c.wall_group_id = ANY(wall_groups)
          AND c.source_acl_id = ANY(source_acl_ids)
          AND NOT c.suppressed
    )
    SELECT CAST(NULL AS text), count(*) FROM hidden
    UNION ALL
    SELECT l.lexeme, count(*)
    FROM hidden AS h, unnest(tsvector_to_array(h.body_tsv)) AS l (lexeme)
    WHERE l.lexeme = ANY(lexemes)
    GROUP BY l.lexeme
$fn$;
