"""What the console's chain banner verifies on a page load, kept cheap as the log grows.

A full verification reads and hashes every row of the three chains (bench/banner.py: about
a thousand retrievals a second on two busy cores), so a year's retrievals of a large firm
take tens of minutes: the banner cannot run one on every load of /console/audit, a
retrieval's page or a matter's page.

Per process and database the banner keeps what the last full verification found: for each
chain the position it verified from the genesis, (seq, hash), and when. A page load then
verifies, in one snapshot, (a) that the row at each position still has that hash and (b)
every row after it, chaining on from it to the head (app.audit.chain.verify_all_after), and
says how far each part reaches: "verified up to sequence N (in full through A at <when>,
the rows after it now)". A row at or before a position edited without its hash is for the
next full verification to find; a rewrite that recomputed the hashes from there on changes
the position's hash and shows at once.

The full verifications run off the request path, one at a time per process: a page load
starts one when the last is older than REFRESH_S (and than DUTY_FACTOR times its own
duration), or when it found a break (after a restore
of the database to an earlier point the position is gone; a full verification says whether
the chains are intact all the same). A process whose console nobody opens reads nothing. A
full verification that finds a break is the banner from then on, until a later one finds
the chains intact. One that fails (the database away) is tried again after REFRESH_S.

A log of at most INLINE_FULL_ROWS rows is verified in full on every page load (under a
second: an edit anywhere shows at once, as before). A larger one, before any full
verification has completed in this process, is verified in the background, and the banner
says that it is not verified yet instead of calling it intact.
"""

from __future__ import annotations

import logging
import threading
import weakref
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from app.audit import repository
from app.audit.chain import CHAINS, verify_all, verify_all_after
from app.audit.chain import now_utc as _now
from app.db.engine import Database, begin_snapshot

log = logging.getLogger("ewall.console")

REFRESH_S = 300.0
DUTY_FACTOR = 4.0
INLINE_FULL_ROWS = 1_000


@dataclass(frozen=True)
class FullCheck:
    """One full verification: its report (verify_all's) and when its snapshot began."""

    at: datetime
    report: dict[str, Any]
    took_s: float = 0.0

    def due(self, now: datetime) -> bool:
        """Is the next full verification due: REFRESH_S after this one ended, and at least
        DUTY_FACTOR times its duration (a log that takes an hour to verify is not verified
        back to back by every process that serves the console)?"""
        return _age(self.at, now) > self.took_s + max(REFRESH_S, DUTY_FACTOR * self.took_s)

    @property
    def ok(self) -> bool:
        return bool(self.report["ok"])

    def positions(self) -> dict[str, tuple[int, str]]:
        """(seq, hash) of each chain's last row verified from the genesis (all of it: ok)."""
        chains = self.report["chains"]
        return {name: (int(chains[name]["checked"]), str(chains[name]["head"])) for name in CHAINS}


class ChainWatch:
    """The full verifications of one database in this process, and the banner built on them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.last: FullCheck | None = None
        self.running_since: datetime | None = None
        self.failed: str | None = None  # why the last background verification did not finish
        self.failed_at: datetime | None = None
        self._thread: threading.Thread | None = None

    def verify_in_full(self, database: Database) -> FullCheck:
        """A full verification now, in its own snapshot (what the background thread runs)."""
        with database.engine.connect() as conn:
            begin_snapshot(conn)
            return self._full(conn)

    def _full(self, conn: Connection) -> FullCheck:
        at = _now()
        report = verify_all(conn)
        check = FullCheck(at, report, _age(at, _now()))
        with self._lock:
            # two verifications that overlap (a page's and the background's): the later
            # snapshot is the newer state
            if self.last is None or self.last.at <= check.at:
                self.last = check
        if not check.ok:
            log.error(
                "audit chain broken: %s (seq %s)",
                check.report.get("problem"),
                check.report.get("first_bad_seq"),
            )
        return check

    def wait(self, timeout_s: float) -> None:
        """Until the background verification running now (if any) has finished."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout_s)

    def start(self, database: Database) -> None:
        """A full verification in the background, unless one is running."""
        with self._lock:
            if self.running_since is not None:
                return
            self.running_since = _now()
            thread = threading.Thread(
                target=self._background, args=(database,), name="ewall-chain-watch", daemon=True
            )
            self._thread = thread
        thread.start()

    def _background(self, database: Database) -> None:
        try:
            self.verify_in_full(database)
            self.failed = None
        except Exception as exc:  # a database away is no break: say so, try again later
            log.exception("the background verification of the audit chains failed")
            self.failed = f"{type(exc).__name__}: {exc}"[:300]
            self.failed_at = _now()
        finally:
            with self._lock:
                self.running_since = None

    def _may_retry(self, now: datetime) -> bool:
        return self.failed_at is None or _age(self.failed_at, now) > REFRESH_S

    def banner(self, database: Database) -> dict[str, Any]:
        now = _now()
        rows = 0
        since: dict[str, Any] = {}
        with database.engine.connect() as conn:
            begin_snapshot(conn)
            rows = sum((repository.chain_head(conn, n) or (0, ""))[0] for n in CHAINS)
            if rows <= INLINE_FULL_ROWS:  # small: in full on every load, an edit shows at once
                return _full_banner(self._full(conn))
            last = self.last
            if last is not None and last.ok:
                since = verify_all_after(conn, last.positions())
        if last is None:
            if self._may_retry(now):
                self.start(database)
            return {
                "ok": False,
                "scope": "pending",
                "verified_at": now,
                "rows": rows,
                "since": self.running_since,
                "failed": self.failed,
                "checked": 0,
                "chains": {},
            }
        stale = last.due(now) and self._may_retry(now)
        if not last.ok:
            if stale:
                self.start(database)
            return _full_banner(last)
        if stale or not since["ok"]:
            self.start(database)
        return _since_banner(since, last, now)


def _age(then: datetime, now: datetime) -> float:
    return (now - then).total_seconds()


def _full_banner(check: FullCheck) -> dict[str, Any]:
    out = {**check.report, "scope": "full", "verified_at": check.at, "full_at": check.at}
    out["chains"] = {
        name: {**chain, "through": chain["checked"], "full_through": chain["checked"]}
        for name, chain in check.report["chains"].items()
    }
    return out


def _since_banner(report: dict[str, Any], last: FullCheck, now: datetime) -> dict[str, Any]:
    positions = last.positions()
    out = {**report, "scope": "since", "verified_at": now, "full_at": last.at}
    out["chains"] = {
        name: {
            **chain,
            "full_through": positions[name][0],
            "through": positions[name][0] + int(chain["checked"]),
        }
        for name, chain in report["chains"].items()
    }
    return out


_WATCHES: weakref.WeakKeyDictionary[Database, ChainWatch] = weakref.WeakKeyDictionary()
_WATCHES_LOCK = threading.Lock()


def watch_for(database: Database) -> ChainWatch:
    """This process's watch of ``database`` (each API process keeps its own)."""
    with _WATCHES_LOCK:
        watch = _WATCHES.get(database)
        if watch is None:
            watch = _WATCHES[database] = ChainWatch()
        return watch
