"""Transitional: the Core tables that modules not yet moved to ``sql/*.sql`` still import.

This is NOT a declaration of the schema. Alembic owns the schema (``migrations/``) and the
drift guard is the catalog snapshot ``migrations/schema.sql`` (``app/db/snapshot.py``). Delete
this module together with its last importer (issue 11: every statement a named block in a
domain repository); do not add tables or columns here.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Identity,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)


def _ts(name: str, nullable: bool = False) -> Column[object]:
    return Column(
        name,
        DateTime(timezone=True),
        nullable=nullable,
        server_default=None if nullable else text("now()"),
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


# --- ingestion -----------------------------------------------------------------------------


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
