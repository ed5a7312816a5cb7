"""Where the database comes from: EWALL_DATABASE_URL, or the embedded server."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from app.db import migrate
from app.db.embedded import DATABASE_NAME, EmbeddedPostgres
from app.db.engine import Database, DatabaseUrls, require_utf8
from app.settings import Settings

log = logging.getLogger("ewall.db")


@contextmanager
def open_database(settings: Settings, *, run_migrations: bool = True) -> Iterator[Database]:
    """Start (or attach to) the database, bring the schema to head, hand out the pool.
    Raises WrongEncoding first when the database is not encoded UTF8.

    The embedded server is stopped on exit when this process held the last handle.
    """
    embedded: EmbeddedPostgres | None = None
    if settings.database_url:
        urls = DatabaseUrls(
            app=settings.database_url,
            migrations=settings.migrations_database_url or settings.database_url,
        )
    else:
        embedded = EmbeddedPostgres(settings.data_dir)
        embedded.ensure_database(settings.app_role)
        urls = DatabaseUrls(
            app=embedded.url(settings.app_role, DATABASE_NAME),
            migrations=embedded.superuser_url(DATABASE_NAME),
            superuser=embedded.superuser_url(DATABASE_NAME),
        )
    try:
        if run_migrations:
            migrate.upgrade(
                urls.migrations, app_role=settings.app_role, embedding_dim=settings.embedding_dim
            )
        else:  # as the migrations do: a command on a database that is not UTF8 stops here
            require_utf8(urls.migrations)
        database = Database(
            urls,
            app_role=settings.app_role,
            pool_size=settings.pool_size,
            max_overflow=settings.pool_max_overflow,
            statement_timeout_ms=settings.statement_timeout_ms,
            prepare_marked=settings.db_prepare,
        )
        try:
            yield database
        finally:
            database.dispose()
    finally:
        if embedded is not None:
            embedded.stop()
