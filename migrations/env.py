"""Alembic environment: the only way the schema changes.

The URL, the app role that receives grants and the embedding dimension come from
``config.attributes`` when called from ``app.db.migrate`` (tests, `ewall migrate`), else from
the settings (plain `alembic` CLI with EWALL_* set).

There is no declared metadata to compare against: drift is guarded by the catalog snapshot
``migrations/schema.sql`` (``app/db/snapshot.py``, ``make schema-snapshot``).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool

from app.db.engine import sqlalchemy_url
from app.settings import get_settings

config = context.config
settings = get_settings()
url: str | None = (
    config.attributes.get("url") or settings.migrations_database_url or settings.database_url
)
if not url:
    raise SystemExit(
        "No database URL: set EWALL_DATABASE_URL, or run `ewall migrate` (embedded server)."
    )
config.attributes.setdefault("app_role", settings.app_role)
config.attributes.setdefault("embedding_dim", settings.embedding_dim)


def run_migrations_online(url: str) -> None:
    engine = create_engine(sqlalchemy_url(url), poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(
            connection=connection, target_metadata=None, transaction_per_migration=True
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("Offline SQL generation is not supported; run against a database.")
run_migrations_online(url)
