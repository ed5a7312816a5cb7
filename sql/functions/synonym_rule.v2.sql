-- Each row of search_synonyms stores its ts_rewrite rule (target, substitute), computed by a
-- BEFORE INSERT OR UPDATE trigger, so a search reads the rules instead of analysing every
-- synonym. The trigger recomputes on every UPDATE, so a stored rule cannot be set by hand to
-- something else. Version 2 (migration 0044): both sides are built from ewall_nl_tsvector,
-- the normalisation of chunks.body_tsv and of the question (legal_text.v2.sql), through
-- ewall_nl_phrase (phraseto_tsquery cannot cut lexemes). A migration that changes that
-- normalisation must recompute the rules (UPDATE search_synonyms SET term = term).

CREATE OR REPLACE FUNCTION ewall_synonym_rule() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
    term_lexemes text[] := ewall_query_lexemes(NEW.term);
BEGIN
    -- a side without a searchable lexeme makes no rule (the view left such rows out)
    IF cardinality(term_lexemes) = 0 OR cardinality(ewall_query_lexemes(NEW.synonym)) = 0 THEN
        NEW.target := NULL;
        NEW.substitute := NULL;
        RETURN NEW;
    END IF;
    NEW.target := CASE WHEN cardinality(term_lexemes) = 1
                       THEN CAST(quote_literal(term_lexemes[1]) AS tsquery)
                       ELSE ewall_nl_phrase(NEW.term) END;
    NEW.substitute := NEW.target || ewall_nl_phrase(NEW.synonym);
    RETURN NEW;
END
$fn$;
