"""Run Alembic from code: `ewall migrate`, `ewall serve` and the tests use this."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, pool

from app.db.engine import sqlalchemy_url

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"


def alembic_config(url: str, *, app_role: str, embedding_dim: int) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["url"] = url
    cfg.attributes["app_role"] = app_role
    cfg.attributes["embedding_dim"] = embedding_dim
    return cfg


def upgrade(url: str, *, app_role: str, embedding_dim: int, revision: str = "head") -> None:
    command.upgrade(alembic_config(url, app_role=app_role, embedding_dim=embedding_dim), revision)


def downgrade(url: str, *, app_role: str, embedding_dim: int, revision: str) -> None:
    cfg = alembic_config(url, app_role=app_role, embedding_dim=embedding_dim)
    command.downgrade(cfg, revision)


def head_revision() -> str | None:
    script = ScriptDirectory(str(MIGRATIONS_DIR))
    return script.get_current_head()


def current_revision(url: str) -> str | None:
    engine = create_engine(sqlalchemy_url(url), poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()
