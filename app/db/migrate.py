"""Run Alembic from code: `ewall migrate`, `ewall serve` and the tests use this.

The migrations and their ``alembic.ini`` are the ``migrations`` package, found with
``importlib.resources``: the same in a checkout, an editable install and an installed wheel.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, pool

from app.db import sqlfiles
from app.db.engine import Database, require_utf8, sqlalchemy_url

MIGRATIONS_PACKAGE = "migrations"


def migrations_dir() -> Path:
    """The folder of env.py and versions/; Alembic needs real files, so never a zip."""
    root = resources.files(MIGRATIONS_PACKAGE)
    if not isinstance(root, Path):
        raise TypeError(
            f"the {MIGRATIONS_PACKAGE!r} package must be installed as files, found {root!r}"
        )
    return root


def alembic_config(url: str, *, app_role: str, embedding_dim: int) -> Config:
    cfg = Config(str(migrations_dir() / "alembic.ini"))
    cfg.attributes["url"] = url
    cfg.attributes["app_role"] = app_role
    cfg.attributes["embedding_dim"] = embedding_dim
    return cfg


def upgrade(url: str, *, app_role: str, embedding_dim: int, revision: str = "head") -> None:
    """Raises WrongEncoding, before any revision runs, on a database not encoded UTF8."""
    require_utf8(url)
    command.upgrade(alembic_config(url, app_role=app_role, embedding_dim=embedding_dim), revision)


def downgrade(url: str, *, app_role: str, embedding_dim: int, revision: str) -> None:
    cfg = alembic_config(url, app_role=app_role, embedding_dim=embedding_dim)
    command.downgrade(cfg, revision)


def head_revision() -> str | None:
    script = ScriptDirectory(str(migrations_dir()))
    return script.get_current_head()


def embedding_dimension(database: Database) -> int | None:
    """The dimension of chunks.embedding as migrated (None before the migrations ran)."""
    with database.connect() as conn:
        found = conn.execute(sqlfiles.query("db.embedding_dimension")).scalar_one_or_none()
    return int(found) if found is not None else None


def current_revision(url: str) -> str | None:
    engine = create_engine(sqlalchemy_url(url), poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()
