"""What issuing a wall would do, before it is committed: the console's impact preview.

ONE entry point, `preview_wall`, so that the console can later be pointed at the API's
`POST /v1/walls/preview` service without touching a page. Everything here is derived from
the same pieces that decide access for real: the wall checks of `app.walls.service`, the
matrix snapshot and its `may_access` (the one rule that decides who may see a matter),
and the wall-group hash. Nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from app.audit.chain import now_utc
from app.console import repository
from app.db.engine import Database
from app.walls import exposure, service
from app.walls.graph import MatrixSnapshot
from app.walls.resolution import read_snapshot
from app.walls.schemas import WallIn

PREVIEW_WALL_ID = "W-preview"
# Re-tag throughput measured by bench/walls (README: a 10,000-chunk matter in 10.6 s on two
# cores); only used to say roughly how long the matters stay invisible.
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


def _comparison_instant(body: WallIn, now: datetime) -> datetime:
    """The first instant at which the wall is in force (now, or its start if later)."""
    if body.effective_from is not None and body.effective_from > now:
        return body.effective_from
    return now


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
    lookback_days: int,
) -> WallPreview:
    """The impact of issuing ``body`` now. Raises the same AppErrors as issuing it would
    (unknown people, matters or clients; a wall that protects nothing; a bad window)."""
    with database.transaction() as conn:
        service.check_wall(conn, body)  # the issuing rules themselves, not a copy
    snap = read_snapshot(database)
    candidate = exposure.proposed_wall(body, PREVIEW_WALL_ID)  # the API preview's wall
    after = exposure.with_wall(snap, candidate)
    covered = sorted(after.covered_matters[PREVIEW_WALL_ID])
    now = now_utc()
    at = _comparison_instant(body, now)
    in_force = candidate.active_at(at)
    changes: list[AccessChange] = []
    tally = {"loses": 0, "gains": 0}
    people: dict[str, set[str]] = {"loses": set(), "gains": set()}
    if in_force:
        for person in sorted(snap.people.values(), key=lambda p: p.person_id):
            # access is a conjunction over the covering walls: only someone the new wall
            # denies can change, which keeps this at (denied people x covered matters)
            if not person.active or not after.wall_denies(candidate, person.person_id):
                continue
            for matter_id in covered:
                before_ok = snap.may_access(person.person_id, matter_id, at)
                after_ok = after.may_access(person.person_id, matter_id, at)
                if before_ok == after_ok:
                    continue
                change = "gains" if after_ok else "loses"
                tally[change] += 1
                people[change].add(person.person_id)
                if len(changes) < MAX_LISTED_CHANGES:
                    changes.append(
                        AccessChange(
                            person.person_id,
                            person.name,
                            matter_id,
                            snap.matters[matter_id].title,
                            change,
                        )
                    )
    # a new non-lifted wall changes the wall set, hence the group, of every covered matter
    with database.transaction() as conn:
        counts = repository.chunks_per_matter(conn, covered)
        report = exposure.exposure(
            conn,
            PREVIEW_WALL_ID,
            covered,
            since=now - timedelta(days=lookback_days),
            snapshot=lambda: after,
            may_see=exposure.caller_may_see(snap, caller_id, now),
        )
    total = sum(counts.values())
    return WallPreview(
        policy_version=snap.version,
        at=at,
        active_at_all=in_force,
        covered_matters=tuple((m, snap.matters[m].title) for m in covered),
        changes=tuple(changes),
        losses=tally["loses"],
        gains=tally["gains"],
        people_losing=len(people["loses"]),
        people_gaining=len(people["gains"]),
        chunks_by_matter=counts,
        retag_batches=-(-total // batch_size) if total else 0,
        hold_estimate_s=total / RETAG_CHUNKS_PER_S,
        conflicts=tuple(_conflicts(snap, covered)),
        exposure={"lookback_days": lookback_days, **report},
    )
