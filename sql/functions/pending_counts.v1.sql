-- What a person's ranking statistics must leave out while a matter is pending re-tag
-- (migration 20261205_0052; architecture invariant 12).
--
-- The statistics (search_key_stats, search_key_lexeme_stats) are kept per access key by
-- triggers on chunks. When a wall moves a matter to another wall group, its chunks keep the
-- old key until the re-tag worker has moved them; meanwhile the visibility rule hides the
-- matter from everyone (fail closed), but its chunks were still counted under the key they
-- carry, so the searches of those who hold that key weighed rows they could not see. A
-- search now subtracts these counts: its statistics are those of the rows it may see, during
-- a re-tag as after it.
--
-- For the keys passed (the person's allowed wall groups and source ACLs): the chunks of the
-- pending matters that are not suppressed (lexeme NULL), and for each lexeme of ``lexemes``
-- the chunks among them that hold it (the statistics triggers count body_tsv's lexemes,
-- sql/functions/key_stats.v1.sql; a lexeme matched on its own is the same test). Nothing
-- pending, the usual case: no chunk is read. A pending matter: the count goes through the
-- index on matter_id, and each lexeme's through the GIN index as well, never through every
-- lexeme of every pending chunk.
--
-- SECURITY DEFINER: the service role cannot read the chunks of a pending matter (the
-- visibility rule hides them). The owner reads them, as a superuser or through its own
-- maintenance policy (the setting ewall.writer, migration 20261202_0036), set here for the
-- function's own statements and put back before it returns: a non-superuser may not name
-- that setting in a function's SET clause. It returns numbers only, for keys the caller
-- names, as the statistics tables already show the service role for every key. EXECUTE is
-- granted to the service role and its writer role only.

CREATE OR REPLACE FUNCTION ewall_pending_key_counts(
    wall_groups text[], source_acl_ids text[], lexemes text[]
) RETURNS TABLE (lexeme text, n_chunks bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path TO pg_catalog, public, pg_temp
AS $fn$
DECLARE
    matters text[];
    writer text;
BEGIN
    SELECT coalesce(array_agg(r.matter_id), '{}') INTO matters FROM public.retag_pending AS r;
    IF cardinality(matters) = 0 THEN
        RETURN QUERY SELECT CAST(NULL AS text), CAST(0 AS bigint);
        RETURN;
    END IF;
    writer := current_setting('ewall.writer', true);
    PERFORM set_config('ewall.writer', 'on', true);
    RETURN QUERY
        SELECT CAST(NULL AS text), count(*)
        FROM public.chunks AS c
        WHERE c.matter_id = ANY(matters)
          AND c.wall_group_id = ANY(wall_groups) AND c.source_acl_id = ANY(source_acl_ids)
          AND NOT c.suppressed
        UNION ALL
        SELECT l.lexeme,
               (SELECT count(*)
                FROM public.chunks AS c
                WHERE c.matter_id = ANY(matters)
                  AND c.wall_group_id = ANY(wall_groups)
                  AND c.source_acl_id = ANY(source_acl_ids)
                  AND NOT c.suppressed
                  AND c.body_tsv @@ CAST(quote_literal(l.lexeme) AS tsquery))
        FROM (SELECT DISTINCT u.lexeme FROM unnest(lexemes) AS u (lexeme)) AS l;
    PERFORM set_config('ewall.writer', coalesce(writer, ''), true);
END
$fn$;
