"""Declared schema: the tables as SQLAlchemy Core sees them.

Alembic owns the schema (``migrations/``); this module declares the same tables so that
CRUD can be written in SQLAlchemy Core and so that ``alembic check`` proves the migrated
database equals the declaration. Things Core cannot express (the text search configuration,
RLS policies, grants, triggers) live only in the migrations and are tested there.
"""

from __future__ import annotations

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Computed,
    DateTime,
    Double,
    ForeignKey,
    ForeignKeyConstraint,
    Identity,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR, UUID

from app.settings import get_settings

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

OPEN_GROUP = "open"
QUARANTINE_GROUP = "quarantine"
PUBLIC_ACL = "public"
NOBODY_ACL = "nobody"


def _ts(name: str, nullable: bool = False) -> Column[object]:
    return Column(
        name,
        DateTime(timezone=True),
        nullable=nullable,
        server_default=None if nullable else text("now()"),
    )


# --- policy -----------------------------------------------------------------------------

policy_state = Table(
    "policy_state",
    metadata,
    Column("id", SmallInteger, primary_key=True),
    Column("version", BigInteger, nullable=False),
    _ts("updated_at"),
    CheckConstraint("id = 1", name="single_row"),
)

# --- conflict matrix ---------------------------------------------------------------------

people = Table(
    "people",
    metadata,
    Column("person_id", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("active", Boolean, nullable=False),
    _ts("created_at"),
    _ts("updated_at"),
)

person_aliases = Table(
    "person_aliases",
    metadata,
    Column("alias", Text, primary_key=True),
    Column(
        "person_id",
        Text,
        ForeignKey("people.person_id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
)

source_groups = Table(
    "source_groups",
    metadata,
    Column("source", Text, nullable=False),
    Column("group_id", Text, nullable=False),
    _ts("updated_at"),
    PrimaryKeyConstraint("source", "group_id"),
)

source_group_members = Table(
    "source_group_members",
    metadata,
    Column("source", Text, nullable=False),
    Column("group_id", Text, nullable=False),
    Column("member", Text, nullable=False, index=True),
    PrimaryKeyConstraint("source", "group_id", "member"),
    ForeignKeyConstraint(
        ["source", "group_id"],
        ["source_groups.source", "source_groups.group_id"],
        ondelete="CASCADE",
    ),
)

clients = Table(
    "clients",
    metadata,
    Column("client_id", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("name_norm", Text, nullable=False, index=True),
    Column("parent_id", Text, ForeignKey("clients.client_id"), nullable=True, index=True),
    _ts("created_at"),
    _ts("updated_at"),
    CheckConstraint("parent_id IS NULL OR parent_id <> client_id", name="not_own_parent"),
)

matters = Table(
    "matters",
    metadata,
    Column("matter_id", Text, primary_key=True),
    Column("client_id", Text, ForeignKey("clients.client_id"), nullable=False, index=True),
    Column("title", Text, nullable=False),
    Column("status", Text, nullable=False),
    _ts("created_at"),
    _ts("updated_at"),
)

matter_parties = Table(
    "matter_parties",
    metadata,
    Column("matter_id", Text, ForeignKey("matters.matter_id", ondelete="CASCADE"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("name", Text, nullable=False),
    Column("name_norm", Text, nullable=False, index=True),
    Column("role", Text, nullable=False),
    PrimaryKeyConstraint("matter_id", "position"),
    CheckConstraint("role IN ('adverse', 'related')", name="role"),
)

matter_team = Table(
    "matter_team",
    metadata,
    Column("matter_id", Text, ForeignKey("matters.matter_id", ondelete="CASCADE"), nullable=False),
    Column("person_id", Text, ForeignKey("people.person_id"), nullable=False, index=True),
    PrimaryKeyConstraint("matter_id", "person_id"),
)

walls = Table(
    "walls",
    metadata,
    Column("wall_id", Text, primary_key=True),
    Column("kind", Text, nullable=False),
    Column("title", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("include_team", Boolean, nullable=False),
    Column("effective_from", DateTime(timezone=True), nullable=True),
    Column("effective_until", DateTime(timezone=True), nullable=True),
    Column("created_by", Text, nullable=False),
    _ts("created_at"),
    Column("lifted_at", DateTime(timezone=True), nullable=True),
    Column("lifted_by", Text, nullable=True),
    Column("lift_reason", Text, nullable=True),
    CheckConstraint("kind IN ('exclusionary', 'inclusionary')", name="kind"),
    CheckConstraint(
        "effective_until IS NULL OR effective_from IS NULL OR effective_until > effective_from",
        name="window",
    ),
    CheckConstraint("(lifted_at IS NULL) = (lifted_by IS NULL)", name="lift_complete"),
)

wall_protected_matters = Table(
    "wall_protected_matters",
    metadata,
    Column("wall_id", Text, ForeignKey("walls.wall_id"), nullable=False),
    Column("matter_id", Text, ForeignKey("matters.matter_id"), nullable=False, index=True),
    PrimaryKeyConstraint("wall_id", "matter_id"),
)

wall_protected_clients = Table(
    "wall_protected_clients",
    metadata,
    Column("wall_id", Text, ForeignKey("walls.wall_id"), nullable=False),
    Column("client_id", Text, ForeignKey("clients.client_id"), nullable=False, index=True),
    PrimaryKeyConstraint("wall_id", "client_id"),
)

wall_people = Table(
    "wall_people",
    metadata,
    Column("wall_id", Text, ForeignKey("walls.wall_id"), nullable=False),
    Column("person_id", Text, ForeignKey("people.person_id"), nullable=False, index=True),
    Column("role", Text, nullable=False),
    PrimaryKeyConstraint("wall_id", "person_id", "role"),
    CheckConstraint("role IN ('screened', 'allowed')", name="role"),
)

wall_groups = Table(
    "wall_groups",
    metadata,
    Column("wall_group_id", Text, primary_key=True),
    Column("wall_ids", ARRAY(Text), nullable=False),
    _ts("created_at"),
)

matter_wall_groups = Table(
    "matter_wall_groups",
    metadata,
    Column(
        "matter_id",
        Text,
        ForeignKey("matters.matter_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column(
        "wall_group_id",
        Text,
        ForeignKey("wall_groups.wall_group_id"),
        nullable=False,
        index=True,
    ),
    _ts("updated_at"),
)

wall_group_sizes = Table(
    "wall_group_sizes",
    metadata,
    Column("wall_group_id", Text, primary_key=True),
    Column("n_chunks", BigInteger, nullable=False),
)

retag_pending = Table(
    "retag_pending",
    metadata,
    Column("matter_id", Text, primary_key=True),
    Column("target_wall_group_id", Text, nullable=False),
    Column("policy_version", BigInteger, nullable=False),
    _ts("queued_at"),
    Column("retagged_chunks", BigInteger, nullable=False),
)

# --- documents and chunks ------------------------------------------------------------------

source_acls = Table(
    "source_acls",
    metadata,
    Column("source_acl_id", Text, primary_key=True),
    Column("default_access", Text, nullable=False),
    Column("allow", ARRAY(Text), nullable=False),
    Column("deny", ARRAY(Text), nullable=False),
    Column("resolvable", Boolean, nullable=False),
    _ts("created_at"),
    CheckConstraint(
        "default_access IN ('public', 'view', 'private', 'none')", name="default_access"
    ),
    Index("ix_source_acls_allow", "allow", postgresql_using="gin"),
    Index("ix_source_acls_deny", "deny", postgresql_using="gin"),
)

documents = Table(
    "documents",
    metadata,
    Column("document_id", BigInteger, Identity(), primary_key=True),
    Column("source", Text, nullable=False),
    Column("external_id", Text, nullable=False),
    Column("version", Text, nullable=True),
    Column("status", Text, nullable=False),
    Column("quarantine_reason", Text, nullable=True),
    Column("client_id", Text, nullable=True),
    Column("matter_id", Text, nullable=True, index=True),
    Column("client_raw", Text, nullable=True),
    Column("matter_raw", Text, nullable=True),
    Column("doc_type", Text, nullable=False),
    Column("title", Text, nullable=False),
    Column("author", Text, nullable=True),
    Column("modified_at", DateTime(timezone=True), nullable=True),
    Column("mime_type", Text, nullable=True),
    Column("content_sha256", Text, nullable=True),
    Column("source_acl_id", Text, ForeignKey("source_acls.source_acl_id"), nullable=False),
    Column("source_url", Text, nullable=True),
    Column("search_state", Text, nullable=False),
    Column("metadata", JSONB, nullable=False),
    Column("last_run_id", UUID(as_uuid=True), nullable=True),
    _ts("ingested_at"),
    _ts("updated_at"),
    UniqueConstraint("source", "external_id"),
    CheckConstraint("status IN ('active', 'quarantined')", name="status"),
    CheckConstraint("search_state IN ('active', 'withdrawn', 'held')", name="search_state"),
)


def _embedding_dim() -> int:
    return get_settings().embedding_dim


chunks = Table(
    "chunks",
    metadata,
    Column("chunk_id", Text, primary_key=True),
    Column(
        "document_id",
        BigInteger,
        ForeignKey("documents.document_id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("source", Text, nullable=False),
    Column("external_id", Text, nullable=False),
    Column("client_id", Text, nullable=True),
    Column("matter_id", Text, nullable=True, index=True),
    Column("wall_group_id", Text, nullable=False, index=True),
    Column("source_acl_id", Text, nullable=False),
    Column("doc_type", Text, nullable=False),
    Column("section_path", Text, nullable=False),
    Column("page_from", Integer, nullable=True),
    Column("page_to", Integer, nullable=True),
    Column("ordinal", Integer, nullable=False),
    Column("body", Text, nullable=False),
    Column(
        "body_tsv",
        TSVECTOR,
        Computed("to_tsvector('ewall_nl'::regconfig, ewall_legal_normalize(body))"),
        nullable=True,
    ),
    Column("embedding", Vector(_embedding_dim()), nullable=False),
    Column("content_sha256", Text, nullable=False, index=True),
    Column("token_count", Integer, nullable=False),
    Column("suppressed", Boolean, nullable=False),
    Column("modified_at", DateTime(timezone=True), nullable=True),
    _ts("ingested_at"),
    Index("ix_chunks_body_tsv", "body_tsv", postgresql_using="gin"),
    Index(
        "ix_chunks_embedding_hnsw",
        "embedding",
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    ),
)

lexeme_stats = Table(
    "lexeme_stats",
    metadata,
    Column("lexeme", Text, primary_key=True),
    Column("ndoc", BigInteger, nullable=False),
)

corpus_stats = Table(
    "corpus_stats",
    metadata,
    Column("id", SmallInteger, primary_key=True),
    Column("n_chunks", BigInteger, nullable=False),
    CheckConstraint("id = 1", name="single_row"),
)

# per-document length for the sparse leg's document ranking (migration 20261201_0027; kept
# current by triggers on chunks)
search_document_stats = Table(
    "search_document_stats",
    metadata,
    Column("document_id", BigInteger, primary_key=True),
    Column("n_chunks", Integer, nullable=False),
    Column("n_tokens", BigInteger, nullable=False),
)

search_synonyms = Table(
    "search_synonyms",
    metadata,
    Column("term", Text, nullable=False),
    Column("synonym", Text, nullable=False),
    Column("created_by", Text, nullable=False),
    _ts("created_at"),
    PrimaryKeyConstraint("term", "synonym"),
)

# --- ingestion -----------------------------------------------------------------------------

ingest_runs = Table(
    "ingest_runs",
    metadata,
    Column("run_id", UUID(as_uuid=True), primary_key=True),
    Column("connector", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("started_by", Text, nullable=False),
    _ts("started_at"),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    Column("params", JSONB, nullable=False),
    Column("counts", JSONB, nullable=False),
    Column("progress", JSONB, nullable=False),
    Column("error", Text, nullable=True),
    CheckConstraint("status IN ('running', 'succeeded', 'failed', 'partial')", name="status"),
)

ingest_run_events = Table(
    "ingest_run_events",
    metadata,
    Column(
        "run_id",
        UUID(as_uuid=True),
        ForeignKey("ingest_runs.run_id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("seq", Integer, nullable=False),
    Column("kind", Text, nullable=False),
    Column("source", Text, nullable=True),
    Column("external_id", Text, nullable=True),
    Column("reason", Text, nullable=True),
    Column("details", JSONB, nullable=False),
    _ts("at"),
    PrimaryKeyConstraint("run_id", "seq"),
)

jobs = Table(
    "jobs",
    metadata,
    Column("job_id", BigInteger, Identity(), primary_key=True),
    Column("kind", Text, nullable=False),
    Column("person_id", Text, nullable=False),
    Column(
        "run_id",
        UUID(as_uuid=True),
        ForeignKey("ingest_runs.run_id", ondelete="CASCADE"),
        nullable=True,
    ),
    Column("payload", JSONB, nullable=False),
    Column("status", Text, nullable=False, server_default=text("'queued'")),
    Column("attempts", Integer, nullable=False, server_default=text("0")),
    Column("max_attempts", Integer, nullable=False),
    _ts("run_after"),
    Column("locked_by", Text, nullable=True),
    Column("started_at", DateTime(timezone=True), nullable=True),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    Column("last_error", Text, nullable=True),
    _ts("created_at"),
    CheckConstraint("status IN ('queued', 'running', 'succeeded', 'failed')", name="status"),
    CheckConstraint("attempts >= 0 AND max_attempts >= 1", name="attempts"),
    Index("ix_jobs_status_run_after", "status", "run_after"),
    Index("ix_jobs_person_id_status", "person_id", "status"),
    Index("ix_jobs_run_id", "run_id"),
)

sync_state = Table(
    "sync_state",
    metadata,
    Column("source", Text, nullable=False),
    Column("scope", Text, nullable=False),
    Column("state", JSONB, nullable=False),
    _ts("updated_at"),
    PrimaryKeyConstraint("source", "scope"),
)

sync_seen = Table(
    "sync_seen",
    metadata,
    Column("source", Text, nullable=False),
    Column("scope", Text, nullable=False),
    Column("crawl_id", Text, nullable=False),
    Column("external_id", Text, nullable=False),
    PrimaryKeyConstraint("source", "scope", "crawl_id", "external_id"),
)

# --- case law ------------------------------------------------------------------------------

case_law = Table(
    "case_law",
    metadata,
    Column("ecli", Text, primary_key=True),
    Column("court", Text, nullable=True),
    Column("decision_date", DateTime(timezone=True), nullable=True),
    Column("area_of_law", Text, nullable=True),
    Column("procedure", Text, nullable=True),
    Column("relations", JSONB, nullable=False),
    Column("withdrawn", Boolean, nullable=True),
    Column("replaced_by", Text, nullable=True),
    Column("set_aside_by", Text, nullable=True),
    Column("state", Text, nullable=False),
    Column("held_reason", Text, nullable=True),
    Column("crosscheck", JSONB, nullable=True),
    _ts("updated_at"),
    CheckConstraint(
        "state IN ('active', 'withdrawn', 'voided', 'set_aside', 'held')", name="state"
    ),
)

# --- evaluation ----------------------------------------------------------------------------

relevance_sets = Table(
    "relevance_sets",
    metadata,
    Column("set_id", BigInteger, Identity(), primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("description", Text, nullable=False),
    Column("created_by", Text, nullable=False),
    _ts("created_at"),
)

relevance_queries = Table(
    "relevance_queries",
    metadata,
    Column("query_id", BigInteger, Identity(), primary_key=True),
    Column(
        "set_id",
        BigInteger,
        ForeignKey("relevance_sets.set_id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("query_key", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("as_person", Text, nullable=True),
    _ts("created_at"),
    UniqueConstraint("set_id", "query_key"),
)

relevance_judgements = Table(
    "relevance_judgements",
    metadata,
    Column(
        "query_id",
        BigInteger,
        ForeignKey("relevance_queries.query_id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("target_kind", Text, nullable=False),
    Column("target_id", Text, nullable=False),
    Column("grade", SmallInteger, nullable=False),
    Column("judged_by", Text, nullable=False),
    _ts("judged_at"),
    PrimaryKeyConstraint("query_id", "target_kind", "target_id", "judged_by"),
    CheckConstraint("grade BETWEEN 0 AND 3", name="grade"),
    CheckConstraint("target_kind IN ('document', 'chunk')", name="target_kind"),
)

eval_runs = Table(
    "eval_runs",
    metadata,
    Column("run_id", UUID(as_uuid=True), primary_key=True),
    Column("set_id", BigInteger, ForeignKey("relevance_sets.set_id"), nullable=False),
    Column("person_id", Text, nullable=False),
    Column("config", JSONB, nullable=False),
    Column("metrics", JSONB, nullable=False),
    Column("per_query", JSONB, nullable=False),
    _ts("created_at"),
)

# --- audit (append-only, hash-chained) -----------------------------------------------------

audit_heads = Table(
    "audit_heads",
    metadata,
    Column("chain", Text, primary_key=True),
    Column("seq", BigInteger, nullable=False),
    Column("prev_hash", Text, nullable=False),
    Column("hash", Text, nullable=False),
)

audit_access_sets = Table(
    "audit_access_sets",
    metadata,
    Column("set_id", Text, primary_key=True),
    Column("members", ARRAY(Text), nullable=False),
    _ts("created_at"),
)

audit_retrievals = Table(
    "audit_retrievals",
    metadata,
    Column("retrieval_id", UUID(as_uuid=True), primary_key=True),
    Column("seq", BigInteger, nullable=False, unique=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("person_id", Text, nullable=False, index=True),
    Column("roles", ARRAY(Text), nullable=False),
    Column("purpose", Text, nullable=False),
    Column("query", Text, nullable=False),
    Column("mode", Text, nullable=False),
    Column("k", Integer, nullable=False),
    Column("filters", JSONB, nullable=False),
    Column(
        "allowed_wall_groups_set",
        Text,
        ForeignKey("audit_access_sets.set_id"),
        nullable=False,
    ),
    Column(
        "source_principals_set",
        Text,
        ForeignKey("audit_access_sets.set_id"),
        nullable=False,
    ),
    Column("policy_version", BigInteger, nullable=False),
    Column("model", Text, nullable=True),
    Column("prompt_version", Text, nullable=True),
    Column("strategy", Text, nullable=False),
    Column("took_ms", Double, nullable=False),
    Column("result_count", Integer, nullable=False),
    Column("prev_hash", Text, nullable=False),
    Column("hash", Text, nullable=False),
    Column("session_id", Text, nullable=True),
    Column("session_matter_id", Text, nullable=True),
    Column("session_scope", Text, nullable=True),
    Index("ix_audit_retrievals_at", "at"),
    Index("ix_audit_retrievals_session_id_seq", "session_id", "seq"),
    Index("ix_audit_retrievals_person_id_at", "person_id", "at"),
    CheckConstraint("session_scope IN ('bound', 'widened')", name="session_scope"),
)

audit_retrieval_results = Table(
    "audit_retrieval_results",
    metadata,
    Column("retrieval_id", UUID(as_uuid=True), nullable=False),
    Column("rank", Integer, nullable=False),
    Column("chunk_id", Text, nullable=False, index=True),
    Column("matter_id", Text, nullable=True, index=True),
    Column("content_sha256", Text, nullable=False),
    Column("score", Double, nullable=False),
    PrimaryKeyConstraint("retrieval_id", "rank"),
    ForeignKeyConstraint(
        ["retrieval_id"],
        ["audit_retrievals.retrieval_id"],
        deferrable=True,
        initially="DEFERRED",
    ),
)

policy_events = Table(
    "policy_events",
    metadata,
    Column("event_id", UUID(as_uuid=True), primary_key=True),
    Column("seq", BigInteger, nullable=False, unique=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("actor", Text, nullable=False),
    Column("action", Text, nullable=False),
    Column("object_type", Text, nullable=False),
    Column("object_id", Text, nullable=False),
    Column("reason", Text, nullable=True),
    Column("details", JSONB, nullable=False),
    Column("policy_version", BigInteger, nullable=False),
    Column("prev_hash", Text, nullable=False),
    Column("hash", Text, nullable=False),
)

gate_events = Table(
    "gate_events",
    metadata,
    Column("event_id", UUID(as_uuid=True), primary_key=True),
    Column("seq", BigInteger, nullable=False, unique=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("person_id", Text, nullable=False),
    Column("gate", Text, nullable=False),
    Column("ok", Boolean, nullable=False),
    Column("request", JSONB, nullable=False),
    Column("outcome", JSONB, nullable=False),
    Column("prev_hash", Text, nullable=False),
    Column("hash", Text, nullable=False),
)

AUDIT_TABLES = (
    "audit_access_sets",
    "audit_retrievals",
    "audit_retrieval_results",
    "policy_events",
    "gate_events",
)
