-- The sparse leg's Dutch normalisation, version 2 (migration 0044, docs/quality.md, sixth
-- and seventh rounds): whole words, unaccented and lower-cased, Dutch stop words out, no
-- stemming, and every lexeme made of letters only cut to its first 7 characters. The cut
-- joins what the snowball stemmer left apart ("onderneming"/"ondernemer" -> "onderne",
-- "verzekering"/"verzekerd" -> "verzeke") and a compound with a first member of 7 letters
-- or more ("proceskostenveroordeling"/"proceskosten" -> "procesk"); citation tokens
-- ("art6x162bw"), ECLI tokens, numbers and short codes hold a digit or are short, and stay
-- whole.
--
-- One function, ewall_nl_tsvector(text), is the normalisation: the generated column
-- chunks.body_tsv, the question (ewall_query_lexemes), the synonym rules (ewall_nl_phrase)
-- and the user's websearch operators (ewall_nl_websearch) all go through it or through the
-- same cut, so a word meets itself on both sides. Object names inside the bodies are
-- schema-qualified: the column's expression runs under any search_path (a restore sets it
-- empty). ewall_legal_normalize is version 1's, unchanged (legal_text.v1.sql).

-- the stop list dutch_stem uses (its dictinitoption: stopwords = 'dutch'), without the stemmer
CREATE TEXT SEARCH DICTIONARY ewall_nl_stop (TEMPLATE = pg_catalog.simple, STOPWORDS = dutch);

-- ewall_nl (migration 0001) with the word mappings going to unaccent and the stop list
-- instead of unaccent and dutch_stem; numbers, e-mail addresses and the rest as in dutch
CREATE TEXT SEARCH CONFIGURATION ewall_nl_plain (COPY = public.ewall_nl);
ALTER TEXT SEARCH CONFIGURATION ewall_nl_plain
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
    WITH unaccent, ewall_nl_stop;

-- Cut each lexeme made of letters only to its first `keep` characters. Positions are kept
-- (phrases still work): the tsvector's input merges the lexemes that became equal and
-- their positions. Weights are not carried (to_tsvector gives every position weight D,
-- which is what a position without a weight reads as).
CREATE OR REPLACE FUNCTION ewall_cut_lexemes(tsv tsvector, keep integer) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    SELECT coalesce(CAST(string_agg(
               '''' || replace(replace(
                   CASE WHEN u.lexeme ~ '^[[:alpha:]]+$' THEN left(u.lexeme, keep)
                        ELSE u.lexeme END,
                   '\', '\\'), '''', '''''') || ''''
               || coalesce(':' || array_to_string(u.positions, ','), ''),
               ' ') AS tsvector), ''::tsvector)
    FROM unnest(tsv) AS u
$fn$;

-- The normalisation: what chunks.body_tsv stores and what a question is matched with.
CREATE OR REPLACE FUNCTION ewall_nl_tsvector(body text) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    SELECT public.ewall_cut_lexemes(
        to_tsvector('public.ewall_nl_plain'::regconfig, public.ewall_legal_normalize(body)), 7)
$fn$;

-- Query-side helper: the lexemes of a question, the same normalisation as the column.
CREATE OR REPLACE FUNCTION ewall_query_lexemes(query text) RETURNS text[]
LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $fn$
    SELECT coalesce(tsvector_to_array(public.ewall_nl_tsvector(query)), '{}')
$fn$;

-- A text's lexemes as a phrase, in word order, each one <N> after the previous, N the
-- distance of their positions (a stop word in between counts, as in phraseto_tsquery and
-- in the stored tsvector). NULL when the text has no lexeme.
CREATE OR REPLACE FUNCTION ewall_nl_phrase(input text) RETURNS tsquery
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    SELECT CAST(string_agg(
               CASE WHEN w.previous IS NULL THEN '' ELSE ' <' || (w.pos - w.previous) || '> ' END
               || '''' || replace(replace(w.lexeme, '\', '\\'), '''', '''''') || '''',
               '' ORDER BY w.pos, w.lexeme) AS tsquery)
    FROM (SELECT u.lexeme, p.pos, lag(p.pos) OVER (ORDER BY p.pos, u.lexeme) AS previous
          FROM unnest(public.ewall_nl_tsvector(input)) AS u,
               unnest(u.positions) AS p(pos)) AS w
$fn$;

-- The user's websearch operators (quotes, OR, -term) over the same normalisation: the
-- tsquery of websearch_to_tsquery with each lexeme of more than 7 letters cut to 7. In the
-- tsquery's text a lexeme opens with a quote at the start, after a space, '!' or '('; one
-- of letters only holds no quote, so the pattern cannot start inside another lexeme.
CREATE OR REPLACE FUNCTION ewall_nl_websearch(query text) RETURNS tsquery
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    SELECT CAST(regexp_replace(
               CAST(websearch_to_tsquery('public.ewall_nl_plain'::regconfig,
                                         public.ewall_legal_normalize(query)) AS text),
               '(^|[ !(])''([[:alpha:]]{7})[[:alpha:]]+''', '\1''\2''', 'g') AS tsquery)
$fn$;

-- The query a snippet highlights with: ts_headline parses the body with ewall_nl_plain
-- (whole words), so each lexeme that may have been cut (7 letters) becomes a prefix
-- ('werkgev':* marks "werkgever" and "werkgevers"); shorter lexemes and citation tokens
-- match whole.
CREATE OR REPLACE FUNCTION ewall_nl_headline_query(q tsquery) RETURNS tsquery
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    SELECT CAST(regexp_replace(CAST(q AS text),
                               '(^|[ !(])(''[[:alpha:]]{7}'')(?!:)', '\1\2:*', 'g') AS tsquery)
$fn$;
