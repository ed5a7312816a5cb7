-- ewall_chunks_relayout(partitions, storage) rebuilds chunks in another layout in ONE
-- transaction: N hash partitions by document_id (1: a plain table) and the embedding stored
-- as vector or halfvec. What references chunks moves with it, read from the catalog: columns
-- (generated body_tsv, storage, statistics targets), indexes (the HNSW opclass follows the
-- storage), the primary key ((chunk_id, document_id) when partitioned), the foreign key to
-- documents, the statement triggers (created after the copy: the copied rows are counted
-- once already), row-level security with every policy, and the grants. Each partition has
-- row-level security forced and no policy and no grant: a read of a partition by name sees
-- nothing. Nothing is deleted: the old table is renamed chunks_before_<timestamp>, its grants
-- revoked and its triggers dropped; the operator drops it (docs/scale-out.md).
-- Used by migration 0031 and `ewall chunks relayout`; not granted to PUBLIC.

CREATE OR REPLACE FUNCTION ewall_chunks_relayout(partitions integer, storage text)
RETURNS text
LANGUAGE plpgsql
SET search_path = public, pg_catalog
AS $fn$
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
$fn$;
