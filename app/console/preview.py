"""What issuing a wall would do, before it is committed: the console's impact preview.

ONE entry point, `preview_wall`. The impact itself (covered matters, who loses access, the
exposure) is `app.walls.exposure.wall_impact`, the computation behind the API's
`POST /v1/walls/preview`, read through the same `matter_view` policy; this module only adds
what the page shows beyond the API (names, titles, chunk counts per matter, re-tag time).
The wall checks are `app.walls.service`'s own. Nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.console import repository
from app.db.clock import db_now
from app.db.engine import Database
from app.walls import exposure, service
from app.walls.graph import MatrixSnapshot
from app.walls.resolution import read_snapshot
from app.walls.schemas import WallIn

PREVIEW_WALL_ID = "W-preview"
# Re-tag throughput measured by bench/walls (docs/benchmarks.md: a 10,000-chunk matter in
# 10.6 s on two cores); only used to say roughly how long the matters stay invisible.
RETAG_CHUNKS_PER_S = 940.0
MAX_CONFLICT_HITS = 50
MAX_LISTED_CHANGES = 500


@dataclass(frozen=True)
class AccessChange:
    person_id: str
    person_name: str
    matter_id: str
    matter_title: str
    change: str  # "loses" | "gains"


@dataclass(frozen=True)
class WallPreview:
    policy_version: int
    at: datetime
    active_at_all: bool
    covered_matters: tuple[tuple[str, str], ...]  # (matter_id, title)
    changes: tuple[AccessChange, ...]  # the first MAX_LISTED_CHANGES
    losses: int  # all of them, counted
    gains: int
    people_losing: int
    people_gaining: int
    chunks_by_matter: dict[str, int]
    retag_batches: int
    hold_estimate_s: float
    conflicts: tuple[dict[str, Any], ...]
    # who already retrieved what the wall would protect, and would be screened by it
    # (app.walls.exposure, the same report as GET /v1/walls/{id}/exposure)
    exposure: dict[str, Any]

    @property
    def chunks_to_retag(self) -> int:
        return sum(self.chunks_by_matter.values())

    @property
    def listed_all(self) -> bool:
        return len(self.changes) == self.losses + self.gains


def _conflicts(snap: MatrixSnapshot, covered: list[str]) -> list[dict[str, Any]]:
    """Conflict hits elsewhere in the firm for the clients and parties of the covered
    matters (the same search as GET /v1/conflicts)."""
    names: dict[str, str] = {}
    for matter_id in covered:
        matter = snap.matters[matter_id]
        client = snap.clients.get(matter.client_id)
        if client is not None:
            names.setdefault(client.name, f"client of {matter_id}")
        for party in snap.parties.get(matter_id, ()):
            names.setdefault(party.name, f"{party.role} party in {matter_id}")
    covered_set = set(covered)
    hits: list[dict[str, Any]] = []
    for name, why in sorted(names.items()):
        for hit in snap.conflicts(name):
            if hit["matter_id"] in covered_set:
                continue
            hits.append({**hit, "searched": name, "because": why})
            if len(hits) >= MAX_CONFLICT_HITS:
                return hits
    return hits


def preview_wall(
    database: Database,
    body: WallIn,
    *,
    batch_size: int,
    caller_id: str,
    caller_roles: frozenset[str],
    lookback_days: int,
) -> WallPreview:
    """The impact of issuing ``body`` now. Raises the same AppErrors as issuing it would
    (unknown people, matters or clients; a wall that protects nothing; a bad window)."""
    with database.transaction() as conn:
        service.check_wall(conn, body)  # the issuing rules themselves, not a copy
        now = db_now(conn)  # the database's clock, as issuing would judge (app/db/clock.py)
    snap = read_snapshot(database)
    impact = exposure.wall_impact(snap, body, now, PREVIEW_WALL_ID)
    may_see = exposure.matter_view(caller_roles, caller_id, snap, now)
    covered = [m for m in impact.covered if may_see is None or may_see(m)]
    shown = set(covered)
    changes = [c for c in impact.changes if c.matter_id in shown]
    people: dict[str, set[str]] = {"loses": set(), "gains": set()}
    for c in changes:
        people[c.change].add(c.person_id)
    # a new non-lifted wall changes the wall set, hence the group, of every covered matter
    with database.transaction() as conn:
        counts = repository.chunks_per_matter(conn, covered)
        report = exposure.exposure(
            conn,
            PREVIEW_WALL_ID,
            impact.covered,
            now=now,
            lookback_days=lookback_days,
            snapshot=lambda: impact.after,
            may_see=may_see,
        )
    total = sum(counts.values())
    return WallPreview(
        policy_version=snap.version,
        at=impact.at,
        active_at_all=impact.in_force,
        covered_matters=tuple((m, snap.matters[m].title) for m in covered),
        changes=tuple(
            AccessChange(
                c.person_id,
                snap.people[c.person_id].name,
                c.matter_id,
                snap.matters[c.matter_id].title,
                c.change,
            )
            for c in changes[:MAX_LISTED_CHANGES]
        ),
        losses=sum(1 for c in changes if c.change == "loses"),
        gains=sum(1 for c in changes if c.change == "gains"),
        people_losing=len(people["loses"]),
        people_gaining=len(people["gains"]),
        chunks_by_matter=counts,
        retag_batches=-(-total // batch_size) if total else 0,
        hold_estimate_s=total / RETAG_CHUNKS_PER_S,
        conflicts=tuple(_conflicts(snap, covered)),
        exposure={"lookback_days": lookback_days, **report},
    )
