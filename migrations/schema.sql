-- The catalog that the migrations build (normalised pg_dump --schema-only).
-- Generated; do not edit. Regenerate after a migration with: make schema-snapshot  (or: ewall schema snapshot)

-- EXTENSION unaccent

CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA public;

-- COMMENT EXTENSION unaccent

COMMENT ON EXTENSION unaccent IS 'text search dictionary that removes accents';

-- EXTENSION vector

CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public;

-- COMMENT EXTENSION vector

COMMENT ON EXTENSION vector IS 'vector data type and ivfflat and hnsw access methods';

-- FUNCTION public ewall_access_set_id(text[])

CREATE FUNCTION public.ewall_access_set_id(p_members text[]) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    SELECT encode(sha256(convert_to(coalesce(
               (SELECT CAST(array_to_json(array_agg(DISTINCT m COLLATE "C"
                                                    ORDER BY m COLLATE "C")) AS text)
                FROM unnest(p_members) AS m),
               '[]'), 'UTF8')), 'hex')
$$;

-- FUNCTION public ewall_audit_advance(text, text, boolean)

CREATE FUNCTION public.ewall_audit_advance(p_chain text, p_canonical text, p_proceed boolean) RETURNS TABLE(seq bigint, prev_hash text, hash text)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    UPDATE public.audit_heads AS h
    SET seq = h.seq + 1,
        hash = encode(sha256(convert_to(h.hash || '|' || (h.seq + 1)::text || '|' || p_canonical,
                                        'UTF8')), 'hex'),
        prev_hash = h.hash
    WHERE h.chain = p_chain AND p_proceed
    RETURNING h.seq, h.prev_hash, h.hash
$$;

-- FUNCTION public ewall_audit_append_pending(text)

CREATE FUNCTION public.ewall_audit_append_pending(p_chain text) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    SELECT NOT EXISTS (
        SELECT 1 FROM public.audit_heads AS h WHERE h.chain = p_chain FOR SHARE SKIP LOCKED
    )
$$;

-- FUNCTION public ewall_audit_head_agrees()

CREATE FUNCTION public.ewall_audit_head_agrees() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
DECLARE
    v_chain text;
    v_seq bigint;
    v_hash text;
    v_named boolean;
BEGIN
    IF TG_TABLE_NAME <> 'audit_heads' THEN
        v_chain := TG_ARGV[0];
        SELECT h.seq INTO v_seq FROM public.audit_heads AS h WHERE h.chain = v_chain;
        IF v_seq IS NULL OR NEW.seq > v_seq THEN
            RAISE EXCEPTION 'audit chain %: row % lies beyond the head (seq %)',
                v_chain, NEW.seq, v_seq
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NULL;
    END IF;
    v_chain := NEW.chain;
    v_seq := NEW.seq;
    v_hash := NEW.hash;
    IF v_seq = 0 THEN
        v_named := v_hash = repeat('0', 64);
    ELSIF v_chain = 'retrievals' THEN
        v_named := EXISTS (SELECT FROM public.audit_retrievals AS r
                           WHERE r.seq = v_seq AND r.hash = v_hash);
    ELSIF v_chain = 'policy' THEN
        v_named := EXISTS (SELECT FROM public.policy_events AS p
                           WHERE p.seq = v_seq AND p.hash = v_hash);
    ELSIF v_chain = 'gates' THEN
        v_named := EXISTS (SELECT FROM public.gate_events AS g
                           WHERE g.seq = v_seq AND g.hash = v_hash);
    ELSE
        v_named := false;
    END IF;
    IF NOT v_named THEN
        RAISE EXCEPTION 'audit chain %: the head (seq %) names no row of the chain',
            v_chain, v_seq
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END
$$;

-- FUNCTION public ewall_audit_refuse_change()

CREATE FUNCTION public.ewall_audit_refuse_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'audit table % is append-only (% refused)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;

-- FUNCTION public ewall_audit_results_sealed()

CREATE FUNCTION public.ewall_audit_results_sealed() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
DECLARE
    v_top bigint := CAST(CAST(pg_current_xact_id() AS text) AS bigint);
    v_retrieval uuid;
BEGIN
    SELECT n.retrieval_id INTO v_retrieval
    FROM new_results AS n
    WHERE NOT EXISTS (
        SELECT FROM public.audit_retrievals AS r
        WHERE r.retrieval_id = n.retrieval_id
          AND pg_xact_status(public.ewall_xid8_near(r.xmin, v_top)) = 'in progress')
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'audit retrieval %: its results are sealed (only the append that '
                        'records the retrieval writes them)', v_retrieval
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NULL;
END
$$;

-- FUNCTION public ewall_case_number(text)

CREATE FUNCTION public.ewall_case_number(digits text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT replace(digits, '.', '')
$$;

-- FUNCTION public ewall_chunk_document(text)

CREATE FUNCTION public.ewall_chunk_document(chunk_id text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE WHEN substr(chunk_id, length(chunk_id) - 16, 1) = ':'
                THEN left(chunk_id, -17) ELSE chunk_id END
$$;

-- FUNCTION public ewall_chunk_narrowed(text, text, text, timestamp with time zone, text[], text[], text[], text, timestamp with time zone, timestamp with time zone)

CREATE FUNCTION public.ewall_chunk_narrowed(doc_type text, source text, matter_id text, modified_at timestamp with time zone, doc_types text[], sources text[], matter_ids text[], session_matter_id text, modified_from timestamp with time zone, modified_to timestamp with time zone) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT (doc_types IS NULL OR doc_type = ANY(doc_types))
       AND (sources IS NULL OR source = ANY(sources))
       AND (matter_ids IS NULL OR matter_id = ANY(matter_ids))
       AND (session_matter_id IS NULL OR matter_id = session_matter_id OR matter_id IS NULL)
       AND (modified_from IS NULL OR modified_at >= modified_from)
       AND (modified_to IS NULL OR modified_at <= modified_to)
$$;

-- FUNCTION public ewall_chunk_visible(text, text, text, boolean, text[], text[], text[], boolean)

CREATE FUNCTION public.ewall_chunk_visible(wall_group_id text, source_acl_id text, matter_id text, suppressed boolean, allowed_wall_groups text[], allowed_source_acls text[], pending_matters text[], group_index boolean DEFAULT true) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT (CASE WHEN group_index THEN wall_group_id ELSE wall_group_id || '' END)
               = ANY(allowed_wall_groups)
       AND source_acl_id = ANY(allowed_source_acls)
       AND coalesce(matter_id, '') <> ALL(pending_matters)
       AND NOT suppressed
$$;

-- FUNCTION public ewall_chunks_after_delete()

CREATE FUNCTION public.ewall_chunks_after_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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
$$;

-- FUNCTION public ewall_chunks_after_insert()

CREATE FUNCTION public.ewall_chunks_after_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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
$$;

-- FUNCTION public ewall_chunks_after_update()

CREATE FUNCTION public.ewall_chunks_after_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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
$$;

-- FUNCTION public ewall_chunks_relayout(integer, text)

CREATE FUNCTION public.ewall_chunks_relayout(partitions integer, storage text) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'public', 'pg_catalog'
    AS $$
DECLARE
    archive text := 'chunks_before_' || to_char(clock_timestamp(), 'YYYYMMDD"t"HH24MISSUS');
    old_oid oid := to_regclass('public.chunks');
    dim integer;
    cols text;
    index_defs text[];
    trigger_defs text[];
    fk_defs text[];
    r record;
    def text;
    i integer;
BEGIN
    IF partitions IS NULL OR partitions < 1 OR partitions > 256 THEN
        RAISE EXCEPTION 'partitions must be 1..256, got %', partitions USING ERRCODE = '22023';
    END IF;
    IF storage IS NULL OR storage NOT IN ('vector', 'halfvec') THEN
        RAISE EXCEPTION 'storage must be vector or halfvec, got %', storage
            USING ERRCODE = '22023';
    END IF;
    LOCK TABLE public.chunks IN ACCESS EXCLUSIVE MODE;
    -- the copy must see every row (superusers bypass row-level security anyway)
    PERFORM set_config('ewall.writer', 'on', true);
    SELECT atttypmod INTO dim FROM pg_attribute
    WHERE attrelid = old_oid AND attname = 'embedding';

    -- what references chunks, read before the rename (the definitions name public.chunks)
    SELECT coalesce(array_agg(replace(pg_get_indexdef(x.indexrelid), ' ON ONLY public.chunks ',
                                      ' ON public.chunks ') ORDER BY c.relname), '{}')
    INTO index_defs
    FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
    WHERE x.indrelid = old_oid
      AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid
                                                     AND k.conrelid = old_oid);
    SELECT coalesce(array_agg(pg_get_triggerdef(t.oid) ORDER BY t.tgname), '{}')
    INTO trigger_defs
    FROM pg_trigger t WHERE t.tgrelid = old_oid AND NOT t.tgisinternal;
    SELECT coalesce(array_agg(format('ALTER TABLE public.chunks ADD CONSTRAINT %I %s',
                                     k.conname, pg_get_constraintdef(k.oid))
                              ORDER BY k.conname), '{}')
    INTO fk_defs
    FROM pg_constraint k WHERE k.conrelid = old_oid AND k.contype = 'f';

    -- the old table (and its partitions, its constraint-owned indexes) under archive names
    FOR r IN SELECT c.relname FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid
             WHERE h.inhparent = old_oid LOOP
        EXECUTE format('ALTER TABLE public.%I RENAME TO %I', r.relname,
                       left(archive || '_' || r.relname, 63));
    END LOOP;
    FOR r IN SELECT c.relname FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
             WHERE x.indrelid = old_oid LOOP
        EXECUTE format('ALTER INDEX public.%I RENAME TO %I', r.relname,
                       left(archive || '_' || r.relname, 63));
    END LOOP;
    EXECUTE format('ALTER TABLE public.chunks RENAME TO %I', archive);

    -- the new table: same columns (generated, defaults, storage), the chosen layout
    EXECUTE format('CREATE TABLE public.chunks (LIKE public.%I INCLUDING DEFAULTS '
                   'INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMMENTS) %s',
                   archive,
                   CASE WHEN partitions > 1 THEN 'PARTITION BY HASH (document_id)' ELSE '' END);
    EXECUTE format('ALTER TABLE public.chunks ALTER COLUMN embedding TYPE %s(%s)', storage, dim);
    FOR r IN SELECT a.attname, a.attstorage, a.attstattarget FROM pg_attribute a
             WHERE a.attrelid = old_oid AND a.attnum > 0 AND NOT a.attisdropped LOOP
        EXECUTE format('ALTER TABLE public.chunks ALTER COLUMN %I SET STORAGE %s', r.attname,
                       CASE r.attstorage WHEN 'p' THEN 'PLAIN' WHEN 'e' THEN 'EXTERNAL'
                                         WHEN 'm' THEN 'MAIN' ELSE 'EXTENDED' END);
        IF r.attstattarget IS NOT NULL AND r.attstattarget >= 0 THEN
            EXECUTE format('ALTER TABLE public.chunks ALTER COLUMN %I SET STATISTICS %s',
                           r.attname, r.attstattarget);
        END IF;
    END LOOP;
    IF partitions > 1 THEN
        FOR i IN 0 .. partitions - 1 LOOP
            EXECUTE format('CREATE TABLE public.%I PARTITION OF public.chunks '
                           'FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
                           'chunks_p' || i, partitions, i);
            -- a partition read by name sees nothing: no grant, forced RLS, no policy
            EXECUTE format('ALTER TABLE public.%I ENABLE ROW LEVEL SECURITY', 'chunks_p' || i);
            EXECUTE format('ALTER TABLE public.%I FORCE ROW LEVEL SECURITY', 'chunks_p' || i);
        END LOOP;
    END IF;

    -- the rows (body_tsv is generated again), before any trigger exists on the new table
    SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
    FROM pg_attribute
    WHERE attrelid = old_oid AND attnum > 0 AND NOT attisdropped AND attgenerated = '';
    EXECUTE format('INSERT INTO public.chunks (%s) SELECT %s FROM public.%I', cols, cols,
                   archive);

    -- keys, indexes (one per partition, the HNSW opclass following the storage), triggers
    EXECUTE format('ALTER TABLE public.chunks ADD CONSTRAINT pk_chunks PRIMARY KEY (%s)',
                   CASE WHEN partitions > 1 THEN 'chunk_id, document_id' ELSE 'chunk_id' END);
    FOREACH def IN ARRAY fk_defs LOOP
        EXECUTE def;
    END LOOP;
    FOREACH def IN ARRAY index_defs LOOP
        EXECUTE regexp_replace(def, '\m(vector|halfvec)_(l2|ip|cosine|l1)_ops\M',
                               storage || '_\2_ops', 'g');
    END LOOP;
    FOR r IN SELECT t.tgname FROM pg_trigger t
             WHERE t.tgrelid = old_oid AND NOT t.tgisinternal LOOP
        EXECUTE format('DROP TRIGGER %I ON public.%I', r.tgname, archive);
    END LOOP;
    FOREACH def IN ARRAY trigger_defs LOOP
        EXECUTE def;
    END LOOP;

    -- row-level security and its policies, then the grants (revoked on the archive)
    ALTER TABLE public.chunks ENABLE ROW LEVEL SECURITY;
    ALTER TABLE public.chunks FORCE ROW LEVEL SECURITY;
    FOR r IN SELECT * FROM pg_policies WHERE schemaname = 'public' AND tablename = archive LOOP
        EXECUTE format('CREATE POLICY %I ON public.chunks AS %s FOR %s TO %s%s%s',
                       r.policyname, r.permissive, r.cmd,
                       (SELECT string_agg(CASE WHEN x = 'public' THEN 'PUBLIC'
                                               ELSE quote_ident(x) END, ', ')
                        FROM unnest(r.roles) AS x),
                       CASE WHEN r.qual IS NULL THEN '' ELSE ' USING (' || r.qual || ')' END,
                       CASE WHEN r.with_check IS NULL THEN ''
                            ELSE ' WITH CHECK (' || r.with_check || ')' END);
    END LOOP;
    FOR r IN SELECT a.grantee, a.privilege_type
             FROM pg_class c, aclexplode(c.relacl) AS a
             WHERE c.oid = old_oid AND a.grantee <> c.relowner LOOP
        EXECUTE format('GRANT %s ON public.chunks TO %s', r.privilege_type,
                       CASE WHEN r.grantee = 0 THEN 'PUBLIC'
                            ELSE quote_ident(pg_get_userbyid(r.grantee)) END);
        EXECUTE format('REVOKE %s ON public.%I FROM %s', r.privilege_type, archive,
                       CASE WHEN r.grantee = 0 THEN 'PUBLIC'
                            ELSE quote_ident(pg_get_userbyid(r.grantee)) END);
    END LOOP;
    EXECUTE 'ANALYZE public.chunks';
    RETURN archive;
END
$$;

-- FUNCTION public ewall_court_family(text)

CREATE FUNCTION public.ewall_court_family(court text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT CASE WHEN c IN ('HR', 'HOGE RAAD') THEN 'HR'
                WHEN c IN ('ABRVS', 'ABRS', 'RVS', 'RAAD VAN STATE') THEN 'RVS'
                WHEN c IN ('HOF', 'GERECHTSHOF') OR c ~ '^GH[A-Z]' THEN 'GH'
                WHEN c IN ('RB', 'RECHTBANK', 'KTR', 'KANTONRECHTER') OR c ~ '^RB[A-Z]' THEN 'RB'
                ELSE c END
    FROM (SELECT upper(replace(court, '.', '')) AS c) AS t
$$;

-- FUNCTION public ewall_cut_lexemes(tsvector, integer)

CREATE FUNCTION public.ewall_cut_lexemes(tsv tsvector, keep integer) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $_$
    SELECT coalesce(CAST(string_agg(
               '''' || replace(replace(
                   CASE WHEN u.lexeme ~ '^[[:alpha:]]+$' THEN left(u.lexeme, keep)
                        ELSE u.lexeme END,
                   '\', '\\'), '''', '''''') || ''''
               || coalesce(':' || array_to_string(u.positions, ','), ''),
               ' ') AS tsvector), ''::tsvector)
    FROM unnest(tsv) AS u
$_$;

-- FUNCTION public ewall_document_names(text, text, jsonb)

CREATE FUNCTION public.ewall_document_names(title text, external_id text, metadata jsonb) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $_$
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
    ), cases AS (
        -- each case number of the metadata's "zaaknummers": every run of 4 or more digits
        -- with its separators, as ewall_case_number writes it
        SELECT public.ewall_case_number(m[1]) AS zn
        FROM jsonb_array_elements_text(
                 CASE jsonb_typeof(metadata -> 'zaaknummers')
                      WHEN 'array' THEN metadata -> 'zaaknummers' ELSE '[]' END) AS z (value),
             regexp_matches(regexp_replace(regexp_replace(z.value,
                                '([0-9])\s*[_/-]\s*([0-9])', '\1/\2', 'g'),
                                '([0-9])\s*[_/-]\s*([0-9])', '\1/\2', 'g'),
                            '(?<![0-9])([0-9]+(?:[./][0-9]+)*)(?![0-9])', 'g') AS m
        WHERE length(regexp_replace(m[1], '[^0-9]', '', 'g')) >= 4
    ), places AS (
        SELECT 'VP:' || replace(m[1], '.', '') || ' ' || m[2] || '/' || m[3] AS place
        FROM jsonb_array_elements_text(
                 CASE jsonb_typeof(metadata -> 'vindplaatsen')
                      WHEN 'array' THEN metadata -> 'vindplaatsen' ELSE '[]' END) AS v (value),
             regexp_matches(upper(v.value),
                            '(?<![A-Z0-9.-])([A-Z][A-Z.-]{0,15}) ?([0-9]{4}) ?(?:[/,]|,? NR\.?) ?'
                            || '([0-9]+(?:\.[0-9]+)*[A-Z]?)(?![0-9A-Z])', 'g') AS m
    ), courts AS (
        SELECT DISTINCT public.ewall_court_family(split_part(ecli, ':', 3)) AS court FROM eclis
    ), days AS (
        -- the day as the metadata writes it (ISO 8601), read as text: no cast can fail
        SELECT substring(metadata ->> 'decision_date' FROM '^([0-9]{4}-[0-9]{2}-[0-9]{2})')
               AS day
    )
    SELECT ARRAY(SELECT ecli FROM eclis
                 UNION
                 SELECT 'LJN:' || ljn FROM ljns
                 UNION
                 SELECT place FROM places
                 UNION
                 SELECT 'ZN:' || zn FROM cases
                 UNION
                 SELECT 'ZC:' || court || ':' || zn FROM courts, cases
                 UNION
                 SELECT 'CD:' || court || ':' || day FROM courts, days WHERE day IS NOT NULL
                 ORDER BY 1)
$_$;

-- FUNCTION public ewall_document_stats_after_delete()

CREATE FUNCTION public.ewall_document_stats_after_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE search_document_stats AS s
    SET n_chunks = s.n_chunks - d.n, n_tokens = s.n_tokens - d.t
    FROM (SELECT document_id, count(*) AS n, sum(token_count) AS t FROM old_rows
          GROUP BY document_id ORDER BY document_id) AS d
    WHERE s.document_id = d.document_id;
    DELETE FROM search_document_stats AS s
    WHERE s.n_chunks <= 0 AND s.document_id IN (SELECT document_id FROM old_rows);
    RETURN NULL;
END
$$;

-- FUNCTION public ewall_document_stats_after_insert()

CREATE FUNCTION public.ewall_document_stats_after_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO search_document_stats AS s (document_id, n_chunks, n_tokens)
    SELECT document_id, count(*), sum(token_count) FROM new_rows
    GROUP BY document_id ORDER BY document_id
    ON CONFLICT (document_id) DO UPDATE
        SET n_chunks = s.n_chunks + excluded.n_chunks,
            n_tokens = s.n_tokens + excluded.n_tokens;
    RETURN NULL;
END
$$;

-- FUNCTION public ewall_document_stats_after_update()

CREATE FUNCTION public.ewall_document_stats_after_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO search_document_stats AS s (document_id, n_chunks, n_tokens)
    SELECT document_id, sum(n), sum(t) FROM (
        SELECT document_id, count(*) AS n, sum(token_count) AS t FROM new_rows
        GROUP BY document_id
        UNION ALL
        SELECT document_id, -count(*), -sum(token_count) FROM old_rows GROUP BY document_id
    ) AS d
    GROUP BY document_id
    -- metadata updates (re-tagging, suppression) leave every delta at zero: nothing written
    HAVING sum(n) <> 0 OR sum(t) <> 0
    ORDER BY document_id
    ON CONFLICT (document_id) DO UPDATE
        SET n_chunks = s.n_chunks + excluded.n_chunks,
            n_tokens = s.n_tokens + excluded.n_tokens;
    DELETE FROM search_document_stats AS s
    WHERE s.n_chunks <= 0 AND s.document_id IN (SELECT document_id FROM old_rows);
    RETURN NULL;
END
$$;

-- FUNCTION public ewall_document_totals_after_delete()

CREATE FUNCTION public.ewall_document_totals_after_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE corpus_stats AS c
    SET n_documents = c.n_documents - d.n, n_document_tokens = c.n_document_tokens - d.t
    FROM (SELECT count(*) AS n, coalesce(sum(n_tokens), 0) AS t FROM old_rows) AS d
    WHERE c.id = 1 AND d.n > 0;
    RETURN NULL;
END
$$;

-- FUNCTION public ewall_document_totals_after_insert()

CREATE FUNCTION public.ewall_document_totals_after_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE corpus_stats AS c
    SET n_documents = c.n_documents + d.n, n_document_tokens = c.n_document_tokens + d.t
    FROM (SELECT count(*) AS n, coalesce(sum(n_tokens), 0) AS t FROM new_rows) AS d
    WHERE c.id = 1 AND d.n > 0;
    RETURN NULL;
END
$$;

-- FUNCTION public ewall_document_totals_after_update()

CREATE FUNCTION public.ewall_document_totals_after_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE corpus_stats AS c
    SET n_document_tokens = c.n_document_tokens + d.t
    FROM (SELECT (SELECT coalesce(sum(n_tokens), 0) FROM new_rows)
               - (SELECT coalesce(sum(n_tokens), 0) FROM old_rows) AS t) AS d
    WHERE c.id = 1 AND d.t <> 0;
    RETURN NULL;
END
$$;

-- FUNCTION public ewall_group_principals(text[])

CREATE FUNCTION public.ewall_group_principals(principals text[]) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT coalesce(array_agg(p ORDER BY p), '{}')
    FROM unnest(principals) AS t(p)
    WHERE split_part(p, ':', 2) = 'group'
$$;

-- FUNCTION public ewall_is_summary_section(text)

CREATE FUNCTION public.ewall_is_summary_section(section_path text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT translate(btrim(section_path, E' \t\n\r\f\v'),
                     'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
           LIKE 'inhoudsindicatie%'
$$;

-- FUNCTION public ewall_key_documents_after_delete()

CREATE FUNCTION public.ewall_key_documents_after_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE search_key_stats AS s SET n_documents = s.n_documents - d.n
    FROM (SELECT wall_group_id, source_acl_id, count(*) AS n FROM old_rows
          GROUP BY wall_group_id, source_acl_id ORDER BY wall_group_id, source_acl_id) AS d
    WHERE s.wall_group_id = d.wall_group_id AND s.source_acl_id = d.source_acl_id;
    RETURN NULL;
END
$$;

-- FUNCTION public ewall_key_documents_after_insert()

CREATE FUNCTION public.ewall_key_documents_after_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO search_key_stats AS s (wall_group_id, source_acl_id, n_documents)
    SELECT wall_group_id, source_acl_id, count(*) FROM new_rows
    GROUP BY wall_group_id, source_acl_id ORDER BY wall_group_id, source_acl_id
    ON CONFLICT (wall_group_id, source_acl_id) DO UPDATE
        SET n_documents = s.n_documents + excluded.n_documents;
    RETURN NULL;
END
$$;

-- FUNCTION public ewall_key_stats_after_delete()

CREATE FUNCTION public.ewall_key_stats_after_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN

    WITH d AS MATERIALIZED (SELECT -1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM old_rows WHERE NOT suppressed
    ), keys AS (
        INSERT INTO search_key_stats AS s
            (wall_group_id, source_acl_id, n_chunks, n_document_tokens)
        SELECT wall_group_id, source_acl_id, sum(sg), sum(sg * token_count) FROM d
        GROUP BY wall_group_id, source_acl_id
        HAVING sum(sg) <> 0 OR sum(sg * token_count) <> 0
        ORDER BY wall_group_id, source_acl_id
        ON CONFLICT (wall_group_id, source_acl_id) DO UPDATE
            SET n_chunks = s.n_chunks + excluded.n_chunks,
                n_document_tokens = s.n_document_tokens + excluded.n_document_tokens
    ), lexemes AS (
        INSERT INTO search_key_lexeme_stats AS l (lexeme, wall_group_id, source_acl_id, n_chunks)
        SELECT lex, wall_group_id, source_acl_id, sum(sg)
        FROM d, unnest(tsvector_to_array(body_tsv)) AS lex
        GROUP BY lex, wall_group_id, source_acl_id HAVING sum(sg) <> 0
        ORDER BY lex, wall_group_id, source_acl_id
        ON CONFLICT (lexeme, wall_group_id, source_acl_id) DO UPDATE
            SET n_chunks = l.n_chunks + excluded.n_chunks
    )
    INSERT INTO search_key_document_stats AS s
        (document_id, wall_group_id, source_acl_id, n_chunks, n_tokens)
    SELECT document_id, wall_group_id, source_acl_id, sum(sg), sum(sg * token_count) FROM d
    GROUP BY document_id, wall_group_id, source_acl_id
    HAVING sum(sg) <> 0 OR sum(sg * token_count) <> 0
    ORDER BY document_id, wall_group_id, source_acl_id
    ON CONFLICT (document_id, wall_group_id, source_acl_id) DO UPDATE
        SET n_chunks = s.n_chunks + excluded.n_chunks, n_tokens = s.n_tokens + excluded.n_tokens;

    DELETE FROM search_key_document_stats AS s
    USING (SELECT DISTINCT document_id, wall_group_id, source_acl_id
           FROM (SELECT -1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM old_rows WHERE NOT suppressed) AS d WHERE sg < 0) AS e
    WHERE s.document_id = e.document_id AND s.wall_group_id = e.wall_group_id
      AND s.source_acl_id = e.source_acl_id AND s.n_chunks <= 0;
    DELETE FROM search_key_lexeme_stats AS l
    USING (SELECT DISTINCT lex, wall_group_id, source_acl_id
           FROM (SELECT -1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM old_rows WHERE NOT suppressed) AS d, unnest(tsvector_to_array(body_tsv)) AS lex
           WHERE sg < 0) AS e
    WHERE l.lexeme = e.lex AND l.wall_group_id = e.wall_group_id
      AND l.source_acl_id = e.source_acl_id AND l.n_chunks <= 0;

    RETURN NULL;
END
$$;

-- FUNCTION public ewall_key_stats_after_insert()

CREATE FUNCTION public.ewall_key_stats_after_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN

    WITH d AS MATERIALIZED (SELECT 1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM new_rows WHERE NOT suppressed
    ), keys AS (
        INSERT INTO search_key_stats AS s
            (wall_group_id, source_acl_id, n_chunks, n_document_tokens)
        SELECT wall_group_id, source_acl_id, sum(sg), sum(sg * token_count) FROM d
        GROUP BY wall_group_id, source_acl_id
        HAVING sum(sg) <> 0 OR sum(sg * token_count) <> 0
        ORDER BY wall_group_id, source_acl_id
        ON CONFLICT (wall_group_id, source_acl_id) DO UPDATE
            SET n_chunks = s.n_chunks + excluded.n_chunks,
                n_document_tokens = s.n_document_tokens + excluded.n_document_tokens
    ), lexemes AS (
        INSERT INTO search_key_lexeme_stats AS l (lexeme, wall_group_id, source_acl_id, n_chunks)
        SELECT lex, wall_group_id, source_acl_id, sum(sg)
        FROM d, unnest(tsvector_to_array(body_tsv)) AS lex
        GROUP BY lex, wall_group_id, source_acl_id HAVING sum(sg) <> 0
        ORDER BY lex, wall_group_id, source_acl_id
        ON CONFLICT (lexeme, wall_group_id, source_acl_id) DO UPDATE
            SET n_chunks = l.n_chunks + excluded.n_chunks
    )
    INSERT INTO search_key_document_stats AS s
        (document_id, wall_group_id, source_acl_id, n_chunks, n_tokens)
    SELECT document_id, wall_group_id, source_acl_id, sum(sg), sum(sg * token_count) FROM d
    GROUP BY document_id, wall_group_id, source_acl_id
    HAVING sum(sg) <> 0 OR sum(sg * token_count) <> 0
    ORDER BY document_id, wall_group_id, source_acl_id
    ON CONFLICT (document_id, wall_group_id, source_acl_id) DO UPDATE
        SET n_chunks = s.n_chunks + excluded.n_chunks, n_tokens = s.n_tokens + excluded.n_tokens;

    RETURN NULL;
END
$$;

-- FUNCTION public ewall_key_stats_after_update()

CREATE FUNCTION public.ewall_key_stats_after_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN

    WITH d AS MATERIALIZED (
        SELECT 1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM new_rows AS n
        WHERE NOT n.suppressed
          AND NOT EXISTS (SELECT 1 FROM old_rows AS o WHERE o.chunk_id = n.chunk_id AND (o.wall_group_id, o.source_acl_id, o.suppressed, o.document_id, o.token_count, o.body) IS NOT DISTINCT FROM (n.wall_group_id, n.source_acl_id, n.suppressed, n.document_id, n.token_count, n.body))
        UNION ALL
        SELECT -1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM old_rows AS o
        WHERE NOT o.suppressed
          AND NOT EXISTS (SELECT 1 FROM new_rows AS n WHERE n.chunk_id = o.chunk_id AND (o.wall_group_id, o.source_acl_id, o.suppressed, o.document_id, o.token_count, o.body) IS NOT DISTINCT FROM (n.wall_group_id, n.source_acl_id, n.suppressed, n.document_id, n.token_count, n.body))

    ), keys AS (
        INSERT INTO search_key_stats AS s
            (wall_group_id, source_acl_id, n_chunks, n_document_tokens)
        SELECT wall_group_id, source_acl_id, sum(sg), sum(sg * token_count) FROM d
        GROUP BY wall_group_id, source_acl_id
        HAVING sum(sg) <> 0 OR sum(sg * token_count) <> 0
        ORDER BY wall_group_id, source_acl_id
        ON CONFLICT (wall_group_id, source_acl_id) DO UPDATE
            SET n_chunks = s.n_chunks + excluded.n_chunks,
                n_document_tokens = s.n_document_tokens + excluded.n_document_tokens
    ), lexemes AS (
        INSERT INTO search_key_lexeme_stats AS l (lexeme, wall_group_id, source_acl_id, n_chunks)
        SELECT lex, wall_group_id, source_acl_id, sum(sg)
        FROM d, unnest(tsvector_to_array(body_tsv)) AS lex
        GROUP BY lex, wall_group_id, source_acl_id HAVING sum(sg) <> 0
        ORDER BY lex, wall_group_id, source_acl_id
        ON CONFLICT (lexeme, wall_group_id, source_acl_id) DO UPDATE
            SET n_chunks = l.n_chunks + excluded.n_chunks
    )
    INSERT INTO search_key_document_stats AS s
        (document_id, wall_group_id, source_acl_id, n_chunks, n_tokens)
    SELECT document_id, wall_group_id, source_acl_id, sum(sg), sum(sg * token_count) FROM d
    GROUP BY document_id, wall_group_id, source_acl_id
    HAVING sum(sg) <> 0 OR sum(sg * token_count) <> 0
    ORDER BY document_id, wall_group_id, source_acl_id
    ON CONFLICT (document_id, wall_group_id, source_acl_id) DO UPDATE
        SET n_chunks = s.n_chunks + excluded.n_chunks, n_tokens = s.n_tokens + excluded.n_tokens;

    DELETE FROM search_key_document_stats AS s
    USING (SELECT DISTINCT document_id, wall_group_id, source_acl_id
           FROM (
        SELECT 1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM new_rows AS n
        WHERE NOT n.suppressed
          AND NOT EXISTS (SELECT 1 FROM old_rows AS o WHERE o.chunk_id = n.chunk_id AND (o.wall_group_id, o.source_acl_id, o.suppressed, o.document_id, o.token_count, o.body) IS NOT DISTINCT FROM (n.wall_group_id, n.source_acl_id, n.suppressed, n.document_id, n.token_count, n.body))
        UNION ALL
        SELECT -1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM old_rows AS o
        WHERE NOT o.suppressed
          AND NOT EXISTS (SELECT 1 FROM new_rows AS n WHERE n.chunk_id = o.chunk_id AND (o.wall_group_id, o.source_acl_id, o.suppressed, o.document_id, o.token_count, o.body) IS NOT DISTINCT FROM (n.wall_group_id, n.source_acl_id, n.suppressed, n.document_id, n.token_count, n.body))
) AS d WHERE sg < 0) AS e
    WHERE s.document_id = e.document_id AND s.wall_group_id = e.wall_group_id
      AND s.source_acl_id = e.source_acl_id AND s.n_chunks <= 0;
    DELETE FROM search_key_lexeme_stats AS l
    USING (SELECT DISTINCT lex, wall_group_id, source_acl_id
           FROM (
        SELECT 1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM new_rows AS n
        WHERE NOT n.suppressed
          AND NOT EXISTS (SELECT 1 FROM old_rows AS o WHERE o.chunk_id = n.chunk_id AND (o.wall_group_id, o.source_acl_id, o.suppressed, o.document_id, o.token_count, o.body) IS NOT DISTINCT FROM (n.wall_group_id, n.source_acl_id, n.suppressed, n.document_id, n.token_count, n.body))
        UNION ALL
        SELECT -1 AS sg, wall_group_id, source_acl_id, document_id, token_count, body_tsv FROM old_rows AS o
        WHERE NOT o.suppressed
          AND NOT EXISTS (SELECT 1 FROM new_rows AS n WHERE n.chunk_id = o.chunk_id AND (o.wall_group_id, o.source_acl_id, o.suppressed, o.document_id, o.token_count, o.body) IS NOT DISTINCT FROM (n.wall_group_id, n.source_acl_id, n.suppressed, n.document_id, n.token_count, n.body))
) AS d, unnest(tsvector_to_array(body_tsv)) AS lex
           WHERE sg < 0) AS e
    WHERE l.lexeme = e.lex AND l.wall_group_id = e.wall_group_id
      AND l.source_acl_id = e.source_acl_id AND l.n_chunks <= 0;

    RETURN NULL;
END
$$;

-- FUNCTION public ewall_legal_normalize(text)

CREATE FUNCTION public.ewall_legal_normalize(input text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
DECLARE
    -- each law's names, the one code its tokens carry ("art5hnw" for "art. 5 Hnw" and
    -- "Artikel 5 Handelsnaamwet" alike), and a word in lower case that every match of its
    -- names holds (its pass runs only on a text that holds that word)
    laws   constant text[] := ARRAY[
        ['algemene\s+wet\s+bestuursrecht(?:\s*\((?:hierna:?\s*)?awb\))?', 'awb', 'bestuursrecht'],
        ['burgerlijk\s+wetboek(?:\s*\((?:hierna:?\s*)?bw\))?', 'bw', 'burgerl'],
        ['wetboek\s+van\s+burgerlijke\s+rechtsvordering(?:\s*\(rv\))?', 'rv', 'rechtsvordering'],
        ['wetboek\s+van\s+strafrecht(?:\s*\(sr\))?', 'sr', 'strafrecht'],
        ['wetboek\s+van\s+strafvordering(?:\s*\(sv\))?', 'sv', 'strafvordering'],
        ['algemene\s+wet\s+inzake\s+rijksbelastingen(?:\s*\(awr\))?', 'awr', 'belast'],
        ['wet\s+openbaarheid\s+van\s+bestuur(?:\s*\(wob\))?', 'wob', 'openbaarhe'],
        ['wet\s+op\s+de\s+rechterlijke\s+organisatie(?:\s*\(ro\))?', 'ro', 'rechterl'],
        ['rijksoctrooiwet(?:\s+1995)?', 'row', 'octroo'],
        ['auteurswet(?:\s+1912)?', 'aw', 'auteurswet'],
        ['handelsnaamwet', 'hnw', 'handelsnaamwet'],
        ['grondwet', 'gw', 'grondwet'],
        ['(?:elektriciteitswet(?:\s+1998)?|e-wet)', 'ew', 'wet']];
    -- the names written out first: the longest alternative that matches is taken
    codes  constant text := '(' || array_to_string(ARRAY(
            SELECT laws[i][1] FROM generate_subscripts(laws, 1) AS i ORDER BY i), '|')
        || '|eov|epc|evrm|ehrm|bw|rv|sr|sv|awb|awr|wob|ro|gw|aw|hnw|row|wvw|fw|avg)';
    short  constant text := '(awb|bw|rv|sr|sv|awr|wob|ro|hnw|aw|row|gw|ew|eov|evrm|ehrm|wvw|fw|avg)';
    artkw  constant text := '(?:artikel(?:en)?|artt?\.?)\s*';
    ordinal constant text :=
        '(?:eerste|tweede|derde|vierde|vijfde|zesde|zevende|achtste|negende|tiende)';
    qual   constant text := '(?:\s*,?\s*(?:(?:lid|leden)\s+\d+(?:\s*(?:en|,)\s*\d+)*'
        '|' || ordinal || '(?:\s+en\s+' || ordinal || ')?\s+(?:lid|leden)'
        '|aanhef(?:\s+en)?|(?:sub|onder|onderdeel|letter)\s+[a-z0-9]{1,3}\M|e\.\s?v\.))*';
    van    constant text := '\s*,?\s*(?:\(oud\)\s*)?(?:van\s+(?:het|de)\s+)?';
    -- between two articles of one list: a comma, "en", "of", "t/m", "juncto", "in verbinding met"
    conn   constant text := '(?:en|of|t/m|juncto|jo\.|in\s+verbinding\s+met)';
    joined constant text := '(\s*,\s*(?:' || conn || '\s+)?|\s+' || conn || '\s+)';
    -- the articles of a list after "artikel(en)" or "art(t)." ("de artikelen 6:18 en 6:19
    -- ... van de Awb"), marked in their colon: only they take a code from the list's last
    -- article, not a time ("om 10:30, artikel 8:29 Awb") or an ECLI's ordinal before one
    mark   constant text := chr(57344);  -- U+E000, private use
    colon  constant text := '[:' || chr(57344) || ']';
    result text := input;
    before text;
    rounds integer := 0;
    -- result in lower case, for the literals each pass needs: set again after a pass that
    -- changed the text (the passes that only turn ":" into the mark change no letter)
    low    text := lower(input);
BEGIN
    -- the first article after the keyword, then each next one of its list, a pass each
    IF strpos(low, 'art') > 0 AND strpos(result, ':') > 0 THEN
        result := regexp_replace(result,
            '\m(artikel(?:en)?|artt?\.?)(\s*\d{1,2}):(\d{1,4}[a-z]?\M)', '\1\2' || mark || '\3',
            'gi');
    END IF;
    IF strpos(result, mark) > 0 AND strpos(result, ':') > 0 THEN
        LOOP
            before := result;
            result := regexp_replace(result,
                '(\d{1,2}' || mark || '\d{1,4}[a-z]?\M' || qual || '(?:\s*,\s*(?:' || conn
                || '\s+)?|\s+' || conn || '\s+)\d{1,2}):(\d{1,4}[a-z]?\M)',
                '\1' || mark || '\2', 'gi');
            rounds := rounds + 1;
            EXIT WHEN result = before OR rounds >= 20;
        END LOOP;
    END IF;
    rounds := 0;
    -- book:article forms first ("6:162"), so the plain article form cannot eat them
    IF strpos(low, 'art') > 0 AND (strpos(result, ':') > 0 OR strpos(result, mark) > 0) THEN
        before := result;
        result := regexp_replace(result,
            '\m' || artkw || '(\d+)' || colon || '\s?(\d+[a-z]?)' || qual || van || codes || '\M',
            ' art\1x\2\3 \3 ', 'gi');
        result := regexp_replace(result,
            '\m' || codes || '\s*,?\s*' || artkw || '(\d+)' || colon || '\s?(\d+[a-z]?)\M'
            || qual,
            ' art\2x\3\1 \1 ', 'gi');
        IF result <> before THEN
            low := lower(result);
        END IF;
    END IF;
    -- a book:article without "artikel": "6:18 Awb", "en 6:19, eerste lid, van de Awb"
    IF strpos(result, ':') > 0 OR strpos(result, mark) > 0 THEN
        before := result;
        result := regexp_replace(result,
            '(?:^|(?<=[\s(,]))(\d{1,2})' || colon || '(\d{1,4}[a-z]?)' || qual || van || codes
            || '\M',
            ' art\1x\2\3 \3 ', 'gi');
        IF result <> before THEN
            low := lower(result);
        END IF;
    END IF;
    -- "Boek 6 artikel 248" and "artikel 162 van Boek 6 (BW)": the books are the Civil Code's
    IF strpos(low, 'art') > 0 AND strpos(low, 'boek') > 0 THEN
        before := result;
        result := regexp_replace(result,
            '\mboek\s+(\d{1,2}),?\s+' || artkw || '(\d+[a-z]?)\M'
            '(?:\s*,?\s*(?:van\s+het\s+)?(?:bw|burgerlijk\s+wetboek)\M)?'
            '(?!\s*,?\s*(?:van\s+(?:het|de)\s+)?(?:wetboek\s+van|awb|rv|sr|sv|algemene)\M)',
            ' art\1x\2bw bw ', 'gi');
        result := regexp_replace(result,
            '\m' || artkw || '(\d+[a-z]?)\s+(?:van\s+)?boek\s+(\d{1,2})\M'
            '(?:\s*,?\s*(?:van\s+het\s+)?(?:bw|burgerlijk\s+wetboek)\M)?'
            '(?!\s*,?\s*(?:van\s+(?:het|de)\s+)?(?:wetboek\s+van|awb|rv|sr|sv|algemene)\M)',
            ' art\2x\1bw bw ', 'gi');
        IF result <> before THEN
            low := lower(result);
        END IF;
    END IF;
    IF strpos(low, 'art') > 0 THEN
        before := result;
        result := regexp_replace(result,
            '\m' || artkw || '(\d+[a-z]?)\M' || qual || van || codes || '\M',
            ' art\1\2 \2 ', 'gi');
        result := regexp_replace(result,
            '\m' || codes || '\s*,?\s*' || artkw || '(\d+[a-z]?)\M' || qual,
            ' art\2\1 \1 ', 'gi');
        IF result <> before THEN
            low := lower(result);
        END IF;
    END IF;
    -- each token's code the short one: "art6x19Algemene wet bestuursrecht (Awb)" -> art6x19awb;
    -- every law's names hold "wet"
    IF strpos(low, 'art') > 0 AND strpos(low, 'wet') > 0 THEN
        FOR i IN 1 .. array_length(laws, 1) LOOP
            CONTINUE WHEN strpos(low, laws[i][3]) = 0;
            before := result;
            result := regexp_replace(result, '\m(art\d+(?:x\d+[a-z]?)?)' || laws[i][1],
                                     '\1' || laws[i][2], 'gi');
            IF result <> before THEN
                low := lower(result);
            END IF;
        END LOOP;
    END IF;
    -- the European Patent Convention in English and in Dutch
    IF strpos(low, 'art') > 0 AND strpos(low, 'epc') > 0 THEN
        result := regexp_replace(result, '\m(art\d+(?:x\d+[a-z]?)?)epc\M', '\1eov', 'gi');
    END IF;
    -- a list before one code: the article before a token takes the token's code, from the
    -- last of the list to the first ("6:18 en art6x19awb" -> "art6x18awb en art6x19awb")
    IF strpos(result, mark) > 0 THEN
        LOOP
            before := result;
            result := regexp_replace(result,
                '(\d{1,2})' || mark || '(\d{1,4}[a-z]?)\M' || qual || joined
                || '(art\d+x\d+[a-z]?)' || short || '\M',
                ' art\1x\2\5 \3\4\5', 'gi');
            rounds := rounds + 1;
            EXIT WHEN result = before OR rounds >= 20;
        END LOOP;
        result := replace(result, mark, ':');
    END IF;
    -- "ecl": the "i" of "ecli" is left out (see the head of this file)
    IF strpos(lower(result), 'ecl') > 0 THEN
        result := regexp_replace(result,
            '\m(ECLI):([A-Z]{2}):([A-Z0-9]{1,7}):(\d{4}):([A-Z0-9.]{1,25}[A-Z0-9])',
            '\1:\2:\3:\4:\5 \1\2\3\4\5 ', 'gi');
    END IF;
    RETURN result;
END
$$;

-- FUNCTION public ewall_nl_headline_query(tsquery)

CREATE FUNCTION public.ewall_nl_headline_query(q tsquery) RETURNS tsquery
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT CAST(regexp_replace(CAST(q AS text),
                               '(^|[ !(])(''[[:alpha:]]{7}'')(?!:)', '\1\2:*', 'g') AS tsquery)
$$;

-- FUNCTION public ewall_nl_phrase(text)

CREATE FUNCTION public.ewall_nl_phrase(input text) RETURNS tsquery
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT CAST(string_agg(
               CASE WHEN w.previous IS NULL THEN '' ELSE ' <' || (w.pos - w.previous) || '> ' END
               || '''' || replace(replace(w.lexeme, '\', '\\'), '''', '''''') || '''',
               '' ORDER BY w.pos, w.lexeme) AS tsquery)
    FROM (SELECT u.lexeme, p.pos, lag(p.pos) OVER (ORDER BY p.pos, u.lexeme) AS previous
          FROM unnest(public.ewall_nl_tsvector(input)) AS u,
               unnest(u.positions) AS p(pos)) AS w
$$;

-- FUNCTION public ewall_nl_tsvector(text)

CREATE FUNCTION public.ewall_nl_tsvector(body text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT public.ewall_cut_lexemes(
        to_tsvector('public.ewall_nl_plain'::regconfig, public.ewall_legal_normalize(body)), 7)
$$;

-- FUNCTION public ewall_nl_websearch(text)

CREATE FUNCTION public.ewall_nl_websearch(query text) RETURNS tsquery
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT CAST(regexp_replace(
               CAST(websearch_to_tsquery('public.ewall_nl_plain'::regconfig,
                                         public.ewall_legal_normalize(query)) AS text),
               '(^|[ !(])''([[:alpha:]]{7})[[:alpha:]]+''', '\1''\2''', 'g') AS tsquery)
$$;

-- FUNCTION public ewall_pending_key_counts(text[], text[], text[])

CREATE FUNCTION public.ewall_pending_key_counts(wall_groups text[], source_acl_ids text[], lexemes text[]) RETURNS TABLE(lexeme text, n_chunks bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION public ewall_posting_impact(bigint, numeric)

CREATE FUNCTION public.ewall_posting_impact(tf bigint, n_tokens numeric) RETURNS real
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CAST(tf * 4.0 / (tf + 3.0 * (0.1 + 0.9 * greatest(n_tokens, 1) / 2000.0)) AS real)
$$;

-- FUNCTION public ewall_postings_after_write()

CREATE FUNCTION public.ewall_postings_after_write() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        touched := ARRAY(SELECT DISTINCT document_id FROM new_rows ORDER BY 1);
    ELSIF TG_OP = 'DELETE' THEN
        touched := ARRAY(SELECT DISTINCT document_id FROM old_rows ORDER BY 1);
    ELSE
        touched := ARRAY(
            SELECT DISTINCT x.document_id
            FROM old_rows AS o
            JOIN new_rows AS n ON n.chunk_id = o.chunk_id
            CROSS JOIN LATERAL (VALUES (o.document_id), (n.document_id)) AS x(document_id)
            WHERE (o.document_id, o.wall_group_id, o.source_acl_id, o.matter_id, o.suppressed,
                   o.token_count, o.body)
                  IS DISTINCT FROM
                  (n.document_id, n.wall_group_id, n.source_acl_id, n.matter_id, n.suppressed,
                   n.token_count, n.body)
            ORDER BY 1);
    END IF;
    IF cardinality(touched) > 0 THEN
        PERFORM ewall_postings_rebuild(touched);
    END IF;
    RETURN NULL;
END
$$;

-- FUNCTION public ewall_postings_rebuild(bigint[])

CREATE FUNCTION public.ewall_postings_rebuild(documents bigint[]) RETURNS void
    LANGUAGE sql
    AS $$
    DELETE FROM search_postings WHERE document_id = ANY(documents);
    INSERT INTO search_postings
        (lexeme, document_id, wall_group_id, source_acl_id, matter_id, tf, n_tokens, impact)
    WITH parts AS (
        SELECT c.document_id, c.wall_group_id, c.source_acl_id,
               coalesce(c.matter_id, '') AS matter_id, sum(c.token_count) AS n_tokens
        FROM chunks AS c
        WHERE c.document_id = ANY(documents) AND NOT c.suppressed
        GROUP BY 1, 2, 3, 4
    ), terms AS (
        SELECT c.document_id, c.wall_group_id, c.source_acl_id,
               coalesce(c.matter_id, '') AS matter_id, t.lexeme,
               sum(coalesce(array_length(t.positions, 1), 1)) AS tf
        FROM chunks AS c, unnest(c.body_tsv) AS t
        WHERE c.document_id = ANY(documents) AND NOT c.suppressed
        GROUP BY 1, 2, 3, 4, 5
    )
    SELECT t.lexeme, t.document_id, t.wall_group_id, t.source_acl_id, t.matter_id, t.tf,
           p.n_tokens, ewall_posting_impact(t.tf, p.n_tokens)
    FROM terms AS t
    JOIN parts AS p USING (document_id, wall_group_id, source_acl_id, matter_id)
    ORDER BY t.lexeme, t.document_id, t.wall_group_id, t.source_acl_id, t.matter_id;
$$;

-- FUNCTION public ewall_query_lexemes(text)

CREATE FUNCTION public.ewall_query_lexemes(query text) RETURNS text[]
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    AS $$
    SELECT coalesce(tsvector_to_array(public.ewall_nl_tsvector(query)), '{}')
$$;

-- FUNCTION public ewall_question_names(text)

CREATE FUNCTION public.ewall_question_names(question text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT ARRAY(
        SELECT n.name
        FROM (SELECT f.name, min(f.first) AS first
              FROM (SELECT coalesce(m.x[1],
                                    'ECLI:' || m.x[7] || ':' || m.x[8] || ':' || m.x[9] || ':'
                                    || m.x[10],
                                    'ECLI:' || coalesce(m.x[11], 'NL') || ':' || m.x[12] || ':'
                                    || m.x[13] || ':' || m.x[14],
                                    'LJN:' || coalesce(m.x[2], m.x[3]),
                                    'VP:' || replace(m.x[4], '.', '') || ' ' || m.x[5] || '/'
                                    || m.x[6]) AS name,
                           m.pos AS first
                    FROM regexp_matches(
                             upper(question),
                             '(ECLI:[A-Z]{2}:[A-Z0-9]{1,7}:[0-9]{4}:[A-Z0-9.]{0,24}[A-Z0-9])'
                             || '|(?<![A-Z0-9])LJN:? *([A-Z]{2}[0-9]{4})(?![A-Z0-9/-])'
                             || '|(?<![A-Z0-9:.!/-])([A-Z]{2}[0-9]{4})(?![A-Z0-9/-])'
                             || '|(?<![A-Z0-9.-])(?!(?:JANUARI|FEBRUARI|MAART|APRIL|MEI|JUNI|JULI|AUGUSTUS|SEPTEMBER|OKTOBER|NOVEMBER|DECEMBER) ?[0-9])'
                             || '([A-Z][A-Z.-]{0,15}) ?([0-9]{4}) ?(?:[/,]|,? NR\.?) ?'
                             || '([0-9]+(?:\.[0-9]+)*[A-Z]?)(?![0-9A-Z])'
                             || '|(?<![A-Z0-9])ECLI *[:. -] *([A-Z]{2}) *[:. -] *([A-Z0-9]{1,7}) *[:. -] *'
                             || '([0-9]{4}) *[:. -] *([A-Z0-9]{0,24}[A-Z0-9])(?![A-Z0-9])'
                             || '|(?<![A-Z0-9:.-])(?:([A-Z]{2}):)?([A-Z][A-Z0-9]{1,6}):([0-9]{4}):'
                             || '([A-Z0-9]{0,24}[A-Z0-9])(?![A-Z0-9:])',
                             'g') WITH ORDINALITY AS m (x, pos)
                    UNION ALL
                    -- case numbers, after the names above (their own pass: "nr." also ends
                    -- a journal citation, which the pass above reads)
                    SELECT CASE WHEN coalesce(c.x[5], c.x[7]) IS NULL THEN 'ZN:'
                                ELSE 'ZC:' || public.ewall_court_family(coalesce(c.x[4], c.x[6]))
                                     || ':' END
                           || public.ewall_case_number(
                               regexp_replace(coalesce(c.x[1], c.x[2], c.x[3], c.x[5], c.x[7]),
                                              '[_-]', '/', 'g')),
                           1000 + c.pos
                    FROM regexp_matches(
                             upper(question),
                             '(?<![A-Z0-9-])(?:ZAAKNUMMERS?|ZAAKNR\.?|ROLNUMMERS?|ROLNR\.?)[: ]*'
                             || '(?:[A-Z]{1,5} )?([0-9]+(?:[./_-][0-9]+)*)(?![0-9])'
                             || '|(?<![0-9A-Z./-])([0-9]{2,3}(?:\.[0-9]{3}){2,3}[/-][0-9]{1,3})(?![0-9/.-])'
                             || '|(?<![0-9A-Z./-])C/([0-9]{2}/[0-9]{5,7})(?![0-9/.-])'
                             -- after a court, its place and a date: "nr." and a number, or
                             -- a date and a number with a slash
                             || '|(?<![A-Z0-9])(HR|HOGE RAAD|CRVB|CBB|ABRVS|ABRS|RVS|RAAD VAN STATE|HOF|GERECHTSHOF|RB|RECHTBANK|KTR|KANTONRECHTER)\.?(?: [A-Z''-]+){0,3}?(?:[ ,]+[0-9]{1,2}(?: (?:JANUARI|FEBRUARI|MAART|APRIL|MEI|JUNI|JULI|AUGUSTUS|SEPTEMBER|OKTOBER|NOVEMBER|DECEMBER) |-[0-9]{1,2}-)[0-9]{4})?[ ,]*'
                             || '(?:NR\.?|NO\.?|NUMMER) *([0-9]+(?:[./_-][0-9]+)*)(?![0-9])'
                             || '|(?<![A-Z0-9])(HR|HOGE RAAD|CRVB|CBB|ABRVS|ABRS|RVS|RAAD VAN STATE|HOF|GERECHTSHOF|RB|RECHTBANK|KTR|KANTONRECHTER)\.?(?: [A-Z''-]+){0,3}?(?:[ ,]+[0-9]{1,2}(?: (?:JANUARI|FEBRUARI|MAART|APRIL|MEI|JUNI|JULI|AUGUSTUS|SEPTEMBER|OKTOBER|NOVEMBER|DECEMBER) |-[0-9]{1,2}-)[0-9]{4})[ ,]+'
                             || '([0-9]{2,4}/[0-9]{3,7}|[0-9]{6,12}/[0-9]{1,3})(?![0-9])',
                             'g') WITH ORDINALITY AS c (x, pos)
                    WHERE length(regexp_replace(coalesce(c.x[1], c.x[2], c.x[3], c.x[5], c.x[7]),
                                                '[^0-9]', '', 'g'))
                          >= 4
                    UNION ALL
                    -- a court, at most three words (its place, "heeft op") and a date: that
                    -- court's decisions of that day ("HR 27 september 1995", "Rb. Amsterdam
                    -- 21-05-2013"), after the names above
                    SELECT 'CD:' || public.ewall_court_family(d.x[1]) || ':' || d.x[5] || '-'
                           || lpad(coalesce(d.x[4], array_position(
                                  ARRAY['JANUARI', 'FEBRUARI', 'MAART', 'APRIL', 'MEI', 'JUNI',
                                        'JULI', 'AUGUSTUS', 'SEPTEMBER', 'OKTOBER',
                                        'NOVEMBER', 'DECEMBER'], d.x[3])::text), 2, '0')
                           || '-' || lpad(d.x[2], 2, '0'),
                           2000 + d.pos
                    FROM regexp_matches(
                             upper(question),
                             '(?<![A-Z0-9])(HR|HOGE RAAD|CRVB|CBB|ABRVS|ABRS|RVS|RAAD VAN STATE|HOF|GERECHTSHOF|RB|RECHTBANK|KTR|KANTONRECHTER)\.?(?: [A-Z''-]+){0,3}?[ ,]+'
                             || '([0-9]{1,2})(?: (JANUARI|FEBRUARI|MAART|APRIL|MEI|JUNI|JULI|AUGUSTUS|SEPTEMBER|OKTOBER|NOVEMBER|DECEMBER) |-([0-9]{1,2})-)([0-9]{4})(?![0-9])',
                             'g') WITH ORDINALITY AS d (x, pos)
                    WHERE coalesce(d.x[4], '1')::int BETWEEN 1 AND 12
                      AND d.x[2]::int BETWEEN 1 AND 31) AS f
              GROUP BY f.name) AS n
        ORDER BY n.first
        LIMIT 20)
$$;

-- FUNCTION public ewall_reembed_forget_next()

CREATE FUNCTION public.ewall_reembed_forget_next() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.embedding_next := NULL;
    NEW.embedding_next_model := NULL;
    RETURN NEW;
END
$$;

-- FUNCTION public ewall_retag_pending()

CREATE FUNCTION public.ewall_retag_pending() RETURNS text[]
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT coalesce(array_agg(matter_id ORDER BY matter_id), '{}') FROM retag_pending
$$;

-- FUNCTION public ewall_sparse_impact_topk(text[], double precision[], text[], text[], text[], integer)

CREATE FUNCTION public.ewall_sparse_impact_topk(lexemes text[], weights double precision[], wall_groups text[], source_acl_ids text[], pending text[], n integer) RETURNS TABLE(document_id bigint, wall_group_id text, source_acl_id text, matter_id text, score double precision)
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET plan_cache_mode TO 'force_custom_plan'
    AS $$
DECLARE
    depth integer := greatest(16 * n, 1024);
    bound float8;
    nth_lb float8;
    candidates bigint[];
    best_documents bigint[];
    best_groups text[];
    best_acls text[];
    best_matters text[];
    best_scores float8[];
BEGIN
    LOOP
        WITH heads AS MATERIALIZED (
            SELECT l.i, h.document_id, h.wall_group_id, h.source_acl_id, h.matter_id, h.impact
            FROM unnest(lexemes) WITH ORDINALITY AS l(lexeme, i)
            CROSS JOIN LATERAL (
                SELECT p.document_id, p.wall_group_id, p.source_acl_id, p.matter_id, p.impact
                FROM search_postings AS p
                WHERE p.lexeme = l.lexeme
                  AND p.wall_group_id = ANY(wall_groups)
                  AND p.source_acl_id = ANY(source_acl_ids)
                  AND p.matter_id <> ALL(pending)
                ORDER BY p.impact DESC
                LIMIT depth
            ) AS h
        ), floors AS MATERIALIZED (
            SELECT l.i,
                   -- float8 from here on: a difference of two reals is rounded to a real
                   CASE WHEN count(h.document_id) < depth THEN CAST(0 AS float8)
                        ELSE CAST(min(h.impact) AS float8) END AS last_impact
            FROM generate_subscripts(lexemes, 1) AS l(i)
            LEFT JOIN heads AS h ON h.i = l.i
            GROUP BY l.i
        ), b AS (
            SELECT coalesce(sum(weights[f.i] * f.last_impact), 0) AS total FROM floors AS f
        ), met AS MATERIALIZED (
            -- lb, and ub - B (what the lists a part was met in add above their floors)
            SELECT h.document_id, sum(weights[h.i] * h.impact) AS lb,
                   sum(weights[h.i] * (CAST(h.impact AS float8) - f.last_impact)) AS gain
            FROM heads AS h JOIN floors AS f ON f.i = h.i
            GROUP BY h.document_id, h.wall_group_id, h.source_acl_id, h.matter_id
        ), nth AS (
            SELECT coalesce((SELECT m.lb FROM met AS m ORDER BY m.lb DESC OFFSET n - 1 LIMIT 1),
                            '-Infinity') AS lb
        )
        SELECT (SELECT nth.lb FROM nth), (SELECT b.total FROM b),
               ARRAY(SELECT DISTINCT m.document_id FROM met AS m
                     -- (a margin for two half steps of rounding and for float sums in
                     -- other orders: the head of this file)
                     WHERE (SELECT b.total FROM b) + m.gain
                           >= (SELECT nth.lb - 2e-9 * (1 + abs(nth.lb)) FROM nth)
                     ORDER BY 1)
        INTO nth_lb, bound, candidates;

        -- a round whose n-th lower bound is far below B is not scored (the head of this file)
        IF bound > 0 AND nth_lb < 0.8 * bound THEN
            RAISE DEBUG 'ewall_sparse_impact_topk: depth % not scored', depth;
            depth := depth * 4;
            CONTINUE;
        END IF;
        RAISE DEBUG 'ewall_sparse_impact_topk: depth % scored', depth;

        -- rounded and ordered as sparse_top in sql/search.sql: a tie is a tie, broken by part
        SELECT array_agg(s.document_id), array_agg(s.wall_group_id),
               array_agg(s.source_acl_id), array_agg(s.matter_id), array_agg(s.score)
        INTO best_documents, best_groups, best_acls, best_matters, best_scores
        FROM (SELECT x.document_id, x.wall_group_id, x.source_acl_id, x.matter_id,
                     round(x.score * 1e9) / 1e9 AS score
              FROM ewall_sparse_part_scores(candidates, lexemes, weights, wall_groups,
                                            source_acl_ids, pending) AS x
              ORDER BY 5 DESC, x.document_id, x.wall_group_id, x.source_acl_id, x.matter_id
              LIMIT n) AS s;

        -- the n-th rounded score over B by the margin (the head of this file): nothing
        -- unread reaches it, not even to tie
        IF bound <= 0 OR coalesce(cardinality(best_scores), 0) = n
                          AND best_scores[n] >= bound + 1e-9 * (1 + bound) THEN
            RETURN QUERY
                SELECT * FROM unnest(best_documents, best_groups, best_acls, best_matters,
                                     best_scores);
            RETURN;
        END IF;
        depth := depth * 4;
    END LOOP;
END
$$;

-- FUNCTION public ewall_sparse_part_scores(bigint[], text[], double precision[], text[], text[], text[])

CREATE FUNCTION public.ewall_sparse_part_scores(documents bigint[], lexemes text[], weights double precision[], wall_groups text[], source_acl_ids text[], pending text[]) RETURNS TABLE(document_id bigint, wall_group_id text, source_acl_id text, matter_id text, score double precision)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT p.document_id, p.wall_group_id, p.source_acl_id, p.matter_id,
           sum(q.weight * p.impact) AS score
    FROM unnest(lexemes, weights) AS q(lexeme, weight)
    JOIN search_postings AS p ON p.lexeme = q.lexeme
    WHERE p.document_id = ANY(documents)
      AND p.wall_group_id = ANY(wall_groups) AND p.source_acl_id = ANY(source_acl_ids)
      AND p.matter_id <> ALL(pending)
    GROUP BY 1, 2, 3, 4
$$;

-- FUNCTION public ewall_synonym_rule()

CREATE FUNCTION public.ewall_synonym_rule() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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
$$;

-- FUNCTION public ewall_xid8_near(xid, bigint)

CREATE FUNCTION public.ewall_xid8_near(p_xid xid, p_top bigint) RETURNS xid8
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    SELECT CAST(CAST(CASE WHEN n.x > p_top + 2147483648 THEN n.x - 4294967296
                          WHEN n.x < p_top - 2147483648 THEN n.x + 4294967296
                          ELSE n.x END AS text) AS xid8)
    FROM (SELECT (p_top & -4294967296) | CAST(CAST(p_xid AS text) AS bigint) AS x) AS n
$$;

-- TEXT SEARCH DICTIONARY public ewall_nl_stop

CREATE TEXT SEARCH DICTIONARY public.ewall_nl_stop (
    TEMPLATE = pg_catalog.simple,
    stopwords = 'dutch' );

-- TEXT SEARCH CONFIGURATION public ewall_nl

CREATE TEXT SEARCH CONFIGURATION public.ewall_nl (
    PARSER = pg_catalog."default" );

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR asciiword WITH public.unaccent, dutch_stem;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR word WITH public.unaccent, dutch_stem;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR numword WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR email WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR url WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR host WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR sfloat WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR version WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR hword_numpart WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR hword_part WITH public.unaccent, dutch_stem;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR hword_asciipart WITH public.unaccent, dutch_stem;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR numhword WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR asciihword WITH public.unaccent, dutch_stem;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR hword WITH public.unaccent, dutch_stem;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR url_path WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR file WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR "float" WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR "int" WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl
    ADD MAPPING FOR uint WITH simple;

-- TEXT SEARCH CONFIGURATION public ewall_nl_plain

CREATE TEXT SEARCH CONFIGURATION public.ewall_nl_plain (
    PARSER = pg_catalog."default" );

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR asciiword WITH public.unaccent, public.ewall_nl_stop;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR word WITH public.unaccent, public.ewall_nl_stop;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR numword WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR email WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR url WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR host WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR sfloat WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR version WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR hword_numpart WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR hword_part WITH public.unaccent, public.ewall_nl_stop;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR hword_asciipart WITH public.unaccent, public.ewall_nl_stop;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR numhword WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR asciihword WITH public.unaccent, public.ewall_nl_stop;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR hword WITH public.unaccent, public.ewall_nl_stop;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR url_path WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR file WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR "float" WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR "int" WITH simple;

ALTER TEXT SEARCH CONFIGURATION public.ewall_nl_plain
    ADD MAPPING FOR uint WITH simple;

-- TABLE public alembic_version

CREATE TABLE public.alembic_version (
    version_num character varying(32) NOT NULL
);

-- TABLE public audit_access_sets

CREATE TABLE public.audit_access_sets (
    set_id text NOT NULL,
    members text[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

-- TABLE public audit_heads

CREATE TABLE public.audit_heads (
    chain text NOT NULL,
    seq bigint NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL
);

-- TABLE public audit_retrieval_results

CREATE TABLE public.audit_retrieval_results (
    retrieval_id uuid NOT NULL,
    rank integer NOT NULL,
    chunk_id text NOT NULL,
    matter_id text,
    content_sha256 text NOT NULL,
    score double precision NOT NULL,
    sub_rank integer DEFAULT 0 NOT NULL,
    CONSTRAINT ck_audit_retrieval_results_sub_rank CHECK ((sub_rank >= 0))
);

-- TABLE public audit_retrievals

CREATE TABLE public.audit_retrievals (
    retrieval_id uuid NOT NULL,
    seq bigint NOT NULL,
    at timestamp with time zone NOT NULL,
    person_id text NOT NULL,
    roles text[] NOT NULL,
    purpose text NOT NULL,
    query text NOT NULL,
    mode text NOT NULL,
    k integer NOT NULL,
    filters jsonb NOT NULL,
    allowed_wall_groups_set text NOT NULL,
    source_principals_set text NOT NULL,
    policy_version bigint NOT NULL,
    model text,
    prompt_version text,
    strategy text NOT NULL,
    took_ms double precision NOT NULL,
    result_count integer NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL,
    session_id text,
    session_matter_id text,
    session_scope text,
    query_model text,
    CONSTRAINT ck_audit_retrievals_seq_positive CHECK ((seq >= 1)),
    CONSTRAINT ck_audit_retrievals_session_scope CHECK ((session_scope = ANY (ARRAY['bound'::text, 'widened'::text])))
);

-- TABLE public case_law

CREATE TABLE public.case_law (
    ecli text NOT NULL,
    court text,
    decision_date timestamp with time zone,
    area_of_law text,
    procedure text,
    relations jsonb DEFAULT '[]'::jsonb NOT NULL,
    withdrawn boolean,
    replaced_by text,
    set_aside_by text,
    state text DEFAULT 'active'::text NOT NULL,
    held_reason text,
    crosscheck jsonb,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT ck_case_law_state CHECK ((state = ANY (ARRAY['active'::text, 'withdrawn'::text, 'voided'::text, 'set_aside'::text, 'held'::text])))
);

-- TABLE public chunks

CREATE TABLE public.chunks (
    chunk_id text NOT NULL,
    document_id bigint NOT NULL,
    source text NOT NULL,
    external_id text NOT NULL,
    client_id text,
    matter_id text,
    wall_group_id text NOT NULL,
    source_acl_id text NOT NULL,
    doc_type text NOT NULL,
    section_path text DEFAULT ''::text NOT NULL,
    page_from integer,
    page_to integer,
    ordinal integer NOT NULL,
    body text NOT NULL,
    body_tsv tsvector GENERATED ALWAYS AS (public.ewall_nl_tsvector(body)) STORED,
    embedding public.vector(384) NOT NULL,
    content_sha256 text NOT NULL,
    token_count integer NOT NULL,
    suppressed boolean DEFAULT false NOT NULL,
    modified_at timestamp with time zone,
    ingested_at timestamp with time zone DEFAULT now() NOT NULL,
    embedding_model text
);
ALTER TABLE ONLY public.chunks ALTER COLUMN wall_group_id SET STATISTICS 5000;
ALTER TABLE ONLY public.chunks ALTER COLUMN embedding SET STORAGE PLAIN;

ALTER TABLE ONLY public.chunks FORCE ROW LEVEL SECURITY;

-- TABLE public clients

CREATE TABLE public.clients (
    client_id text NOT NULL,
    name text NOT NULL,
    name_norm text NOT NULL,
    parent_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT ck_clients_not_own_parent CHECK (((parent_id IS NULL) OR (parent_id <> client_id)))
);

-- TABLE public console_oidc_pending

CREATE TABLE public.console_oidc_pending (
    state_sha256 text NOT NULL,
    nonce text NOT NULL,
    verifier text NOT NULL,
    redirect_uri text NOT NULL,
    next_url text NOT NULL,
    expires_at timestamp with time zone NOT NULL
);

-- TABLE public console_sessions

CREATE TABLE public.console_sessions (
    sid_sha256 text NOT NULL,
    person_id text NOT NULL,
    roles text[] NOT NULL,
    csrf text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_seen timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL
);

-- TABLE public corpus_stats

CREATE TABLE public.corpus_stats (
    id smallint NOT NULL,
    n_chunks bigint NOT NULL,
    n_documents bigint DEFAULT 0 NOT NULL,
    n_document_tokens numeric DEFAULT 0 NOT NULL,
    CONSTRAINT ck_corpus_stats_single_row CHECK ((id = 1))
);

-- TABLE public documents

CREATE TABLE public.documents (
    document_id bigint NOT NULL,
    source text NOT NULL,
    external_id text NOT NULL,
    version text,
    status text NOT NULL,
    quarantine_reason text,
    client_id text,
    matter_id text,
    client_raw text,
    matter_raw text,
    doc_type text NOT NULL,
    title text NOT NULL,
    author text,
    modified_at timestamp with time zone,
    mime_type text,
    content_sha256 text,
    source_acl_id text NOT NULL,
    source_url text,
    search_state text DEFAULT 'active'::text NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    last_run_id uuid,
    ingested_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT ck_documents_search_state CHECK ((search_state = ANY (ARRAY['active'::text, 'withdrawn'::text, 'held'::text]))),
    CONSTRAINT ck_documents_status CHECK ((status = ANY (ARRAY['active'::text, 'quarantined'::text])))
);

-- SEQUENCE public documents_document_id_seq

ALTER TABLE public.documents ALTER COLUMN document_id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.documents_document_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- TABLE public embedding_live

CREATE TABLE public.embedding_live (
    id smallint NOT NULL,
    model_id text,
    model_name text,
    dimension integer,
    since timestamp with time zone,
    CONSTRAINT ck_embedding_live_single_row CHECK ((id = 1))
);

-- TABLE public eval_runs

CREATE TABLE public.eval_runs (
    run_id uuid NOT NULL,
    set_id bigint NOT NULL,
    person_id text NOT NULL,
    config jsonb NOT NULL,
    metrics jsonb NOT NULL,
    per_query jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

-- TABLE public gate_events

CREATE TABLE public.gate_events (
    event_id uuid NOT NULL,
    seq bigint NOT NULL,
    at timestamp with time zone NOT NULL,
    person_id text NOT NULL,
    gate text NOT NULL,
    ok boolean NOT NULL,
    request jsonb NOT NULL,
    outcome jsonb NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL,
    CONSTRAINT ck_gate_events_seq_positive CHECK ((seq >= 1))
);

-- TABLE public ingest_run_events

CREATE TABLE public.ingest_run_events (
    run_id uuid NOT NULL,
    seq integer NOT NULL,
    kind text NOT NULL,
    source text,
    external_id text,
    reason text,
    details jsonb DEFAULT '{}'::jsonb NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL
);

-- TABLE public ingest_runs

CREATE TABLE public.ingest_runs (
    run_id uuid NOT NULL,
    connector text NOT NULL,
    status text NOT NULL,
    started_by text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    params jsonb DEFAULT '{}'::jsonb NOT NULL,
    counts jsonb DEFAULT '{}'::jsonb NOT NULL,
    progress jsonb DEFAULT '{}'::jsonb NOT NULL,
    error text,
    CONSTRAINT ck_ingest_runs_status CHECK ((status = ANY (ARRAY['running'::text, 'succeeded'::text, 'failed'::text, 'partial'::text])))
);

-- TABLE public jobs

CREATE TABLE public.jobs (
    job_id bigint NOT NULL,
    kind text NOT NULL,
    person_id text NOT NULL,
    run_id uuid,
    payload jsonb NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer NOT NULL,
    run_after timestamp with time zone DEFAULT now() NOT NULL,
    locked_by text,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    claim_token bigint DEFAULT 0 NOT NULL,
    CONSTRAINT ck_jobs_attempts CHECK (((attempts >= 0) AND (max_attempts >= 1))),
    CONSTRAINT ck_jobs_status CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'succeeded'::text, 'failed'::text])))
);

-- SEQUENCE public jobs_job_id_seq

ALTER TABLE public.jobs ALTER COLUMN job_id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.jobs_job_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- TABLE public lexeme_stats

CREATE TABLE public.lexeme_stats (
    lexeme text NOT NULL,
    ndoc bigint NOT NULL
);

-- TABLE public limit_buckets

CREATE UNLOGGED TABLE public.limit_buckets (
    budget text NOT NULL,
    person_id text NOT NULL,
    tokens double precision NOT NULL,
    at double precision NOT NULL,
    full_at double precision NOT NULL
);

-- TABLE public limit_slots

CREATE UNLOGGED TABLE public.limit_slots (
    family text NOT NULL,
    person_id text NOT NULL,
    holders uuid[] NOT NULL,
    leases double precision[] NOT NULL,
    expires_at double precision NOT NULL,
    CONSTRAINT ck_limit_slots_paired CHECK ((cardinality(holders) = cardinality(leases)))
);

-- TABLE public matter_parties

CREATE TABLE public.matter_parties (
    matter_id text NOT NULL,
    "position" integer NOT NULL,
    name text NOT NULL,
    name_norm text NOT NULL,
    role text NOT NULL,
    CONSTRAINT ck_matter_parties_role CHECK ((role = ANY (ARRAY['adverse'::text, 'related'::text])))
);

-- TABLE public matter_team

CREATE TABLE public.matter_team (
    matter_id text NOT NULL,
    person_id text NOT NULL
);

-- TABLE public matter_wall_groups

CREATE TABLE public.matter_wall_groups (
    matter_id text NOT NULL,
    wall_group_id text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);

-- TABLE public matters

CREATE TABLE public.matters (
    matter_id text NOT NULL,
    client_id text NOT NULL,
    title text NOT NULL,
    status text DEFAULT 'open'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);

-- TABLE public people

CREATE TABLE public.people (
    person_id text NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    active boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);

-- TABLE public person_aliases

CREATE TABLE public.person_aliases (
    alias text NOT NULL,
    person_id text NOT NULL
);

-- TABLE public policy_events

CREATE TABLE public.policy_events (
    event_id uuid NOT NULL,
    seq bigint NOT NULL,
    at timestamp with time zone NOT NULL,
    actor text NOT NULL,
    action text NOT NULL,
    object_type text NOT NULL,
    object_id text NOT NULL,
    reason text,
    details jsonb NOT NULL,
    policy_version bigint NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL,
    CONSTRAINT ck_policy_events_seq_positive CHECK ((seq >= 1))
);

-- TABLE public policy_state

CREATE TABLE public.policy_state (
    id smallint NOT NULL,
    version bigint NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT ck_policy_state_single_row CHECK ((id = 1))
);

-- TABLE public reembed_runs

CREATE TABLE public.reembed_runs (
    run_id uuid NOT NULL,
    target_model text NOT NULL,
    target_model_id text NOT NULL,
    dimension integer NOT NULL,
    from_model_id text,
    status text NOT NULL,
    total bigint DEFAULT 0 NOT NULL,
    done bigint DEFAULT 0 NOT NULL,
    started_by text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    CONSTRAINT ck_reembed_runs_status CHECK ((status = ANY (ARRAY['filling'::text, 'indexing'::text, 'switching'::text, 'switched'::text, 'cancelled'::text])))
);

-- TABLE public relevance_judgements

CREATE TABLE public.relevance_judgements (
    query_id bigint NOT NULL,
    target_kind text NOT NULL,
    target_id text NOT NULL,
    grade smallint NOT NULL,
    judged_by text NOT NULL,
    judged_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT ck_relevance_judgements_grade CHECK (((grade >= 0) AND (grade <= 3))),
    CONSTRAINT ck_relevance_judgements_target_kind CHECK ((target_kind = ANY (ARRAY['document'::text, 'chunk'::text])))
);

-- TABLE public relevance_queries

CREATE TABLE public.relevance_queries (
    query_id bigint NOT NULL,
    set_id bigint NOT NULL,
    query_key text NOT NULL,
    text text NOT NULL,
    as_person text,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

-- SEQUENCE public relevance_queries_query_id_seq

ALTER TABLE public.relevance_queries ALTER COLUMN query_id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.relevance_queries_query_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- TABLE public relevance_sets

CREATE TABLE public.relevance_sets (
    set_id bigint NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

-- SEQUENCE public relevance_sets_set_id_seq

ALTER TABLE public.relevance_sets ALTER COLUMN set_id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.relevance_sets_set_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- TABLE public retag_pending

CREATE TABLE public.retag_pending (
    matter_id text NOT NULL,
    target_wall_group_id text NOT NULL,
    policy_version bigint NOT NULL,
    queued_at timestamp with time zone DEFAULT now() NOT NULL,
    retagged_chunks bigint DEFAULT 0 NOT NULL
);

-- TABLE public search_document_stats

CREATE TABLE public.search_document_stats (
    document_id bigint NOT NULL,
    n_chunks integer NOT NULL,
    n_tokens bigint NOT NULL
);

-- TABLE public search_key_document_stats

CREATE TABLE public.search_key_document_stats (
    document_id bigint NOT NULL,
    wall_group_id text NOT NULL,
    source_acl_id text NOT NULL,
    n_chunks integer NOT NULL,
    n_tokens bigint NOT NULL
);

-- TABLE public search_key_lexeme_stats

CREATE TABLE public.search_key_lexeme_stats (
    lexeme text NOT NULL,
    wall_group_id text NOT NULL,
    source_acl_id text NOT NULL,
    n_chunks bigint NOT NULL
);

-- TABLE public search_key_stats

CREATE TABLE public.search_key_stats (
    wall_group_id text NOT NULL,
    source_acl_id text NOT NULL,
    n_chunks bigint DEFAULT 0 NOT NULL,
    n_documents bigint DEFAULT 0 NOT NULL,
    n_document_tokens numeric DEFAULT 0 NOT NULL
);

-- TABLE public search_postings

CREATE TABLE public.search_postings (
    lexeme text NOT NULL,
    document_id bigint NOT NULL,
    wall_group_id text NOT NULL,
    source_acl_id text NOT NULL,
    matter_id text NOT NULL,
    tf integer NOT NULL,
    n_tokens integer NOT NULL,
    impact real NOT NULL
);

-- TABLE public search_synonyms

CREATE TABLE public.search_synonyms (
    term text NOT NULL,
    synonym text NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    target tsquery,
    substitute tsquery
);

-- VIEW public search_synonym_rules

CREATE VIEW public.search_synonym_rules AS
 SELECT target,
    substitute
   FROM public.search_synonyms s
  WHERE ((target IS NOT NULL) AND (substitute IS NOT NULL));

-- TABLE public source_acls

CREATE TABLE public.source_acls (
    source_acl_id text NOT NULL,
    default_access text NOT NULL,
    allow text[] DEFAULT '{}'::text[] NOT NULL,
    deny text[] DEFAULT '{}'::text[] NOT NULL,
    resolvable boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    deny_groups text[] GENERATED ALWAYS AS (public.ewall_group_principals(deny)) STORED NOT NULL,
    CONSTRAINT ck_source_acls_default_access CHECK ((default_access = ANY (ARRAY['public'::text, 'view'::text, 'private'::text, 'none'::text])))
);

-- TABLE public source_group_members

CREATE TABLE public.source_group_members (
    source text NOT NULL,
    group_id text NOT NULL,
    member text NOT NULL
);

-- TABLE public source_groups

CREATE TABLE public.source_groups (
    source text NOT NULL,
    group_id text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    synced boolean DEFAULT false NOT NULL
);

-- TABLE public sync_fences

CREATE TABLE public.sync_fences (
    source text NOT NULL,
    scope text NOT NULL,
    token bigint NOT NULL,
    holder text NOT NULL,
    backend_pid integer NOT NULL,
    taken_at timestamp with time zone DEFAULT now() NOT NULL
);

-- TABLE public sync_seen

CREATE TABLE public.sync_seen (
    source text NOT NULL,
    scope text NOT NULL,
    crawl_id text NOT NULL,
    external_id text NOT NULL
);

-- TABLE public sync_state

CREATE TABLE public.sync_state (
    source text NOT NULL,
    scope text NOT NULL,
    state jsonb DEFAULT '{}'::jsonb NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);

-- TABLE public textless_documents

CREATE TABLE public.textless_documents (
    source text NOT NULL,
    external_id text NOT NULL,
    version text,
    modified_at timestamp with time zone,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    prepared_with text NOT NULL,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL
);

-- TABLE public wall_group_sizes

CREATE TABLE public.wall_group_sizes (
    wall_group_id text NOT NULL,
    n_chunks bigint DEFAULT 0 NOT NULL
);

-- TABLE public wall_groups

CREATE TABLE public.wall_groups (
    wall_group_id text NOT NULL,
    wall_ids text[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

-- TABLE public wall_people

CREATE TABLE public.wall_people (
    wall_id text NOT NULL,
    person_id text NOT NULL,
    role text NOT NULL,
    CONSTRAINT ck_wall_people_role CHECK ((role = ANY (ARRAY['screened'::text, 'allowed'::text])))
);

-- TABLE public wall_protected_clients

CREATE TABLE public.wall_protected_clients (
    wall_id text NOT NULL,
    client_id text NOT NULL
);

-- TABLE public wall_protected_matters

CREATE TABLE public.wall_protected_matters (
    wall_id text NOT NULL,
    matter_id text NOT NULL
);

-- TABLE public walls

CREATE TABLE public.walls (
    wall_id text NOT NULL,
    kind text NOT NULL,
    title text NOT NULL,
    reason text NOT NULL,
    include_team boolean DEFAULT true NOT NULL,
    effective_from timestamp with time zone,
    effective_until timestamp with time zone,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    lifted_at timestamp with time zone,
    lifted_by text,
    lift_reason text,
    CONSTRAINT ck_walls_kind CHECK ((kind = ANY (ARRAY['exclusionary'::text, 'inclusionary'::text]))),
    CONSTRAINT ck_walls_lift_complete CHECK (((lifted_at IS NULL) = (lifted_by IS NULL))),
    CONSTRAINT ck_walls_window CHECK (((effective_until IS NULL) OR (effective_from IS NULL) OR (effective_until > effective_from)))
);

-- CONSTRAINT public alembic_version alembic_version_pkc

ALTER TABLE ONLY public.alembic_version
    ADD CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num);

-- CHECK CONSTRAINT public audit_access_sets ck_audit_access_sets_content_addressed

ALTER TABLE public.audit_access_sets
    ADD CONSTRAINT ck_audit_access_sets_content_addressed CHECK (((array_position(members, NULL::text) IS NULL) AND (set_id = public.ewall_access_set_id(members)))) NOT VALID;

-- CONSTRAINT public audit_access_sets pk_audit_access_sets

ALTER TABLE ONLY public.audit_access_sets
    ADD CONSTRAINT pk_audit_access_sets PRIMARY KEY (set_id);

-- CONSTRAINT public audit_heads pk_audit_heads

ALTER TABLE ONLY public.audit_heads
    ADD CONSTRAINT pk_audit_heads PRIMARY KEY (chain);

-- CONSTRAINT public audit_retrieval_results pk_audit_retrieval_results

ALTER TABLE ONLY public.audit_retrieval_results
    ADD CONSTRAINT pk_audit_retrieval_results PRIMARY KEY (retrieval_id, rank, sub_rank);

-- CONSTRAINT public audit_retrievals pk_audit_retrievals

ALTER TABLE ONLY public.audit_retrievals
    ADD CONSTRAINT pk_audit_retrievals PRIMARY KEY (retrieval_id);

-- CONSTRAINT public case_law pk_case_law

ALTER TABLE ONLY public.case_law
    ADD CONSTRAINT pk_case_law PRIMARY KEY (ecli);

-- CONSTRAINT public chunks pk_chunks

ALTER TABLE ONLY public.chunks
    ADD CONSTRAINT pk_chunks PRIMARY KEY (chunk_id);

-- CONSTRAINT public clients pk_clients

ALTER TABLE ONLY public.clients
    ADD CONSTRAINT pk_clients PRIMARY KEY (client_id);

-- CONSTRAINT public console_oidc_pending pk_console_oidc_pending

ALTER TABLE ONLY public.console_oidc_pending
    ADD CONSTRAINT pk_console_oidc_pending PRIMARY KEY (state_sha256);

-- CONSTRAINT public console_sessions pk_console_sessions

ALTER TABLE ONLY public.console_sessions
    ADD CONSTRAINT pk_console_sessions PRIMARY KEY (sid_sha256);

-- CONSTRAINT public corpus_stats pk_corpus_stats

ALTER TABLE ONLY public.corpus_stats
    ADD CONSTRAINT pk_corpus_stats PRIMARY KEY (id);

-- CONSTRAINT public documents pk_documents

ALTER TABLE ONLY public.documents
    ADD CONSTRAINT pk_documents PRIMARY KEY (document_id);

-- CONSTRAINT public embedding_live pk_embedding_live

ALTER TABLE ONLY public.embedding_live
    ADD CONSTRAINT pk_embedding_live PRIMARY KEY (id);

-- CONSTRAINT public eval_runs pk_eval_runs

ALTER TABLE ONLY public.eval_runs
    ADD CONSTRAINT pk_eval_runs PRIMARY KEY (run_id);

-- CONSTRAINT public gate_events pk_gate_events

ALTER TABLE ONLY public.gate_events
    ADD CONSTRAINT pk_gate_events PRIMARY KEY (event_id);

-- CONSTRAINT public ingest_run_events pk_ingest_run_events

ALTER TABLE ONLY public.ingest_run_events
    ADD CONSTRAINT pk_ingest_run_events PRIMARY KEY (run_id, seq);

-- CONSTRAINT public ingest_runs pk_ingest_runs

ALTER TABLE ONLY public.ingest_runs
    ADD CONSTRAINT pk_ingest_runs PRIMARY KEY (run_id);

-- CONSTRAINT public jobs pk_jobs

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT pk_jobs PRIMARY KEY (job_id);

-- CONSTRAINT public lexeme_stats pk_lexeme_stats

ALTER TABLE ONLY public.lexeme_stats
    ADD CONSTRAINT pk_lexeme_stats PRIMARY KEY (lexeme);

-- CONSTRAINT public limit_buckets pk_limit_buckets

ALTER TABLE ONLY public.limit_buckets
    ADD CONSTRAINT pk_limit_buckets PRIMARY KEY (budget, person_id);

-- CONSTRAINT public limit_slots pk_limit_slots

ALTER TABLE ONLY public.limit_slots
    ADD CONSTRAINT pk_limit_slots PRIMARY KEY (family, person_id);

-- CONSTRAINT public matter_parties pk_matter_parties

ALTER TABLE ONLY public.matter_parties
    ADD CONSTRAINT pk_matter_parties PRIMARY KEY (matter_id, "position");

-- CONSTRAINT public matter_team pk_matter_team

ALTER TABLE ONLY public.matter_team
    ADD CONSTRAINT pk_matter_team PRIMARY KEY (matter_id, person_id);

-- CONSTRAINT public matter_wall_groups pk_matter_wall_groups

ALTER TABLE ONLY public.matter_wall_groups
    ADD CONSTRAINT pk_matter_wall_groups PRIMARY KEY (matter_id);

-- CONSTRAINT public matters pk_matters

ALTER TABLE ONLY public.matters
    ADD CONSTRAINT pk_matters PRIMARY KEY (matter_id);

-- CONSTRAINT public people pk_people

ALTER TABLE ONLY public.people
    ADD CONSTRAINT pk_people PRIMARY KEY (person_id);

-- CONSTRAINT public person_aliases pk_person_aliases

ALTER TABLE ONLY public.person_aliases
    ADD CONSTRAINT pk_person_aliases PRIMARY KEY (alias);

-- CONSTRAINT public policy_events pk_policy_events

ALTER TABLE ONLY public.policy_events
    ADD CONSTRAINT pk_policy_events PRIMARY KEY (event_id);

-- CONSTRAINT public policy_state pk_policy_state

ALTER TABLE ONLY public.policy_state
    ADD CONSTRAINT pk_policy_state PRIMARY KEY (id);

-- CONSTRAINT public reembed_runs pk_reembed_runs

ALTER TABLE ONLY public.reembed_runs
    ADD CONSTRAINT pk_reembed_runs PRIMARY KEY (run_id);

-- CONSTRAINT public relevance_judgements pk_relevance_judgements

ALTER TABLE ONLY public.relevance_judgements
    ADD CONSTRAINT pk_relevance_judgements PRIMARY KEY (query_id, target_kind, target_id, judged_by);

-- CONSTRAINT public relevance_queries pk_relevance_queries

ALTER TABLE ONLY public.relevance_queries
    ADD CONSTRAINT pk_relevance_queries PRIMARY KEY (query_id);

-- CONSTRAINT public relevance_sets pk_relevance_sets

ALTER TABLE ONLY public.relevance_sets
    ADD CONSTRAINT pk_relevance_sets PRIMARY KEY (set_id);

-- CONSTRAINT public retag_pending pk_retag_pending

ALTER TABLE ONLY public.retag_pending
    ADD CONSTRAINT pk_retag_pending PRIMARY KEY (matter_id);

-- CONSTRAINT public search_document_stats pk_search_document_stats

ALTER TABLE ONLY public.search_document_stats
    ADD CONSTRAINT pk_search_document_stats PRIMARY KEY (document_id);

-- CONSTRAINT public search_key_document_stats pk_search_key_document_stats

ALTER TABLE ONLY public.search_key_document_stats
    ADD CONSTRAINT pk_search_key_document_stats PRIMARY KEY (document_id, wall_group_id, source_acl_id);

-- CONSTRAINT public search_key_lexeme_stats pk_search_key_lexeme_stats

ALTER TABLE ONLY public.search_key_lexeme_stats
    ADD CONSTRAINT pk_search_key_lexeme_stats PRIMARY KEY (lexeme, wall_group_id, source_acl_id) INCLUDE (n_chunks);

-- CONSTRAINT public search_key_stats pk_search_key_stats

ALTER TABLE ONLY public.search_key_stats
    ADD CONSTRAINT pk_search_key_stats PRIMARY KEY (wall_group_id, source_acl_id);

-- CONSTRAINT public search_postings pk_search_postings

ALTER TABLE ONLY public.search_postings
    ADD CONSTRAINT pk_search_postings PRIMARY KEY (lexeme, document_id, wall_group_id, source_acl_id, matter_id);

-- CONSTRAINT public search_synonyms pk_search_synonyms

ALTER TABLE ONLY public.search_synonyms
    ADD CONSTRAINT pk_search_synonyms PRIMARY KEY (term, synonym);

-- CONSTRAINT public source_acls pk_source_acls

ALTER TABLE ONLY public.source_acls
    ADD CONSTRAINT pk_source_acls PRIMARY KEY (source_acl_id);

-- CONSTRAINT public source_group_members pk_source_group_members

ALTER TABLE ONLY public.source_group_members
    ADD CONSTRAINT pk_source_group_members PRIMARY KEY (source, group_id, member);

-- CONSTRAINT public source_groups pk_source_groups

ALTER TABLE ONLY public.source_groups
    ADD CONSTRAINT pk_source_groups PRIMARY KEY (source, group_id);

-- CONSTRAINT public sync_fences pk_sync_fences

ALTER TABLE ONLY public.sync_fences
    ADD CONSTRAINT pk_sync_fences PRIMARY KEY (source, scope);

-- CONSTRAINT public sync_seen pk_sync_seen

ALTER TABLE ONLY public.sync_seen
    ADD CONSTRAINT pk_sync_seen PRIMARY KEY (source, scope, crawl_id, external_id);

-- CONSTRAINT public sync_state pk_sync_state

ALTER TABLE ONLY public.sync_state
    ADD CONSTRAINT pk_sync_state PRIMARY KEY (source, scope);

-- CONSTRAINT public textless_documents pk_textless_documents

ALTER TABLE ONLY public.textless_documents
    ADD CONSTRAINT pk_textless_documents PRIMARY KEY (source, external_id);

-- CONSTRAINT public wall_group_sizes pk_wall_group_sizes

ALTER TABLE ONLY public.wall_group_sizes
    ADD CONSTRAINT pk_wall_group_sizes PRIMARY KEY (wall_group_id);

-- CONSTRAINT public wall_groups pk_wall_groups

ALTER TABLE ONLY public.wall_groups
    ADD CONSTRAINT pk_wall_groups PRIMARY KEY (wall_group_id);

-- CONSTRAINT public wall_people pk_wall_people

ALTER TABLE ONLY public.wall_people
    ADD CONSTRAINT pk_wall_people PRIMARY KEY (wall_id, person_id, role);

-- CONSTRAINT public wall_protected_clients pk_wall_protected_clients

ALTER TABLE ONLY public.wall_protected_clients
    ADD CONSTRAINT pk_wall_protected_clients PRIMARY KEY (wall_id, client_id);

-- CONSTRAINT public wall_protected_matters pk_wall_protected_matters

ALTER TABLE ONLY public.wall_protected_matters
    ADD CONSTRAINT pk_wall_protected_matters PRIMARY KEY (wall_id, matter_id);

-- CONSTRAINT public walls pk_walls

ALTER TABLE ONLY public.walls
    ADD CONSTRAINT pk_walls PRIMARY KEY (wall_id);

-- CONSTRAINT public audit_retrievals uq_audit_retrievals_seq

ALTER TABLE ONLY public.audit_retrievals
    ADD CONSTRAINT uq_audit_retrievals_seq UNIQUE (seq);

-- CONSTRAINT public documents uq_documents_source_external_id

ALTER TABLE ONLY public.documents
    ADD CONSTRAINT uq_documents_source_external_id UNIQUE (source, external_id);

-- CONSTRAINT public gate_events uq_gate_events_seq

ALTER TABLE ONLY public.gate_events
    ADD CONSTRAINT uq_gate_events_seq UNIQUE (seq);

-- CONSTRAINT public policy_events uq_policy_events_seq

ALTER TABLE ONLY public.policy_events
    ADD CONSTRAINT uq_policy_events_seq UNIQUE (seq);

-- CONSTRAINT public relevance_queries uq_relevance_queries_set_id_query_key

ALTER TABLE ONLY public.relevance_queries
    ADD CONSTRAINT uq_relevance_queries_set_id_query_key UNIQUE (set_id, query_key);

-- CONSTRAINT public relevance_sets uq_relevance_sets_name

ALTER TABLE ONLY public.relevance_sets
    ADD CONSTRAINT uq_relevance_sets_name UNIQUE (name);

-- INDEX public ix_audit_retrieval_results_document

CREATE INDEX ix_audit_retrieval_results_document ON public.audit_retrieval_results USING btree (public.ewall_chunk_document(chunk_id));

-- INDEX public ix_audit_retrieval_results_matter_id

CREATE INDEX ix_audit_retrieval_results_matter_id ON public.audit_retrieval_results USING btree (matter_id);

-- INDEX public ix_audit_retrievals_at

CREATE INDEX ix_audit_retrievals_at ON public.audit_retrievals USING btree (at);

-- INDEX public ix_audit_retrievals_person_id_at

CREATE INDEX ix_audit_retrievals_person_id_at ON public.audit_retrievals USING btree (person_id, at);

-- INDEX public ix_audit_retrievals_session_id_seq

CREATE INDEX ix_audit_retrievals_session_id_seq ON public.audit_retrievals USING btree (session_id, seq);

-- INDEX public ix_chunks_body_tsv

CREATE INDEX ix_chunks_body_tsv ON public.chunks USING gin (body_tsv);

-- INDEX public ix_chunks_content_sha256

CREATE INDEX ix_chunks_content_sha256 ON public.chunks USING btree (content_sha256);

-- INDEX public ix_chunks_document_id

CREATE INDEX ix_chunks_document_id ON public.chunks USING btree (document_id);

-- INDEX public ix_chunks_embedding_hnsw

CREATE INDEX ix_chunks_embedding_hnsw ON public.chunks USING hnsw (embedding public.vector_cosine_ops) WITH (m='16', ef_construction='128');

-- INDEX public ix_chunks_matter_id

CREATE INDEX ix_chunks_matter_id ON public.chunks USING btree (matter_id);

-- INDEX public ix_chunks_wall_group_id

CREATE INDEX ix_chunks_wall_group_id ON public.chunks USING btree (wall_group_id);

-- INDEX public ix_clients_name_norm

CREATE INDEX ix_clients_name_norm ON public.clients USING btree (name_norm);

-- INDEX public ix_clients_parent_id

CREATE INDEX ix_clients_parent_id ON public.clients USING btree (parent_id);

-- INDEX public ix_console_oidc_pending_expires_at

CREATE INDEX ix_console_oidc_pending_expires_at ON public.console_oidc_pending USING btree (expires_at);

-- INDEX public ix_console_sessions_expires_at

CREATE INDEX ix_console_sessions_expires_at ON public.console_sessions USING btree (expires_at);

-- INDEX public ix_documents_matter_id

CREATE INDEX ix_documents_matter_id ON public.documents USING btree (matter_id);

-- INDEX public ix_documents_names

CREATE INDEX ix_documents_names ON public.documents USING gin (public.ewall_document_names(title, external_id, metadata));

-- INDEX public ix_jobs_person_id_status

CREATE INDEX ix_jobs_person_id_status ON public.jobs USING btree (person_id, status);

-- INDEX public ix_jobs_run_id

CREATE INDEX ix_jobs_run_id ON public.jobs USING btree (run_id);

-- INDEX public ix_jobs_status_run_after

CREATE INDEX ix_jobs_status_run_after ON public.jobs USING btree (status, run_after);

-- INDEX public ix_limit_buckets_full_at

CREATE INDEX ix_limit_buckets_full_at ON public.limit_buckets USING btree (full_at);

-- INDEX public ix_limit_slots_expires_at

CREATE INDEX ix_limit_slots_expires_at ON public.limit_slots USING btree (expires_at);

-- INDEX public ix_matter_parties_name_norm

CREATE INDEX ix_matter_parties_name_norm ON public.matter_parties USING btree (name_norm);

-- INDEX public ix_matter_team_person_id

CREATE INDEX ix_matter_team_person_id ON public.matter_team USING btree (person_id);

-- INDEX public ix_matter_wall_groups_wall_group_id

CREATE INDEX ix_matter_wall_groups_wall_group_id ON public.matter_wall_groups USING btree (wall_group_id);

-- INDEX public ix_matters_client_id

CREATE INDEX ix_matters_client_id ON public.matters USING btree (client_id);

-- INDEX public ix_person_aliases_person_id

CREATE INDEX ix_person_aliases_person_id ON public.person_aliases USING btree (person_id);

-- INDEX public ix_policy_events_changes

CREATE INDEX ix_policy_events_changes ON public.policy_events USING gin (((details -> 'changes'::text)) jsonb_path_ops);

-- INDEX public ix_search_postings_document_id

CREATE INDEX ix_search_postings_document_id ON public.search_postings USING btree (document_id);

-- INDEX public ix_search_postings_impact

CREATE INDEX ix_search_postings_impact ON public.search_postings USING btree (lexeme, impact DESC) INCLUDE (document_id, wall_group_id, source_acl_id, matter_id);

-- INDEX public ix_search_postings_key

CREATE INDEX ix_search_postings_key ON public.search_postings USING btree (lexeme, wall_group_id, source_acl_id) INCLUDE (matter_id, document_id, impact);

-- INDEX public ix_source_acls_allow

CREATE INDEX ix_source_acls_allow ON public.source_acls USING gin (allow);

-- INDEX public ix_source_acls_deny

CREATE INDEX ix_source_acls_deny ON public.source_acls USING gin (deny);

-- INDEX public ix_source_group_members_member

CREATE INDEX ix_source_group_members_member ON public.source_group_members USING btree (member);

-- INDEX public ix_wall_people_person_id

CREATE INDEX ix_wall_people_person_id ON public.wall_people USING btree (person_id);

-- INDEX public ix_wall_protected_clients_client_id

CREATE INDEX ix_wall_protected_clients_client_id ON public.wall_protected_clients USING btree (client_id);

-- INDEX public ix_wall_protected_matters_matter_id

CREATE INDEX ix_wall_protected_matters_matter_id ON public.wall_protected_matters USING btree (matter_id);

-- INDEX public ix_walls_open_effective_from

CREATE INDEX ix_walls_open_effective_from ON public.walls USING btree (effective_from) WHERE (lifted_at IS NULL);

-- INDEX public ix_walls_open_effective_until

CREATE INDEX ix_walls_open_effective_until ON public.walls USING btree (effective_until) WHERE (lifted_at IS NULL);

-- INDEX public ux_reembed_runs_active

CREATE UNIQUE INDEX ux_reembed_runs_active ON public.reembed_runs USING btree ((true)) WHERE (status = ANY (ARRAY['filling'::text, 'indexing'::text, 'switching'::text]));

-- TRIGGER public audit_access_sets audit_access_sets_append_only

CREATE TRIGGER audit_access_sets_append_only BEFORE DELETE OR UPDATE ON public.audit_access_sets FOR EACH ROW EXECUTE FUNCTION public.ewall_audit_refuse_change();

ALTER TABLE public.audit_access_sets ENABLE ALWAYS TRIGGER audit_access_sets_append_only;

-- TRIGGER public audit_access_sets audit_access_sets_no_truncate

CREATE TRIGGER audit_access_sets_no_truncate BEFORE TRUNCATE ON public.audit_access_sets FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_audit_refuse_change();

ALTER TABLE public.audit_access_sets ENABLE ALWAYS TRIGGER audit_access_sets_no_truncate;

-- TRIGGER public audit_heads audit_heads_name_their_rows

CREATE CONSTRAINT TRIGGER audit_heads_name_their_rows AFTER UPDATE ON public.audit_heads DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.ewall_audit_head_agrees();

-- TRIGGER public audit_heads audit_heads_no_delete

CREATE TRIGGER audit_heads_no_delete BEFORE DELETE ON public.audit_heads FOR EACH ROW EXECUTE FUNCTION public.ewall_audit_refuse_change();

ALTER TABLE public.audit_heads ENABLE ALWAYS TRIGGER audit_heads_no_delete;

-- TRIGGER public audit_heads audit_heads_no_truncate

CREATE TRIGGER audit_heads_no_truncate BEFORE TRUNCATE ON public.audit_heads FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_audit_refuse_change();

ALTER TABLE public.audit_heads ENABLE ALWAYS TRIGGER audit_heads_no_truncate;

-- TRIGGER public audit_retrieval_results audit_retrieval_results_append_only

CREATE TRIGGER audit_retrieval_results_append_only BEFORE DELETE OR UPDATE ON public.audit_retrieval_results FOR EACH ROW EXECUTE FUNCTION public.ewall_audit_refuse_change();

ALTER TABLE public.audit_retrieval_results ENABLE ALWAYS TRIGGER audit_retrieval_results_append_only;

-- TRIGGER public audit_retrieval_results audit_retrieval_results_no_truncate

CREATE TRIGGER audit_retrieval_results_no_truncate BEFORE TRUNCATE ON public.audit_retrieval_results FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_audit_refuse_change();

ALTER TABLE public.audit_retrieval_results ENABLE ALWAYS TRIGGER audit_retrieval_results_no_truncate;

-- TRIGGER public audit_retrieval_results audit_retrieval_results_sealed

CREATE TRIGGER audit_retrieval_results_sealed AFTER INSERT ON public.audit_retrieval_results REFERENCING NEW TABLE AS new_results FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_audit_results_sealed();

ALTER TABLE public.audit_retrieval_results ENABLE ALWAYS TRIGGER audit_retrieval_results_sealed;

-- TRIGGER public audit_retrievals audit_retrievals_append_only

CREATE TRIGGER audit_retrievals_append_only BEFORE DELETE OR UPDATE ON public.audit_retrievals FOR EACH ROW EXECUTE FUNCTION public.ewall_audit_refuse_change();

ALTER TABLE public.audit_retrievals ENABLE ALWAYS TRIGGER audit_retrievals_append_only;

-- TRIGGER public audit_retrievals audit_retrievals_no_truncate

CREATE TRIGGER audit_retrievals_no_truncate BEFORE TRUNCATE ON public.audit_retrievals FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_audit_refuse_change();

ALTER TABLE public.audit_retrievals ENABLE ALWAYS TRIGGER audit_retrievals_no_truncate;

-- TRIGGER public audit_retrievals audit_retrievals_within_head

CREATE CONSTRAINT TRIGGER audit_retrievals_within_head AFTER INSERT ON public.audit_retrievals DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.ewall_audit_head_agrees('retrievals');

-- TRIGGER public chunks chunks_document_stats_delete

CREATE TRIGGER chunks_document_stats_delete AFTER DELETE ON public.chunks REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_document_stats_after_delete();

-- TRIGGER public chunks chunks_document_stats_insert

CREATE TRIGGER chunks_document_stats_insert AFTER INSERT ON public.chunks REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_document_stats_after_insert();

-- TRIGGER public chunks chunks_document_stats_update

CREATE TRIGGER chunks_document_stats_update AFTER UPDATE ON public.chunks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_document_stats_after_update();

-- TRIGGER public chunks chunks_key_stats_delete

CREATE TRIGGER chunks_key_stats_delete AFTER DELETE ON public.chunks REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_key_stats_after_delete();

-- TRIGGER public chunks chunks_key_stats_insert

CREATE TRIGGER chunks_key_stats_insert AFTER INSERT ON public.chunks REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_key_stats_after_insert();

-- TRIGGER public chunks chunks_key_stats_update

CREATE TRIGGER chunks_key_stats_update AFTER UPDATE ON public.chunks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_key_stats_after_update();

-- TRIGGER public chunks chunks_postings_delete

CREATE TRIGGER chunks_postings_delete AFTER DELETE ON public.chunks REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_postings_after_write();

-- TRIGGER public chunks chunks_postings_insert

CREATE TRIGGER chunks_postings_insert AFTER INSERT ON public.chunks REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_postings_after_write();

-- TRIGGER public chunks chunks_postings_update

CREATE TRIGGER chunks_postings_update AFTER UPDATE ON public.chunks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_postings_after_write();

-- TRIGGER public chunks chunks_stats_delete

CREATE TRIGGER chunks_stats_delete AFTER DELETE ON public.chunks REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_chunks_after_delete();

-- TRIGGER public chunks chunks_stats_insert

CREATE TRIGGER chunks_stats_insert AFTER INSERT ON public.chunks REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_chunks_after_insert();

-- TRIGGER public chunks chunks_stats_update

CREATE TRIGGER chunks_stats_update AFTER UPDATE ON public.chunks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_chunks_after_update();

-- TRIGGER public gate_events gate_events_append_only

CREATE TRIGGER gate_events_append_only BEFORE DELETE OR UPDATE ON public.gate_events FOR EACH ROW EXECUTE FUNCTION public.ewall_audit_refuse_change();

ALTER TABLE public.gate_events ENABLE ALWAYS TRIGGER gate_events_append_only;

-- TRIGGER public gate_events gate_events_no_truncate

CREATE TRIGGER gate_events_no_truncate BEFORE TRUNCATE ON public.gate_events FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_audit_refuse_change();

ALTER TABLE public.gate_events ENABLE ALWAYS TRIGGER gate_events_no_truncate;

-- TRIGGER public gate_events gate_events_within_head

CREATE CONSTRAINT TRIGGER gate_events_within_head AFTER INSERT ON public.gate_events DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.ewall_audit_head_agrees('gates');

-- TRIGGER public policy_events policy_events_append_only

CREATE TRIGGER policy_events_append_only BEFORE DELETE OR UPDATE ON public.policy_events FOR EACH ROW EXECUTE FUNCTION public.ewall_audit_refuse_change();

ALTER TABLE public.policy_events ENABLE ALWAYS TRIGGER policy_events_append_only;

-- TRIGGER public policy_events policy_events_no_truncate

CREATE TRIGGER policy_events_no_truncate BEFORE TRUNCATE ON public.policy_events FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_audit_refuse_change();

ALTER TABLE public.policy_events ENABLE ALWAYS TRIGGER policy_events_no_truncate;

-- TRIGGER public policy_events policy_events_within_head

CREATE CONSTRAINT TRIGGER policy_events_within_head AFTER INSERT ON public.policy_events DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.ewall_audit_head_agrees('policy');

-- TRIGGER public search_document_stats search_document_stats_totals_delete

CREATE TRIGGER search_document_stats_totals_delete AFTER DELETE ON public.search_document_stats REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_document_totals_after_delete();

-- TRIGGER public search_document_stats search_document_stats_totals_insert

CREATE TRIGGER search_document_stats_totals_insert AFTER INSERT ON public.search_document_stats REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_document_totals_after_insert();

-- TRIGGER public search_document_stats search_document_stats_totals_update

CREATE TRIGGER search_document_stats_totals_update AFTER UPDATE ON public.search_document_stats REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_document_totals_after_update();

-- TRIGGER public search_key_document_stats search_key_documents_delete

CREATE TRIGGER search_key_documents_delete AFTER DELETE ON public.search_key_document_stats REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_key_documents_after_delete();

-- TRIGGER public search_key_document_stats search_key_documents_insert

CREATE TRIGGER search_key_documents_insert AFTER INSERT ON public.search_key_document_stats REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.ewall_key_documents_after_insert();

-- TRIGGER public search_synonyms search_synonyms_rule

CREATE TRIGGER search_synonyms_rule BEFORE INSERT OR UPDATE ON public.search_synonyms FOR EACH ROW EXECUTE FUNCTION public.ewall_synonym_rule();

-- FK CONSTRAINT public audit_retrieval_results fk_audit_retrieval_results_retrieval_id_audit_retrievals

ALTER TABLE ONLY public.audit_retrieval_results
    ADD CONSTRAINT fk_audit_retrieval_results_retrieval_id_audit_retrievals FOREIGN KEY (retrieval_id) REFERENCES public.audit_retrievals(retrieval_id) DEFERRABLE INITIALLY DEFERRED;

-- FK CONSTRAINT public audit_retrievals fk_audit_retrievals_allowed_wall_groups_set_audit_access_sets

ALTER TABLE ONLY public.audit_retrievals
    ADD CONSTRAINT fk_audit_retrievals_allowed_wall_groups_set_audit_access_sets FOREIGN KEY (allowed_wall_groups_set) REFERENCES public.audit_access_sets(set_id);

-- FK CONSTRAINT public audit_retrievals fk_audit_retrievals_source_principals_set_audit_access_sets

ALTER TABLE ONLY public.audit_retrievals
    ADD CONSTRAINT fk_audit_retrievals_source_principals_set_audit_access_sets FOREIGN KEY (source_principals_set) REFERENCES public.audit_access_sets(set_id);

-- FK CONSTRAINT public chunks fk_chunks_document_id_documents

ALTER TABLE ONLY public.chunks
    ADD CONSTRAINT fk_chunks_document_id_documents FOREIGN KEY (document_id) REFERENCES public.documents(document_id) ON DELETE CASCADE;

-- FK CONSTRAINT public clients fk_clients_parent_id_clients

ALTER TABLE ONLY public.clients
    ADD CONSTRAINT fk_clients_parent_id_clients FOREIGN KEY (parent_id) REFERENCES public.clients(client_id);

-- FK CONSTRAINT public documents fk_documents_source_acl_id_source_acls

ALTER TABLE ONLY public.documents
    ADD CONSTRAINT fk_documents_source_acl_id_source_acls FOREIGN KEY (source_acl_id) REFERENCES public.source_acls(source_acl_id);

-- FK CONSTRAINT public eval_runs fk_eval_runs_set_id_relevance_sets

ALTER TABLE ONLY public.eval_runs
    ADD CONSTRAINT fk_eval_runs_set_id_relevance_sets FOREIGN KEY (set_id) REFERENCES public.relevance_sets(set_id);

-- FK CONSTRAINT public ingest_run_events fk_ingest_run_events_run_id_ingest_runs

ALTER TABLE ONLY public.ingest_run_events
    ADD CONSTRAINT fk_ingest_run_events_run_id_ingest_runs FOREIGN KEY (run_id) REFERENCES public.ingest_runs(run_id) ON DELETE CASCADE;

-- FK CONSTRAINT public jobs fk_jobs_run_id_ingest_runs

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT fk_jobs_run_id_ingest_runs FOREIGN KEY (run_id) REFERENCES public.ingest_runs(run_id) ON DELETE CASCADE;

-- FK CONSTRAINT public matter_parties fk_matter_parties_matter_id_matters

ALTER TABLE ONLY public.matter_parties
    ADD CONSTRAINT fk_matter_parties_matter_id_matters FOREIGN KEY (matter_id) REFERENCES public.matters(matter_id) ON DELETE CASCADE;

-- FK CONSTRAINT public matter_team fk_matter_team_matter_id_matters

ALTER TABLE ONLY public.matter_team
    ADD CONSTRAINT fk_matter_team_matter_id_matters FOREIGN KEY (matter_id) REFERENCES public.matters(matter_id) ON DELETE CASCADE;

-- FK CONSTRAINT public matter_team fk_matter_team_person_id_people

ALTER TABLE ONLY public.matter_team
    ADD CONSTRAINT fk_matter_team_person_id_people FOREIGN KEY (person_id) REFERENCES public.people(person_id);

-- FK CONSTRAINT public matter_wall_groups fk_matter_wall_groups_matter_id_matters

ALTER TABLE ONLY public.matter_wall_groups
    ADD CONSTRAINT fk_matter_wall_groups_matter_id_matters FOREIGN KEY (matter_id) REFERENCES public.matters(matter_id) ON DELETE CASCADE;

-- FK CONSTRAINT public matter_wall_groups fk_matter_wall_groups_wall_group_id_wall_groups

ALTER TABLE ONLY public.matter_wall_groups
    ADD CONSTRAINT fk_matter_wall_groups_wall_group_id_wall_groups FOREIGN KEY (wall_group_id) REFERENCES public.wall_groups(wall_group_id);

-- FK CONSTRAINT public matters fk_matters_client_id_clients

ALTER TABLE ONLY public.matters
    ADD CONSTRAINT fk_matters_client_id_clients FOREIGN KEY (client_id) REFERENCES public.clients(client_id);

-- FK CONSTRAINT public person_aliases fk_person_aliases_person_id_people

ALTER TABLE ONLY public.person_aliases
    ADD CONSTRAINT fk_person_aliases_person_id_people FOREIGN KEY (person_id) REFERENCES public.people(person_id) ON DELETE CASCADE;

-- FK CONSTRAINT public relevance_judgements fk_relevance_judgements_query_id_relevance_queries

ALTER TABLE ONLY public.relevance_judgements
    ADD CONSTRAINT fk_relevance_judgements_query_id_relevance_queries FOREIGN KEY (query_id) REFERENCES public.relevance_queries(query_id) ON DELETE CASCADE;

-- FK CONSTRAINT public relevance_queries fk_relevance_queries_set_id_relevance_sets

ALTER TABLE ONLY public.relevance_queries
    ADD CONSTRAINT fk_relevance_queries_set_id_relevance_sets FOREIGN KEY (set_id) REFERENCES public.relevance_sets(set_id) ON DELETE CASCADE;

-- FK CONSTRAINT public source_group_members fk_source_group_members_source_source_groups

ALTER TABLE ONLY public.source_group_members
    ADD CONSTRAINT fk_source_group_members_source_source_groups FOREIGN KEY (source, group_id) REFERENCES public.source_groups(source, group_id) ON DELETE CASCADE;

-- FK CONSTRAINT public wall_people fk_wall_people_person_id_people

ALTER TABLE ONLY public.wall_people
    ADD CONSTRAINT fk_wall_people_person_id_people FOREIGN KEY (person_id) REFERENCES public.people(person_id);

-- FK CONSTRAINT public wall_people fk_wall_people_wall_id_walls

ALTER TABLE ONLY public.wall_people
    ADD CONSTRAINT fk_wall_people_wall_id_walls FOREIGN KEY (wall_id) REFERENCES public.walls(wall_id);

-- FK CONSTRAINT public wall_protected_clients fk_wall_protected_clients_client_id_clients

ALTER TABLE ONLY public.wall_protected_clients
    ADD CONSTRAINT fk_wall_protected_clients_client_id_clients FOREIGN KEY (client_id) REFERENCES public.clients(client_id);

-- FK CONSTRAINT public wall_protected_clients fk_wall_protected_clients_wall_id_walls

ALTER TABLE ONLY public.wall_protected_clients
    ADD CONSTRAINT fk_wall_protected_clients_wall_id_walls FOREIGN KEY (wall_id) REFERENCES public.walls(wall_id);

-- FK CONSTRAINT public wall_protected_matters fk_wall_protected_matters_matter_id_matters

ALTER TABLE ONLY public.wall_protected_matters
    ADD CONSTRAINT fk_wall_protected_matters_matter_id_matters FOREIGN KEY (matter_id) REFERENCES public.matters(matter_id);

-- FK CONSTRAINT public wall_protected_matters fk_wall_protected_matters_wall_id_walls

ALTER TABLE ONLY public.wall_protected_matters
    ADD CONSTRAINT fk_wall_protected_matters_wall_id_walls FOREIGN KEY (wall_id) REFERENCES public.walls(wall_id);

-- ROW SECURITY public chunks

ALTER TABLE public.chunks ENABLE ROW LEVEL SECURITY;

-- POLICY public chunks chunks_read

CREATE POLICY chunks_read ON public.chunks FOR SELECT USING (((wall_group_id IN ( SELECT unnest((NULLIF(( SELECT current_setting('ewall.allowed_wall_groups'::text, true) AS current_setting), ''::text))::text[]) AS unnest)) AND (source_acl_id IN ( SELECT unnest((NULLIF(( SELECT current_setting('ewall.allowed_source_acls'::text, true) AS current_setting), ''::text))::text[]) AS unnest)) AND (COALESCE(matter_id, ''::text) <> ALL (( SELECT COALESCE(array_agg(p.matter_id), '{}'::text[]) AS "coalesce"
   FROM public.retag_pending p)::text[])) AND (NOT suppressed)));

-- POLICY public chunks chunks_writer

CREATE POLICY chunks_writer ON public.chunks TO ewall_writer USING (true) WITH CHECK (true);

-- ROW SECURITY public search_postings

ALTER TABLE public.search_postings ENABLE ROW LEVEL SECURITY;

-- POLICY public search_postings search_postings_read

CREATE POLICY search_postings_read ON public.search_postings FOR SELECT USING (((wall_group_id IN ( SELECT unnest((NULLIF(( SELECT current_setting('ewall.allowed_wall_groups'::text, true) AS current_setting), ''::text))::text[]) AS unnest)) AND (source_acl_id IN ( SELECT unnest((NULLIF(( SELECT current_setting('ewall.allowed_source_acls'::text, true) AS current_setting), ''::text))::text[]) AS unnest)) AND (matter_id <> ALL (( SELECT COALESCE(array_agg(p.matter_id), '{}'::text[]) AS "coalesce"
   FROM public.retag_pending p)::text[]))));

-- POLICY public search_postings search_postings_writer

CREATE POLICY search_postings_writer ON public.search_postings TO ewall_writer USING (true) WITH CHECK (true);

-- ACL SCHEMA public

GRANT USAGE ON SCHEMA public TO ewall_app;
GRANT USAGE ON SCHEMA public TO ewall_audit_owner;
GRANT USAGE ON SCHEMA public TO ewall_writer;

-- ACL public FUNCTION ewall_audit_advance(p_chain text, p_canonical text, p_proceed boolean)

REVOKE ALL ON FUNCTION public.ewall_audit_advance(p_chain text, p_canonical text, p_proceed boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION public.ewall_audit_advance(p_chain text, p_canonical text, p_proceed boolean) TO ewall_app;
GRANT ALL ON FUNCTION public.ewall_audit_advance(p_chain text, p_canonical text, p_proceed boolean) TO ewall_writer;

-- ACL public FUNCTION ewall_audit_append_pending(p_chain text)

REVOKE ALL ON FUNCTION public.ewall_audit_append_pending(p_chain text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.ewall_audit_append_pending(p_chain text) TO ewall_app;
GRANT ALL ON FUNCTION public.ewall_audit_append_pending(p_chain text) TO ewall_writer;

-- ACL public FUNCTION ewall_audit_head_agrees()

REVOKE ALL ON FUNCTION public.ewall_audit_head_agrees() FROM PUBLIC;

-- ACL public FUNCTION ewall_audit_results_sealed()

REVOKE ALL ON FUNCTION public.ewall_audit_results_sealed() FROM PUBLIC;

-- ACL public FUNCTION ewall_chunks_relayout(partitions integer, storage text)

REVOKE ALL ON FUNCTION public.ewall_chunks_relayout(partitions integer, storage text) FROM PUBLIC;

-- ACL public FUNCTION ewall_pending_key_counts(wall_groups text[], source_acl_ids text[], lexemes text[])

REVOKE ALL ON FUNCTION public.ewall_pending_key_counts(wall_groups text[], source_acl_ids text[], lexemes text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.ewall_pending_key_counts(wall_groups text[], source_acl_ids text[], lexemes text[]) TO ewall_app;
GRANT ALL ON FUNCTION public.ewall_pending_key_counts(wall_groups text[], source_acl_ids text[], lexemes text[]) TO ewall_writer;

-- ACL public TABLE alembic_version

GRANT SELECT ON TABLE public.alembic_version TO ewall_app;
GRANT SELECT ON TABLE public.alembic_version TO ewall_writer;

-- ACL public TABLE audit_access_sets

GRANT SELECT,INSERT ON TABLE public.audit_access_sets TO ewall_app;
GRANT SELECT,INSERT ON TABLE public.audit_access_sets TO ewall_writer;

-- ACL public TABLE audit_heads

GRANT SELECT ON TABLE public.audit_heads TO ewall_app;
GRANT SELECT,UPDATE ON TABLE public.audit_heads TO ewall_audit_owner;
GRANT SELECT ON TABLE public.audit_heads TO ewall_writer;

-- ACL public TABLE audit_retrieval_results

GRANT SELECT,INSERT ON TABLE public.audit_retrieval_results TO ewall_app;
GRANT SELECT,INSERT ON TABLE public.audit_retrieval_results TO ewall_writer;

-- ACL public TABLE audit_retrievals

GRANT SELECT,INSERT ON TABLE public.audit_retrievals TO ewall_app;
GRANT SELECT,INSERT ON TABLE public.audit_retrievals TO ewall_writer;

-- ACL public TABLE case_law

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.case_law TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.case_law TO ewall_writer;

-- ACL public TABLE chunks

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.chunks TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.chunks TO ewall_writer;

-- ACL public TABLE clients

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.clients TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.clients TO ewall_writer;

-- ACL public TABLE console_oidc_pending

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.console_oidc_pending TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.console_oidc_pending TO ewall_writer;

-- ACL public TABLE console_sessions

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.console_sessions TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.console_sessions TO ewall_writer;

-- ACL public TABLE corpus_stats

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.corpus_stats TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.corpus_stats TO ewall_writer;

-- ACL public TABLE documents

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.documents TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.documents TO ewall_writer;

-- ACL public SEQUENCE documents_document_id_seq

GRANT SELECT,USAGE ON SEQUENCE public.documents_document_id_seq TO ewall_app;
GRANT SELECT,USAGE ON SEQUENCE public.documents_document_id_seq TO ewall_writer;

-- ACL public TABLE embedding_live

GRANT SELECT,INSERT,UPDATE ON TABLE public.embedding_live TO ewall_app;
GRANT SELECT,INSERT,UPDATE ON TABLE public.embedding_live TO ewall_writer;

-- ACL public TABLE eval_runs

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.eval_runs TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.eval_runs TO ewall_writer;

-- ACL public TABLE gate_events

GRANT SELECT,INSERT ON TABLE public.gate_events TO ewall_app;
GRANT SELECT,INSERT ON TABLE public.gate_events TO ewall_writer;

-- ACL public TABLE ingest_run_events

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.ingest_run_events TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.ingest_run_events TO ewall_writer;

-- ACL public TABLE ingest_runs

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.ingest_runs TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.ingest_runs TO ewall_writer;

-- ACL public TABLE jobs

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.jobs TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.jobs TO ewall_writer;

-- ACL public SEQUENCE jobs_job_id_seq

GRANT SELECT,USAGE ON SEQUENCE public.jobs_job_id_seq TO ewall_app;
GRANT SELECT,USAGE ON SEQUENCE public.jobs_job_id_seq TO ewall_writer;

-- ACL public TABLE lexeme_stats

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.lexeme_stats TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.lexeme_stats TO ewall_writer;

-- ACL public TABLE limit_buckets

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.limit_buckets TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.limit_buckets TO ewall_writer;

-- ACL public TABLE limit_slots

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.limit_slots TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.limit_slots TO ewall_writer;

-- ACL public TABLE matter_parties

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.matter_parties TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.matter_parties TO ewall_writer;

-- ACL public TABLE matter_team

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.matter_team TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.matter_team TO ewall_writer;

-- ACL public TABLE matter_wall_groups

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.matter_wall_groups TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.matter_wall_groups TO ewall_writer;

-- ACL public TABLE matters

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.matters TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.matters TO ewall_writer;

-- ACL public TABLE people

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.people TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.people TO ewall_writer;

-- ACL public TABLE person_aliases

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.person_aliases TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.person_aliases TO ewall_writer;

-- ACL public TABLE policy_events

GRANT SELECT,INSERT ON TABLE public.policy_events TO ewall_app;
GRANT SELECT,INSERT ON TABLE public.policy_events TO ewall_writer;

-- ACL public TABLE policy_state

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.policy_state TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.policy_state TO ewall_writer;

-- ACL public TABLE reembed_runs

GRANT SELECT,INSERT,UPDATE ON TABLE public.reembed_runs TO ewall_app;
GRANT SELECT,INSERT,UPDATE ON TABLE public.reembed_runs TO ewall_writer;

-- ACL public TABLE relevance_judgements

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.relevance_judgements TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.relevance_judgements TO ewall_writer;

-- ACL public TABLE relevance_queries

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.relevance_queries TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.relevance_queries TO ewall_writer;

-- ACL public SEQUENCE relevance_queries_query_id_seq

GRANT SELECT,USAGE ON SEQUENCE public.relevance_queries_query_id_seq TO ewall_app;
GRANT SELECT,USAGE ON SEQUENCE public.relevance_queries_query_id_seq TO ewall_writer;

-- ACL public TABLE relevance_sets

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.relevance_sets TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.relevance_sets TO ewall_writer;

-- ACL public SEQUENCE relevance_sets_set_id_seq

GRANT SELECT,USAGE ON SEQUENCE public.relevance_sets_set_id_seq TO ewall_app;
GRANT SELECT,USAGE ON SEQUENCE public.relevance_sets_set_id_seq TO ewall_writer;

-- ACL public TABLE retag_pending

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.retag_pending TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.retag_pending TO ewall_writer;

-- ACL public TABLE search_document_stats

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.search_document_stats TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.search_document_stats TO ewall_writer;

-- ACL public TABLE search_key_document_stats

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.search_key_document_stats TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.search_key_document_stats TO ewall_writer;

-- ACL public TABLE search_key_lexeme_stats

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.search_key_lexeme_stats TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.search_key_lexeme_stats TO ewall_writer;

-- ACL public TABLE search_key_stats

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.search_key_stats TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.search_key_stats TO ewall_writer;

-- ACL public TABLE search_postings

GRANT SELECT ON TABLE public.search_postings TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.search_postings TO ewall_writer;

-- ACL public TABLE search_synonyms

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.search_synonyms TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.search_synonyms TO ewall_writer;

-- ACL public TABLE search_synonym_rules

GRANT SELECT ON TABLE public.search_synonym_rules TO ewall_app;
GRANT SELECT ON TABLE public.search_synonym_rules TO ewall_writer;

-- ACL public TABLE source_acls

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.source_acls TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.source_acls TO ewall_writer;

-- ACL public TABLE source_group_members

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.source_group_members TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.source_group_members TO ewall_writer;

-- ACL public TABLE source_groups

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.source_groups TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.source_groups TO ewall_writer;

-- ACL public TABLE sync_fences

GRANT SELECT,INSERT,UPDATE ON TABLE public.sync_fences TO ewall_app;
GRANT SELECT,INSERT,UPDATE ON TABLE public.sync_fences TO ewall_writer;

-- ACL public TABLE sync_seen

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.sync_seen TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.sync_seen TO ewall_writer;

-- ACL public TABLE sync_state

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.sync_state TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.sync_state TO ewall_writer;

-- ACL public TABLE textless_documents

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.textless_documents TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.textless_documents TO ewall_writer;

-- ACL public TABLE wall_group_sizes

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.wall_group_sizes TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.wall_group_sizes TO ewall_writer;

-- ACL public TABLE wall_groups

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.wall_groups TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.wall_groups TO ewall_writer;

-- ACL public TABLE wall_people

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.wall_people TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.wall_people TO ewall_writer;

-- ACL public TABLE wall_protected_clients

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.wall_protected_clients TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.wall_protected_clients TO ewall_writer;

-- ACL public TABLE wall_protected_matters

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.wall_protected_matters TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.wall_protected_matters TO ewall_writer;

-- ACL public TABLE walls

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.walls TO ewall_app;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.walls TO ewall_writer;
