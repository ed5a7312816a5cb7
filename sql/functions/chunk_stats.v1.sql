-- Statement-level triggers on chunks keep the search's statistics current in the writing
-- transaction: per-group chunk counts (the search picks its dense strategy from them), the
-- corpus size and lexeme document frequencies (IDF for the sparse leg). Rows are touched in
-- a fixed order so concurrent writers cannot deadlock. An UPDATE moves only the group
-- counts (re-tagging a chunk moves it to another wall group).

CREATE OR REPLACE FUNCTION ewall_chunks_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    INSERT INTO wall_group_sizes AS s (wall_group_id, n_chunks)
    SELECT wall_group_id, count(*) FROM new_rows GROUP BY wall_group_id ORDER BY wall_group_id
    ON CONFLICT (wall_group_id) DO UPDATE SET n_chunks = s.n_chunks + excluded.n_chunks;

    INSERT INTO lexeme_stats AS l (lexeme, ndoc)
    SELECT lex, count(*) FROM new_rows, unnest(tsvector_to_array(body_tsv)) AS lex
    GROUP BY lex ORDER BY lex
    ON CONFLICT (lexeme) DO UPDATE SET ndoc = l.ndoc + excluded.ndoc;

    UPDATE corpus_stats SET n_chunks = n_chunks + (SELECT count(*) FROM new_rows) WHERE id = 1;
    RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION ewall_chunks_after_delete() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE wall_group_sizes AS s SET n_chunks = s.n_chunks - d.n
    FROM (SELECT wall_group_id, count(*) AS n FROM old_rows GROUP BY wall_group_id
          ORDER BY wall_group_id) AS d
    WHERE s.wall_group_id = d.wall_group_id;

    UPDATE lexeme_stats AS l SET ndoc = l.ndoc - d.n
    FROM (SELECT lex, count(*) AS n FROM old_rows, unnest(tsvector_to_array(body_tsv)) AS lex
          GROUP BY lex ORDER BY lex) AS d
    WHERE l.lexeme = d.lex;

    UPDATE corpus_stats SET n_chunks = n_chunks - (SELECT count(*) FROM old_rows) WHERE id = 1;
    RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION ewall_chunks_after_update() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    INSERT INTO wall_group_sizes AS s (wall_group_id, n_chunks)
    SELECT wall_group_id, sum(n) FROM (
        SELECT wall_group_id, count(*) AS n FROM new_rows GROUP BY wall_group_id
        UNION ALL
        SELECT wall_group_id, -count(*) FROM old_rows GROUP BY wall_group_id
    ) AS d GROUP BY wall_group_id HAVING sum(n) <> 0 ORDER BY wall_group_id
    ON CONFLICT (wall_group_id) DO UPDATE SET n_chunks = s.n_chunks + excluded.n_chunks;
    RETURN NULL;
END
$fn$;
