-- The identifiers a lawyer may search a document by (migration 20261208_0057).
--
-- A lawyer who types a decision's ECLI or LJN wants that decision, but an identifier lives
-- in a document's title and metadata, which the full-text leg does not index, and its text
-- search lexemes ("ecli", "nl", "hr", "1995", "aa3120") match every decision of a court
-- and year: searched by its own ECLI, a decision ranked first in 8 of 60 tries. The hybrid
-- statement's named leg (sql/search.sql) finds the documents whose names hold one the
-- question names through
-- the GIN index ix_documents_names on this function (IMMUTABLE for that reason; it reads
-- nothing but its arguments). ewall_question_names, below, reads a question's.
--
-- The names, upper case:
--   - every ECLI in the metadata's "ecli" (case law and a connector's copy of it), in the
--     title ("ECLI:NL:HR:1995:AA3120 (Hoge Raad, ...)") and in the external id
--     ("ACTIVE!M-1.ECLI:NL:PHR:2011:BP5608");
--   - "LJN:" and each LJN, the national number before ECLIs (two letters, four digits): the
--     ordinal of an ECLI of that form (the first ECLIs took over the LJN), each the
--     metadata lists under "replaces", and one written "LJN AA1234" or "LJN: AA1234" in
--     the title;
--   - "VP:" and each place the metadata says the decision is published ("vindplaatsen"), as
--     lawyers cite it: journal (its periods left out), year and number ("NJ 1996/123", "BNB
--     1997/220 met annotatie door ..." -> "VP:BNB 1997/220"; "PW 1996, 20646" and "NJ 1996
--     nr. 20646" -> ".../20646"; "R.v.d.W. 2019/456" -> "VP:RVDW 2019/456"; "V-N
--     2019/28.6" and "BNB 1998/33c" keep their whole number), every one an entry names.
-- Metadata comes from connectors as well: a "replaces" or "vindplaatsen" that is no array,
-- or entries that are no strings, name nothing (an error here would refuse the document's ingestion).
CREATE OR REPLACE FUNCTION ewall_document_names(title text, external_id text, metadata jsonb)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    WITH eclis AS (
        SELECT DISTINCT m[1] AS ecli
        FROM unnest(ARRAY[upper(metadata ->> 'ecli'), upper(title), upper(external_id)])
             AS t (text),
             regexp_matches(t.text, '(ECLI:[A-Z]{2}:[A-Z0-9]{1,7}:[0-9]{4}:[A-Z0-9.]{0,24}[A-Z0-9])',
                            'g') AS m
    ), ljns AS (
        SELECT substr(ecli, length(ecli) - 5) AS ljn
        FROM eclis
        WHERE ecli ~ ':[A-Z]{2}[0-9]{4}$'
        UNION
        SELECT upper(r.value)
        FROM jsonb_array_elements_text(
                 CASE jsonb_typeof(metadata -> 'replaces')
                      WHEN 'array' THEN metadata -> 'replaces' ELSE '[]' END) AS r (value)
        WHERE r.value ~* '^[A-Z]{2}[0-9]{4}$'
        UNION
        SELECT upper(m[1])
        FROM regexp_matches(title, 'LJN:? *([A-Za-z]{2}[0-9]{4})(?![A-Za-z0-9])', 'gi') AS m
    ), places AS (
        SELECT 'VP:' || replace(m[1], '.', '') || ' ' || m[2] || '/' || m[3] AS place
        FROM jsonb_array_elements_text(
                 CASE jsonb_typeof(metadata -> 'vindplaatsen')
                      WHEN 'array' THEN metadata -> 'vindplaatsen' ELSE '[]' END) AS v (value),
             regexp_matches(upper(v.value),
                            '(?<![A-Z0-9.-])([A-Z][A-Z.-]{0,15}) ?([0-9]{4}) ?(?:[/,]|,? NR\.?) ?'
                            || '([0-9]+(?:\.[0-9]+)*[A-Z]?)(?![0-9A-Z])', 'g') AS m
    )
    SELECT ARRAY(SELECT ecli FROM eclis
                 UNION
                 SELECT 'LJN:' || ljn FROM ljns
                 UNION
                 SELECT place FROM places
                 ORDER BY 1)
$fn$;

-- The identifiers a question names, as ewall_document_names writes them, first appearance
-- first, at most 20: each ECLI (any case: "ecli:nl:hr:1995:aa3120" is typed too), each
-- LJN after "LJN" or standing alone ("LJN: BO3979", "BO3979"; not the ordinal inside an
-- ECLI, which the ECLI names, nor part of a longer token such as "NL:AB1234", "X-AB1234",
-- "NJ1996/123" or "EN1992-1-1"), and each journal citation ("NJ 1996/123", "nj 1996, 123",
-- "V-N 1997/1908"). analyze_query (sql/search.sql)
-- reads the question's words without the terms it leaves out ("-ECLI:..." names nothing).
CREATE OR REPLACE FUNCTION ewall_question_names(question text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT ARRAY(
        SELECT n.name
        FROM (SELECT coalesce(m.x[1], 'LJN:' || coalesce(m.x[2], m.x[3]),
                              'VP:' || replace(m.x[4], '.', '') || ' ' || m.x[5] || '/'
                              || m.x[6]) AS name,
                     min(m.pos) AS first
              FROM regexp_matches(
                       upper(question),
                       '(ECLI:[A-Z]{2}:[A-Z0-9]{1,7}:[0-9]{4}:[A-Z0-9.]{0,24}[A-Z0-9])'
                       || '|(?<![A-Z0-9])LJN:? *([A-Z]{2}[0-9]{4})(?![A-Z0-9/-])'
                       || '|(?<![A-Z0-9:.!/-])([A-Z]{2}[0-9]{4})(?![A-Z0-9/-])'
                       || '|(?<![A-Z0-9.-])([A-Z][A-Z.-]{0,15}) ?([0-9]{4}) ?(?:[/,]|,? NR\.?) ?'
                       || '([0-9]+(?:\.[0-9]+)*[A-Z]?)(?![0-9A-Z])',
                       'g') WITH ORDINALITY AS m (x, pos)
              GROUP BY 1) AS n
        ORDER BY n.first
        LIMIT 20)
$fn$;
