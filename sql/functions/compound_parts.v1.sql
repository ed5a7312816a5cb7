-- Dutch compound parts of the query lexemes, looked up in lexeme_stats (an option, off by
-- default; dropped by migration 0041 after measurement lowered the development set:
-- docs/quality.md). Under the "C" collation the lexemes that begin with a word are one range
-- of a btree (ix_lexeme_stats_prefix), and so are those that end with it in an index on the
-- reversed lexeme (ix_lexeme_stats_suffix); heads and tails of a query word are equality
-- lookups on the primary key. plpgsql, so that a search with compound parts off neither plans
-- nor opens the three indexes.

CREATE OR REPLACE FUNCTION ewall_compound_parts(query_lexemes text[])
RETURNS TABLE(lexeme text, ndoc bigint)
LANGUAGE plpgsql STABLE AS $fn$
BEGIN
    -- a lexeme that begins with q lies in the "C" range [q, q || U+10FFFF) of
    -- ix_lexeme_stats_prefix; one that ends with q in that range of the reversed lexemes
    RETURN QUERY
    SELECT DISTINCT s.lexeme, s.ndoc
    FROM unnest(query_lexemes) AS q(lexeme)
    CROSS JOIN LATERAL (
        SELECT p.lexeme, p.ndoc FROM lexeme_stats AS p
        WHERE length(q.lexeme) >= 5
          AND p.lexeme COLLATE "C" >= q.lexeme COLLATE "C"
          AND p.lexeme COLLATE "C" < (q.lexeme || chr(1114111)) COLLATE "C"
          AND length(p.lexeme) >= length(q.lexeme) + 3
        UNION ALL
        SELECT t.lexeme, t.ndoc FROM lexeme_stats AS t
        WHERE length(q.lexeme) >= 5
          AND reverse(t.lexeme) COLLATE "C" >= reverse(q.lexeme) COLLATE "C"
          AND reverse(t.lexeme) COLLATE "C" < (reverse(q.lexeme) || chr(1114111)) COLLATE "C"
          AND length(t.lexeme) >= length(q.lexeme) + 3
        UNION ALL
        -- the heads and tails of q itself (at least five letters, three fewer than q)
        SELECT h.lexeme, h.ndoc
        FROM generate_series(5, length(q.lexeme) - 3) AS n(len),
             LATERAL (VALUES (left(q.lexeme, n.len)), (right(q.lexeme, n.len)))
                 AS part(lexeme)
        JOIN lexeme_stats AS h ON h.lexeme = part.lexeme
    ) AS s;
END
$fn$;
