-- Which chunk is a decision's summary: its section path starts with "inhoudsindicatie"
-- (Rechtspraak XML's summary element, which the parser chunks as a section of its own),
-- in any case of the ASCII letters, after ASCII white space (migration 20261205_0051). ASCII
-- only, on purpose: Python's str.strip and str.lower and PostgreSQL's btrim and lower differ
-- on other characters (a non-breaking space, a dotted capital I), and the two must agree.
--
-- A chunk is encoded after its document's summary (app/embeddings.py passage_input), so
-- ingestion's reuse of stored vectors and the re-embed worker look the summary up in SQL;
-- both statements call this function, and app/embeddings.py is_summary_section is the same
-- rule in Python (tests/ingest/test_passage_context.py holds the two to each other).
--
-- IMMUTABLE, a single expression, not STRICT: the planner inlines it.

CREATE OR REPLACE FUNCTION ewall_is_summary_section(section_path text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT translate(btrim(section_path, E' \t\n\r\f\v'),
                     'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
           LIKE 'inhoudsindicatie%'
$fn$;
