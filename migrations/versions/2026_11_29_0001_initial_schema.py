"""Initial schema: extensions, Dutch legal text search, matrix, chunks, audit, RLS, grants.

Revision ID: 20261129_0001
Revises:
Create Date: 2026-11-29

Everything the service relies on is created here; nothing is created at start-up.
"""

from collections.abc import Sequence

from alembic import context, op

from app.db.function_sources import apply_function_source

revision: str = "20261129_0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TEXT_SEARCH = r"""
CREATE TEXT SEARCH CONFIGURATION ewall_nl (COPY = pg_catalog.dutch);
ALTER TEXT SEARCH CONFIGURATION ewall_nl
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
    WITH unaccent, dutch_stem;
"""

TABLES = r"""
CREATE TABLE policy_state (
    id smallint NOT NULL,
    version bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_policy_state PRIMARY KEY (id),
    CONSTRAINT ck_policy_state_single_row CHECK (id = 1)
);
INSERT INTO policy_state (id, version) VALUES (1, 1);

CREATE TABLE people (
    person_id text NOT NULL,
    name text NOT NULL DEFAULT '',
    active boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_people PRIMARY KEY (person_id)
);

CREATE TABLE person_aliases (
    alias text NOT NULL,
    person_id text NOT NULL,
    CONSTRAINT pk_person_aliases PRIMARY KEY (alias),
    CONSTRAINT fk_person_aliases_person_id_people FOREIGN KEY (person_id)
        REFERENCES people (person_id) ON DELETE CASCADE
);
CREATE INDEX ix_person_aliases_person_id ON person_aliases (person_id);

CREATE TABLE source_groups (
    source text NOT NULL,
    group_id text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_source_groups PRIMARY KEY (source, group_id)
);

CREATE TABLE source_group_members (
    source text NOT NULL,
    group_id text NOT NULL,
    member text NOT NULL,
    CONSTRAINT pk_source_group_members PRIMARY KEY (source, group_id, member),
    CONSTRAINT fk_source_group_members_source_source_groups FOREIGN KEY (source, group_id)
        REFERENCES source_groups (source, group_id) ON DELETE CASCADE
);
CREATE INDEX ix_source_group_members_member ON source_group_members (member);

CREATE TABLE clients (
    client_id text NOT NULL,
    name text NOT NULL,
    name_norm text NOT NULL,
    parent_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_clients PRIMARY KEY (client_id),
    CONSTRAINT fk_clients_parent_id_clients FOREIGN KEY (parent_id) REFERENCES clients (client_id),
    CONSTRAINT ck_clients_not_own_parent CHECK (parent_id IS NULL OR parent_id <> client_id)
);
CREATE INDEX ix_clients_parent_id ON clients (parent_id);
CREATE INDEX ix_clients_name_norm ON clients (name_norm);

CREATE TABLE matters (
    matter_id text NOT NULL,
    client_id text NOT NULL,
    title text NOT NULL,
    status text NOT NULL DEFAULT 'open',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_matters PRIMARY KEY (matter_id),
    CONSTRAINT fk_matters_client_id_clients FOREIGN KEY (client_id) REFERENCES clients (client_id)
);
CREATE INDEX ix_matters_client_id ON matters (client_id);

CREATE TABLE matter_parties (
    matter_id text NOT NULL,
    position integer NOT NULL,
    name text NOT NULL,
    name_norm text NOT NULL,
    role text NOT NULL,
    CONSTRAINT pk_matter_parties PRIMARY KEY (matter_id, position),
    CONSTRAINT fk_matter_parties_matter_id_matters FOREIGN KEY (matter_id)
        REFERENCES matters (matter_id) ON DELETE CASCADE,
    CONSTRAINT ck_matter_parties_role CHECK (role IN ('adverse', 'related'))
);
CREATE INDEX ix_matter_parties_name_norm ON matter_parties (name_norm);

CREATE TABLE matter_team (
    matter_id text NOT NULL,
    person_id text NOT NULL,
    CONSTRAINT pk_matter_team PRIMARY KEY (matter_id, person_id),
    CONSTRAINT fk_matter_team_matter_id_matters FOREIGN KEY (matter_id)
        REFERENCES matters (matter_id) ON DELETE CASCADE,
    CONSTRAINT fk_matter_team_person_id_people FOREIGN KEY (person_id) REFERENCES people (person_id)
);
CREATE INDEX ix_matter_team_person_id ON matter_team (person_id);

CREATE TABLE walls (
    wall_id text NOT NULL,
    kind text NOT NULL,
    title text NOT NULL,
    reason text NOT NULL,
    include_team boolean NOT NULL DEFAULT true,
    effective_from timestamptz,
    effective_until timestamptz,
    created_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    lifted_at timestamptz,
    lifted_by text,
    lift_reason text,
    CONSTRAINT pk_walls PRIMARY KEY (wall_id),
    CONSTRAINT ck_walls_kind CHECK (kind IN ('exclusionary', 'inclusionary')),
    CONSTRAINT ck_walls_window CHECK (
        effective_until IS NULL OR effective_from IS NULL OR effective_until > effective_from),
    CONSTRAINT ck_walls_lift_complete CHECK ((lifted_at IS NULL) = (lifted_by IS NULL))
);

CREATE TABLE wall_protected_matters (
    wall_id text NOT NULL,
    matter_id text NOT NULL,
    CONSTRAINT pk_wall_protected_matters PRIMARY KEY (wall_id, matter_id),
    CONSTRAINT fk_wall_protected_matters_wall_id_walls FOREIGN KEY (wall_id) REFERENCES walls (wall_id),
    CONSTRAINT fk_wall_protected_matters_matter_id_matters FOREIGN KEY (matter_id) REFERENCES matters (matter_id)
);
CREATE INDEX ix_wall_protected_matters_matter_id ON wall_protected_matters (matter_id);

CREATE TABLE wall_protected_clients (
    wall_id text NOT NULL,
    client_id text NOT NULL,
    CONSTRAINT pk_wall_protected_clients PRIMARY KEY (wall_id, client_id),
    CONSTRAINT fk_wall_protected_clients_wall_id_walls FOREIGN KEY (wall_id) REFERENCES walls (wall_id),
    CONSTRAINT fk_wall_protected_clients_client_id_clients FOREIGN KEY (client_id) REFERENCES clients (client_id)
);
CREATE INDEX ix_wall_protected_clients_client_id ON wall_protected_clients (client_id);

CREATE TABLE wall_people (
    wall_id text NOT NULL,
    person_id text NOT NULL,
    role text NOT NULL,
    CONSTRAINT pk_wall_people PRIMARY KEY (wall_id, person_id, role),
    CONSTRAINT fk_wall_people_wall_id_walls FOREIGN KEY (wall_id) REFERENCES walls (wall_id),
    CONSTRAINT fk_wall_people_person_id_people FOREIGN KEY (person_id) REFERENCES people (person_id),
    CONSTRAINT ck_wall_people_role CHECK (role IN ('screened', 'allowed'))
);
CREATE INDEX ix_wall_people_person_id ON wall_people (person_id);

CREATE TABLE wall_groups (
    wall_group_id text NOT NULL,
    wall_ids text[] NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_wall_groups PRIMARY KEY (wall_group_id)
);
-- the open group (no walls) and quarantine (nobody) always exist
INSERT INTO wall_groups (wall_group_id, wall_ids) VALUES ('open', '{}'), ('quarantine', '{}');

CREATE TABLE matter_wall_groups (
    matter_id text NOT NULL,
    wall_group_id text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_matter_wall_groups PRIMARY KEY (matter_id),
    CONSTRAINT fk_matter_wall_groups_matter_id_matters FOREIGN KEY (matter_id)
        REFERENCES matters (matter_id) ON DELETE CASCADE,
    CONSTRAINT fk_matter_wall_groups_wall_group_id_wall_groups FOREIGN KEY (wall_group_id)
        REFERENCES wall_groups (wall_group_id)
);
CREATE INDEX ix_matter_wall_groups_wall_group_id ON matter_wall_groups (wall_group_id);

CREATE TABLE wall_group_sizes (
    wall_group_id text NOT NULL,
    n_chunks bigint NOT NULL DEFAULT 0,
    CONSTRAINT pk_wall_group_sizes PRIMARY KEY (wall_group_id)
);

CREATE TABLE retag_pending (
    matter_id text NOT NULL,
    target_wall_group_id text NOT NULL,
    policy_version bigint NOT NULL,
    queued_at timestamptz NOT NULL DEFAULT now(),
    retagged_chunks bigint NOT NULL DEFAULT 0,
    CONSTRAINT pk_retag_pending PRIMARY KEY (matter_id)
);

CREATE TABLE source_acls (
    source_acl_id text NOT NULL,
    default_access text NOT NULL,
    allow text[] NOT NULL DEFAULT '{}',
    deny text[] NOT NULL DEFAULT '{}',
    resolvable boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_source_acls PRIMARY KEY (source_acl_id),
    CONSTRAINT ck_source_acls_default_access
        CHECK (default_access IN ('public', 'view', 'private', 'none'))
);
CREATE INDEX ix_source_acls_allow ON source_acls USING gin (allow);
CREATE INDEX ix_source_acls_deny ON source_acls USING gin (deny);
-- "public": documents pushed without source rules (public within the firm, walls apply);
-- "nobody": rules that could not be read or resolved (fail closed).
INSERT INTO source_acls (source_acl_id, default_access, resolvable)
VALUES ('public', 'public', true), ('nobody', 'none', false);

CREATE TABLE documents (
    document_id bigint GENERATED BY DEFAULT AS IDENTITY NOT NULL,
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
    modified_at timestamptz,
    mime_type text,
    content_sha256 text,
    source_acl_id text NOT NULL,
    source_url text,
    search_state text NOT NULL DEFAULT 'active',
    metadata jsonb NOT NULL DEFAULT '{}',
    last_run_id uuid,
    ingested_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_documents PRIMARY KEY (document_id),
    CONSTRAINT uq_documents_source_external_id UNIQUE (source, external_id),
    CONSTRAINT fk_documents_source_acl_id_source_acls FOREIGN KEY (source_acl_id)
        REFERENCES source_acls (source_acl_id),
    CONSTRAINT ck_documents_status CHECK (status IN ('active', 'quarantined')),
    CONSTRAINT ck_documents_search_state CHECK (search_state IN ('active', 'withdrawn', 'held'))
);
CREATE INDEX ix_documents_matter_id ON documents (matter_id);

CREATE TABLE chunks (
    chunk_id text NOT NULL,
    document_id bigint NOT NULL,
    source text NOT NULL,
    external_id text NOT NULL,
    client_id text,
    matter_id text,
    wall_group_id text NOT NULL,
    source_acl_id text NOT NULL,
    doc_type text NOT NULL,
    section_path text NOT NULL DEFAULT '',
    page_from integer,
    page_to integer,
    ordinal integer NOT NULL,
    body text NOT NULL,
    body_tsv tsvector GENERATED ALWAYS AS (
        to_tsvector('ewall_nl'::regconfig, ewall_legal_normalize(body))) STORED,
    embedding vector({dim}) NOT NULL,
    content_sha256 text NOT NULL,
    token_count integer NOT NULL,
    suppressed boolean NOT NULL DEFAULT false,
    modified_at timestamptz,
    ingested_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_chunks PRIMARY KEY (chunk_id),
    CONSTRAINT fk_chunks_document_id_documents FOREIGN KEY (document_id)
        REFERENCES documents (document_id) ON DELETE CASCADE
);
-- 384-d vectors stay inline; PLAIN keeps larger models off TOAST on the exact path.
ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE PLAIN;
ALTER TABLE chunks ALTER COLUMN wall_group_id SET STATISTICS 5000;
CREATE INDEX ix_chunks_document_id ON chunks (document_id);
CREATE INDEX ix_chunks_matter_id ON chunks (matter_id);
CREATE INDEX ix_chunks_wall_group_id ON chunks (wall_group_id);
CREATE INDEX ix_chunks_content_sha256 ON chunks (content_sha256);
CREATE INDEX ix_chunks_body_tsv ON chunks USING gin (body_tsv);
CREATE INDEX ix_chunks_embedding_hnsw ON chunks
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);

CREATE TABLE lexeme_stats (
    lexeme text NOT NULL,
    ndoc bigint NOT NULL,
    CONSTRAINT pk_lexeme_stats PRIMARY KEY (lexeme)
);

CREATE TABLE corpus_stats (
    id smallint NOT NULL,
    n_chunks bigint NOT NULL,
    CONSTRAINT pk_corpus_stats PRIMARY KEY (id),
    CONSTRAINT ck_corpus_stats_single_row CHECK (id = 1)
);
INSERT INTO corpus_stats (id, n_chunks) VALUES (1, 0);

CREATE TABLE search_synonyms (
    term text NOT NULL,
    synonym text NOT NULL,
    created_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_search_synonyms PRIMARY KEY (term, synonym)
);

-- Synonyms as ts_rewrite rules, read at query time: editing the table changes searches at
-- once, with no server files (works on managed PostgreSQL) and no re-indexing. A term that
-- is one lexeme matches that lexeme in the query; it is replaced by itself OR the synonym.
CREATE VIEW search_synonym_rules AS
SELECT CASE WHEN cardinality(ewall_query_lexemes(s.term)) = 1
            THEN CAST(quote_literal((ewall_query_lexemes(s.term))[1]) AS tsquery)
            ELSE phraseto_tsquery('ewall_nl', ewall_legal_normalize(s.term)) END AS target,
       CASE WHEN cardinality(ewall_query_lexemes(s.term)) = 1
            THEN CAST(quote_literal((ewall_query_lexemes(s.term))[1]) AS tsquery)
            ELSE phraseto_tsquery('ewall_nl', ewall_legal_normalize(s.term)) END
       || phraseto_tsquery('ewall_nl', ewall_legal_normalize(s.synonym)) AS substitute
FROM search_synonyms AS s
WHERE cardinality(ewall_query_lexemes(s.term)) > 0
  AND cardinality(ewall_query_lexemes(s.synonym)) > 0;

CREATE TABLE ingest_runs (
    run_id uuid NOT NULL,
    connector text NOT NULL,
    status text NOT NULL,
    started_by text NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    params jsonb NOT NULL DEFAULT '{}',
    counts jsonb NOT NULL DEFAULT '{}',
    progress jsonb NOT NULL DEFAULT '{}',
    error text,
    CONSTRAINT pk_ingest_runs PRIMARY KEY (run_id),
    CONSTRAINT ck_ingest_runs_status CHECK (status IN ('running', 'succeeded', 'failed', 'partial'))
);

CREATE TABLE ingest_run_events (
    run_id uuid NOT NULL,
    seq integer NOT NULL,
    kind text NOT NULL,
    source text,
    external_id text,
    reason text,
    details jsonb NOT NULL DEFAULT '{}',
    at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_ingest_run_events PRIMARY KEY (run_id, seq),
    CONSTRAINT fk_ingest_run_events_run_id_ingest_runs FOREIGN KEY (run_id)
        REFERENCES ingest_runs (run_id) ON DELETE CASCADE
);

CREATE TABLE sync_state (
    source text NOT NULL,
    scope text NOT NULL,
    state jsonb NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_sync_state PRIMARY KEY (source, scope)
);

CREATE TABLE sync_seen (
    source text NOT NULL,
    scope text NOT NULL,
    crawl_id text NOT NULL,
    external_id text NOT NULL,
    CONSTRAINT pk_sync_seen PRIMARY KEY (source, scope, crawl_id, external_id)
);

CREATE TABLE case_law (
    ecli text NOT NULL,
    court text,
    decision_date timestamptz,
    area_of_law text,
    procedure text,
    relations jsonb NOT NULL DEFAULT '[]',
    withdrawn boolean,
    replaced_by text,
    set_aside_by text,
    state text NOT NULL DEFAULT 'active',
    held_reason text,
    crosscheck jsonb,
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_case_law PRIMARY KEY (ecli),
    CONSTRAINT ck_case_law_state CHECK (state IN ('active', 'withdrawn', 'voided', 'set_aside', 'held'))
);

CREATE TABLE relevance_sets (
    set_id bigint GENERATED BY DEFAULT AS IDENTITY NOT NULL,
    name text NOT NULL,
    description text NOT NULL DEFAULT '',
    created_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_relevance_sets PRIMARY KEY (set_id),
    CONSTRAINT uq_relevance_sets_name UNIQUE (name)
);

CREATE TABLE relevance_queries (
    query_id bigint GENERATED BY DEFAULT AS IDENTITY NOT NULL,
    set_id bigint NOT NULL,
    query_key text NOT NULL,
    text text NOT NULL,
    as_person text,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_relevance_queries PRIMARY KEY (query_id),
    CONSTRAINT uq_relevance_queries_set_id_query_key UNIQUE (set_id, query_key),
    CONSTRAINT fk_relevance_queries_set_id_relevance_sets FOREIGN KEY (set_id)
        REFERENCES relevance_sets (set_id) ON DELETE CASCADE
);

CREATE TABLE relevance_judgements (
    query_id bigint NOT NULL,
    target_kind text NOT NULL,
    target_id text NOT NULL,
    grade smallint NOT NULL,
    judged_by text NOT NULL,
    judged_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_relevance_judgements PRIMARY KEY (query_id, target_kind, target_id, judged_by),
    CONSTRAINT fk_relevance_judgements_query_id_relevance_queries FOREIGN KEY (query_id)
        REFERENCES relevance_queries (query_id) ON DELETE CASCADE,
    CONSTRAINT ck_relevance_judgements_grade CHECK (grade BETWEEN 0 AND 3),
    CONSTRAINT ck_relevance_judgements_target_kind CHECK (target_kind IN ('document', 'chunk'))
);

CREATE TABLE eval_runs (
    run_id uuid NOT NULL,
    set_id bigint NOT NULL,
    person_id text NOT NULL,
    config jsonb NOT NULL,
    metrics jsonb NOT NULL,
    per_query jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_eval_runs PRIMARY KEY (run_id),
    CONSTRAINT fk_eval_runs_set_id_relevance_sets FOREIGN KEY (set_id) REFERENCES relevance_sets (set_id)
);
"""

AUDIT = r"""
-- One row per chain: the last sequence number and hash. The service may advance it (that
-- is how it serialises appends) but never delete it; rows of the log itself are immutable.
CREATE TABLE audit_heads (
    chain text NOT NULL,
    seq bigint NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL,
    CONSTRAINT pk_audit_heads PRIMARY KEY (chain)
);
INSERT INTO audit_heads (chain, seq, prev_hash, hash) VALUES
    ('retrievals', 0, repeat('0', 64), repeat('0', 64)),
    ('policy', 0, repeat('0', 64), repeat('0', 64)),
    ('gates', 0, repeat('0', 64), repeat('0', 64));

-- The allowed wall groups and source principals of a retrieval are stored once per distinct
-- set (content-addressed: set_id = sha256 of the sorted members) and referenced by id: a
-- person with a thousand allowed groups does not add a thousand strings to every row, and the
-- chain still covers them (the set id is in the hashed row, the members hash to the set id).
CREATE TABLE audit_access_sets (
    set_id text NOT NULL,
    members text[] NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pk_audit_access_sets PRIMARY KEY (set_id)
);

CREATE TABLE audit_retrievals (
    retrieval_id uuid NOT NULL,
    seq bigint NOT NULL,
    at timestamptz NOT NULL,
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
    CONSTRAINT pk_audit_retrievals PRIMARY KEY (retrieval_id),
    CONSTRAINT uq_audit_retrievals_seq UNIQUE (seq),
    CONSTRAINT fk_audit_retrievals_allowed_wall_groups_set_audit_access_sets
        FOREIGN KEY (allowed_wall_groups_set) REFERENCES audit_access_sets (set_id),
    CONSTRAINT fk_audit_retrievals_source_principals_set_audit_access_sets
        FOREIGN KEY (source_principals_set) REFERENCES audit_access_sets (set_id)
);
CREATE INDEX ix_audit_retrievals_person_id ON audit_retrievals (person_id);
CREATE INDEX ix_audit_retrievals_at ON audit_retrievals (at);

CREATE TABLE audit_retrieval_results (
    retrieval_id uuid NOT NULL,
    rank integer NOT NULL,
    chunk_id text NOT NULL,
    matter_id text,
    content_sha256 text NOT NULL,
    score double precision NOT NULL,
    CONSTRAINT pk_audit_retrieval_results PRIMARY KEY (retrieval_id, rank),
    CONSTRAINT fk_audit_retrieval_results_retrieval_id_audit_retrievals FOREIGN KEY (retrieval_id)
        REFERENCES audit_retrievals (retrieval_id) DEFERRABLE INITIALLY DEFERRED
);
CREATE INDEX ix_audit_retrieval_results_chunk_id ON audit_retrieval_results (chunk_id);
CREATE INDEX ix_audit_retrieval_results_matter_id ON audit_retrieval_results (matter_id);

CREATE TABLE policy_events (
    event_id uuid NOT NULL,
    seq bigint NOT NULL,
    at timestamptz NOT NULL,
    actor text NOT NULL,
    action text NOT NULL,
    object_type text NOT NULL,
    object_id text NOT NULL,
    reason text,
    details jsonb NOT NULL,
    policy_version bigint NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL,
    CONSTRAINT pk_policy_events PRIMARY KEY (event_id),
    CONSTRAINT uq_policy_events_seq UNIQUE (seq)
);

CREATE TABLE gate_events (
    event_id uuid NOT NULL,
    seq bigint NOT NULL,
    at timestamptz NOT NULL,
    person_id text NOT NULL,
    gate text NOT NULL,
    ok boolean NOT NULL,
    request jsonb NOT NULL,
    outcome jsonb NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL,
    CONSTRAINT pk_gate_events PRIMARY KEY (event_id),
    CONSTRAINT uq_gate_events_seq UNIQUE (seq)
);
"""

AUDIT_TABLES = (
    "audit_access_sets",
    "audit_retrievals",
    "audit_retrieval_results",
    "policy_events",
    "gate_events",
)

STATS_TRIGGERS = r"""
-- Statistics kept current in the writing transaction (sql/functions/chunk_stats.v1.sql).
CREATE TRIGGER chunks_stats_insert AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_chunks_after_insert();
CREATE TRIGGER chunks_stats_delete AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_chunks_after_delete();
CREATE TRIGGER chunks_stats_update AFTER UPDATE ON chunks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_chunks_after_update();
"""

RLS = r"""
-- Backstop for invariant 1: even a query that forgets the access predicate sees only the
-- chunks whose wall group AND source ACL are in the transaction-local allowed sets. With no
-- setting there are no rows. Writers (ingestion, re-tagging) mark their transaction with
-- ewall.writer = on; they never return chunk rows to a person.
ALTER TABLE chunks ENABLE ROW LEVEL SECURITY;
ALTER TABLE chunks FORCE ROW LEVEL SECURITY;

CREATE POLICY chunks_read ON chunks FOR SELECT USING (
    (SELECT current_setting('ewall.writer', true)) = 'on'
    OR (
        wall_group_id IN (SELECT unnest(
            nullif((SELECT current_setting('ewall.allowed_wall_groups', true)), '')::text[]))
        AND source_acl_id IN (SELECT unnest(
            nullif((SELECT current_setting('ewall.allowed_source_acls', true)), '')::text[]))
    )
);
-- Row-level security lets an index serve only LEAKPROOF operators before the policy has
-- filtered the row, and tsvector @@ tsquery is not marked leakproof, so with RLS on the
-- sparse leg could never use its GIN index (a scan of every allowed row instead). The match
-- operator returns a boolean and raises no data-dependent errors, so we mark it leakproof.
-- That needs a superuser; without one the search stays correct, only slower.
DO $leak$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF;
    ELSE
        RAISE NOTICE 'not a superuser: ts_match_vq stays non-leakproof; the sparse leg cannot use its GIN index under RLS';
    END IF;
END
$leak$;

CREATE POLICY chunks_insert ON chunks FOR INSERT
    WITH CHECK ((SELECT current_setting('ewall.writer', true)) = 'on');
CREATE POLICY chunks_update ON chunks FOR UPDATE
    USING ((SELECT current_setting('ewall.writer', true)) = 'on')
    WITH CHECK ((SELECT current_setting('ewall.writer', true)) = 'on');
CREATE POLICY chunks_delete ON chunks FOR DELETE
    USING ((SELECT current_setting('ewall.writer', true)) = 'on');
"""

CRUD_TABLES = (
    "policy_state",
    "people",
    "person_aliases",
    "source_groups",
    "source_group_members",
    "clients",
    "matters",
    "matter_parties",
    "matter_team",
    "walls",
    "wall_protected_matters",
    "wall_protected_clients",
    "wall_people",
    "wall_groups",
    "matter_wall_groups",
    "wall_group_sizes",
    "retag_pending",
    "source_acls",
    "documents",
    "chunks",
    "lexeme_stats",
    "corpus_stats",
    "search_synonyms",
    "ingest_runs",
    "ingest_run_events",
    "sync_state",
    "sync_seen",
    "case_law",
    "relevance_sets",
    "relevance_queries",
    "relevance_judgements",
    "eval_runs",
)


def _run(statement: str) -> None:
    # Straight to psycopg without parameters: the DDL holds regexes, ":" and "%" that
    # text() or a parameterised execute would take for placeholders.
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)


def _app_role() -> str:
    role = str(context.config.attributes.get("app_role", "ewall_app"))
    if not role.replace("_", "").isalnum() or not role[0].isalpha():
        raise ValueError(f"unsafe app role name {role!r}")
    return role


def upgrade() -> None:
    dim = int(context.config.attributes.get("embedding_dim", 384))
    role = _app_role()
    _run("CREATE EXTENSION IF NOT EXISTS vector")
    _run("CREATE EXTENSION IF NOT EXISTS unaccent")
    _run(TEXT_SEARCH)
    # ewall_legal_normalize (a citation's written forms to one token), ewall_query_lexemes
    apply_function_source(
        "legal_text.v1.sql", "e5fe7e4f2356f8f388af5e84c5afa80f0e778ec466616937194369a04a9eb3b5"
    )
    _run(TABLES.replace("{dim}", str(dim)))
    _run(AUDIT)
    # ewall_audit_refuse_change: what the append-only triggers below call
    apply_function_source(
        "audit_refuse_change.v1.sql",
        "9af0ce84226b8dbcbac8b4be8f480ca72b771ab93bedd6d92bda455de0efe773",
    )
    for table in AUDIT_TABLES:
        _run(
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION ewall_audit_refuse_change()"
        )
        _run(
            f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION ewall_audit_refuse_change()"
        )
        _run(f"ALTER TABLE {table} ENABLE ALWAYS TRIGGER {table}_append_only")
        _run(f"ALTER TABLE {table} ENABLE ALWAYS TRIGGER {table}_no_truncate")
    _run(
        "CREATE TRIGGER audit_heads_no_delete BEFORE DELETE ON audit_heads "
        "FOR EACH ROW EXECUTE FUNCTION ewall_audit_refuse_change();"
        "CREATE TRIGGER audit_heads_no_truncate BEFORE TRUNCATE ON audit_heads "
        "FOR EACH STATEMENT EXECUTE FUNCTION ewall_audit_refuse_change();"
        "ALTER TABLE audit_heads ENABLE ALWAYS TRIGGER audit_heads_no_delete;"
        "ALTER TABLE audit_heads ENABLE ALWAYS TRIGGER audit_heads_no_truncate;"
    )
    # ewall_chunks_after_insert/_delete/_update: group sizes, lexeme and corpus statistics
    apply_function_source(
        "chunk_stats.v1.sql", "a4616150eb643450ea6db925dbab2275fd3db70c9266dafbeab33b04542fe996"
    )
    _run(STATS_TRIGGERS)
    _run(RLS)

    # Least privilege for the service: no TRUNCATE anywhere, audit tables append + read only.
    _run(
        f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}') THEN "
        f"CREATE ROLE {role} NOLOGIN NOSUPERUSER NOBYPASSRLS; END IF; END $$"
    )
    _run(f"GRANT USAGE ON SCHEMA public TO {role}")
    _run(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {', '.join(CRUD_TABLES)} TO {role}")
    _run(f"GRANT SELECT, INSERT ON {', '.join(AUDIT_TABLES)} TO {role}")
    _run(f"GRANT SELECT, UPDATE ON audit_heads TO {role}")
    _run(f"GRANT SELECT ON search_synonym_rules TO {role}")
    _run(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}")
    _run(f"GRANT SELECT ON alembic_version TO {role}")


def downgrade() -> None:
    role = _app_role()
    _run(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}")
    _run(f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {role}")
    _run(f"GRANT SELECT ON alembic_version TO {role}")
    for table in reversed(AUDIT_TABLES):
        _run(f"DROP TABLE {table}")
    _run("DROP TABLE audit_heads")
    _run(
        "DO $leak$ BEGIN IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN "
        "ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) NOT LEAKPROOF; END IF; END $leak$"
    )
    _run("DROP VIEW search_synonym_rules")
    for table in reversed(CRUD_TABLES):
        _run(f"DROP TABLE {table} CASCADE")
    _run("DROP FUNCTION ewall_audit_refuse_change()")
    _run("DROP FUNCTION ewall_chunks_after_insert()")
    _run("DROP FUNCTION ewall_chunks_after_delete()")
    _run("DROP FUNCTION ewall_chunks_after_update()")
    _run("DROP FUNCTION ewall_query_lexemes(text)")
    _run("DROP FUNCTION ewall_legal_normalize(text)")
    _run("DROP TEXT SEARCH CONFIGURATION ewall_nl")
    # The extensions stay: other schemas may use them, and dropping needs a superuser.
