"""Database functions as reviewed source: ``sql/functions/*.sql``, applied by migrations.

The plpgsql and SQL functions of the search (ranking, statistics triggers, text search, the
audit chain step) are written in ``sql/functions/<name>.v<N>.sql``, each file a few
``CREATE OR REPLACE FUNCTION`` statements with the comments a reviewer needs. A migration
that creates or changes a function applies a file by content::

    apply_function_source("sparse_document_rank.v2.sql", "0d8f2d5f...")

Content is pinned twice over, so that migrating a new database from nothing builds today
what it built when each migration was written:

- A file is frozen once a migration names it. A change to a function is a new file (the next
  version, ``.v3`` after ``.v2``) and a new migration that applies it; the downgrade of that
  migration applies the previous version. Old migrations keep naming the old versions, so a
  migration never reads another migration and never edits SQL text.
- The migration names the file together with the sha256 of the bytes it was written for,
  and ``function_source`` refuses a file whose bytes differ (``FunctionSourceChanged``): a
  frozen file edited in place stops every migration that applies it, instead of silently
  giving new databases a function that old databases never got.

The highest version of a file is the current definition; tests/foundation/
test_sql_functions_source.py holds it to the committed catalog snapshot
(``migrations/schema.sql``), and the snapshot test holds the snapshot to the migrations.

The text runs on the migration's psycopg connection without parameters: function bodies
hold ``%``, ``:`` and backslashes that a parameterised execute would take for placeholders.
"""

from __future__ import annotations

import hashlib
import re

from alembic import context, op

from app.db.sqlfiles import sql_dir

FUNCTIONS_FOLDER = "functions"
_FILE_NAME = re.compile(r"^[a-z][a-z0-9_]*\.v[1-9][0-9]*\.sql$")


class FunctionSourceChanged(RuntimeError):
    """A function source file no longer holds the bytes a migration was written for."""


def function_source(file: str, sha256: str) -> str:
    """The text of ``sql/functions/<file>``, provided its sha256 is ``sha256``."""
    if not _FILE_NAME.match(file):
        raise ValueError(f"not a function source file name: {file!r} (want <name>.v<N>.sql)")
    data = sql_dir().joinpath(FUNCTIONS_FOLDER, file).read_bytes()
    found = hashlib.sha256(data).hexdigest()
    if found != sha256:
        raise FunctionSourceChanged(
            f"sql/{FUNCTIONS_FOLDER}/{file} has sha256 {found}, the migration was written for "
            f"{sha256}: a file that a migration applies is frozen; put the change in the next "
            "version of the file and apply that in a new migration"
        )
    return data.decode("utf-8")


def apply_function_source(file: str, sha256: str) -> None:
    """Run ``sql/functions/<file>`` (checked against ``sha256``) in the current migration."""
    run_statement(function_source(file, sha256))


def run_statement(statement: str) -> None:
    """Run SQL text in the current migration straight through psycopg, without parameters
    (so that ``%`` and ``:name`` in function bodies are left alone)."""
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)


def migration_app_role() -> str:
    """The service role a migration grants to (``app_role`` in the migration's config), checked
    to be a plain identifier before it is written into DDL."""
    role = str(context.config.attributes.get("app_role", "ewall_app"))
    if not role.replace("_", "").isalnum() or not role[0].isalpha():
        raise ValueError(f"unsafe app role name {role!r}")
    return role
