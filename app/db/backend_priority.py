"""Lower the OS priority of a low-priority process's own database server processes.

The job worker process runs at a low OS priority (``EWALL_JOB_PROCESS_NICE``), but the work
it asks of PostgreSQL (HNSW and GIN inserts, statistics triggers) runs in the server
process that serves its connection, at normal priority, on the same cores as everyone's
searches. When the server runs on this machine, the worker can lower those processes too:
each new pool connection asks the server for its process id and start time, and the
process is reniced only if it is verifiably that backend (a process of that id on this
machine whose start time matches the server's record to the second; a server in a
container or on another host never matches, and a managed service is left alone).

Nothing else changes: the connection, its locks and its transactions are the same, only the
scheduler gives its CPU to searches first. A search that waits on a page lock held by a
lowered backend frees its own core for it, so the wait stays short.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from sqlalchemy import event

from app.db import sqlfiles
from app.db.engine import Database

log = logging.getLogger("ewall.db")

_TOLERANCE_S = 1.5


def _boot_time() -> float | None:
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            for line in stat:
                if line.startswith("btime "):
                    return float(line.split()[1])
    except OSError:
        return None
    return None


def _process_start(pid: int) -> float | None:
    """Wall-clock start of a process on this machine (Linux /proc), or None."""
    boot = _boot_time()
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if boot is None or len(fields) < 20:
        return None
    # field 22 of stat (20 after the command): start time in clock ticks since boot
    return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")


def is_local_backend(pid: int, backend_start: float | None, local_address: bool) -> bool:
    """Whether ``pid`` on this machine is the server process the server describes."""
    if not local_address or backend_start is None:
        return False
    started = _process_start(pid)
    return started is not None and abs(started - backend_start) <= _TOLERANCE_S


def lower_local_backends(database: Database, nice: int) -> None:
    """Renice every new connection's server process by ``nice`` where it is provably local."""
    if nice <= 0:
        return

    @event.listens_for(database.engine, "connect")
    def _lower(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        cur.execute(sqlfiles.raw("db.backend_identity"))
        pid, backend_start, local_address = cur.fetchone()
        cur.close()
        dbapi_conn.commit()
        start = None if backend_start is None else float(backend_start)
        if not is_local_backend(int(pid), start, bool(local_address)):
            return
        try:
            current = os.getpriority(os.PRIO_PROCESS, int(pid))
            os.setpriority(os.PRIO_PROCESS, int(pid), min(19, max(current, nice)))
        except OSError as exc:  # another OS user's server: leave it as it is
            log.info("database backend priority left as it is", extra={"error": type(exc).__name__})


__all__ = ["is_local_backend", "lower_local_backends"]
