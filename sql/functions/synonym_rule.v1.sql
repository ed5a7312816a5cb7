-- Each row of search_synonyms stores its ts_rewrite rule (target, substitute), computed by a
-- BEFORE INSERT OR UPDATE trigger, so a search reads the rules instead of analysing every
-- synonym. The trigger recomputes on every UPDATE, so a stored rule cannot be set by hand to
-- something else. A rule depends on the configuration ewall_nl and on ewall_legal_normalize
-- as they were when the row was written: a migration that changes either must recompute the
-- rules (UPDATE search_synonyms SET term = term).

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
                       ELSE phraseto_tsquery('ewall_nl', ewall_legal_normalize(NEW.term)) END;
    NEW.substitute := NEW.target
                      || phraseto_tsquery('ewall_nl', ewall_legal_normalize(NEW.synonym));
    RETURN NEW;
END
$fn$;
