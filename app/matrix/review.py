"""Review of a matrix change that can move a walled matter's access.

Walls are the conflicts partner's to issue, but the matrix decides what they cover and who
is inside them: joining the team of a matter under an inclusionary wall makes a person an
insider, moving a matter to another client (or a client to another parent) can take it out
from under a wall, and an alias (or a source group that takes in the person's identity) gives
a person a source principal that documents behind a wall may allow. Such a change widens who
may see a walled matter as surely as lifting a wall, so it needs the conflicts role like a
lift does (`apply_matrix` refuses it otherwise).

The review compares the matrix before and after the change inside the writing transaction,
with the comparison the wall preview runs (`app.walls.exposure.access_changes`), over the
pairs the change can touch only: everyone x the moved walled matters; the team's joiners and
leavers (or a moved matter's whole team) x the matters of the inclusionary walls over that
team; a person switched from inactive to active (who saw nothing) x every walled matter;
and for a person whose source principals grew (an activation too), the walled matters they
may see that hold a document allowing one of the new principals. Creating a person is not
reviewed: a stranger to the matrix sees unwalled matters only, and a new colleague gaining
what every colleague outside the screens sees is onboarding, not a widening (their aliases
are reviewed like any other). Access is compared at the instant of the
change and at every later start or end of a wall, so a scheduled wall is not bypassed by a
change made before it starts. Losses are kept too, with the exposure of each wall that now
denies someone (the preview's exposure report), for the policy event.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from app.matrix import repository as repo
from app.walls import exposure
from app.walls.graph import MatrixSnapshot
from app.walls.resolution import load_snapshot


@dataclass(frozen=True)
class WalledChange:
    person_id: str
    matter_id: str
    change: str  # "gains" | "loses"
    via: str  # "walls" (walls now admit the person) | "source" (a new source principal)


@dataclass
class WalledAccessReview:
    changes: list[WalledChange] = field(default_factory=list)
    # wall_id -> the exposure summary of the matters that wall now denies someone
    exposure: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def gains(self) -> list[WalledChange]:
        return [c for c in self.changes if c.change == "gains"]

    def as_details(self, lookback_days: int, approved_by: str | None) -> dict[str, Any]:
        def rows(kind: str) -> list[dict[str, str]]:
            return [
                {"person_id": c.person_id, "matter_id": c.matter_id, "via": c.via}
                for c in self.changes
                if c.change == kind
            ]

        return {
            "gains": rows("gains"),
            "losses": rows("loses"),
            "widening_approved_by": approved_by,
            "exposure_lookback_days": lookback_days,
            "exposure": self.exposure,
        }


def matrix_before(conn: Connection) -> MatrixSnapshot | None:
    """The matrix as the transaction sees it before the write; None when no wall is left
    standing (nothing to review)."""
    snap = load_snapshot(conn, full=True)
    if not any(not w.lifted for w in snap.walls.values()):
        return None
    return snap


def _instants(before: MatrixSnapshot, after: MatrixSnapshot, now: datetime) -> list[datetime]:
    later = {t for t in (*before.time_boundaries, *after.time_boundaries) if t > now}
    return [now, *sorted(later)]


def _walled(snap: MatrixSnapshot, matter_id: str) -> bool:
    return bool(snap.walls_by_matter.get(matter_id))


def _insider_pairs(
    before: MatrixSnapshot, after: MatrixSnapshot, matter_id: str, people: Iterable[str]
) -> Iterator[tuple[str, str]]:
    """``people`` x every matter of the inclusionary walls that take their insiders from the
    team of ``matter_id`` (before or after): joining, leaving, or carrying a team under or
    out from under such a wall changes who is inside all of its matters."""
    matters: set[str] = set()
    for snap in (before, after):
        for wall_id in snap.walls_by_matter.get(matter_id, ()):
            wall = snap.walls[wall_id]
            if wall.kind == "inclusionary" and wall.include_team:
                matters |= snap.covered_matters[wall_id]
    for person_id in sorted(people):
        for covered in sorted(matters):
            yield person_id, covered


def _moved_pairs(
    before: MatrixSnapshot,
    after: MatrixSnapshot,
    moved_matters: Iterable[str],
    reparented: Iterable[str],
) -> Iterator[tuple[str, str]]:
    matters = set(moved_matters)
    for client_id in reparented:
        for sub in after.client_subtree(client_id):
            matters.update(after.matters_by_client.get(sub, ()))
    walled = sorted(m for m in matters if _walled(before, m) or _walled(after, m))
    people = sorted(set(before.people) | set(after.people))
    for matter_id in walled:
        for person_id in people:
            yield person_id, matter_id
        team = before.team.get(matter_id, frozenset()) | after.team.get(matter_id, frozenset())
        yield from _insider_pairs(before, after, matter_id, team)


def _activated_pairs(
    before: MatrixSnapshot, after: MatrixSnapshot, people: Iterable[str]
) -> Iterator[tuple[str, str]]:
    walled = sorted(m for m in after.matters if _walled(before, m) or _walled(after, m))
    for person_id in sorted(people):
        for matter_id in walled:
            yield person_id, matter_id


def _team_pairs(
    before: MatrixSnapshot, after: MatrixSnapshot, team_matters: Iterable[str]
) -> Iterator[tuple[str, str]]:
    for matter_id in sorted(team_matters):
        changed = before.team.get(matter_id, frozenset()) ^ after.team.get(matter_id, frozenset())
        yield from _insider_pairs(before, after, matter_id, changed)


def _reached_by_groups(
    before: MatrixSnapshot, after: MatrixSnapshot, groups: Iterable[str]
) -> set[str]:
    """The people a group change may give new principals: the owners of the added members,
    or everyone with an alias when a group was added to a group (nesting reaches anyone)."""
    added: set[str] = set()
    for group in groups:
        added |= after.group_members.get(group, frozenset()) - before.group_members.get(
            group, frozenset()
        )
    if not added:
        return set()
    if any(":group:" in member for member in added):
        return set(after.aliases)
    return {p for p, aliases in after.aliases.items() if aliases & added}


def _source_gains(
    conn: Connection,
    before: MatrixSnapshot,
    after: MatrixSnapshot,
    people: Iterable[str],
    instants: list[datetime],
) -> list[WalledChange]:
    walled = sorted(m for m in after.matters if _walled(after, m))
    out: list[WalledChange] = []
    for person_id in sorted(people):
        new = after.principals(person_id) - before.principals(person_id)
        if not new:
            continue
        seen = [m for m in walled if any(after.may_access(person_id, m, t) for t in instants)]
        out.extend(
            WalledChange(person_id, matter_id, "gains", "source")
            for matter_id in repo.matters_granting_principals(conn, seen, new)
        )
    return out


def review(
    conn: Connection,
    before: MatrixSnapshot,
    *,
    moved_matters: Iterable[str],
    reparented: Iterable[str],
    team_matters: Iterable[str],
    alias_people: Iterable[str],
    activated: Iterable[str] = (),
    groups: Iterable[str] = (),
    now: datetime,
    lookback_days: int,
) -> WalledAccessReview:
    """Compare the walled access of ``before`` with the matrix as written now."""
    after = load_snapshot(conn, full=True)
    activated = set(activated)
    instants = _instants(before, after, now)
    pairs = list(
        dict.fromkeys(
            [
                *_moved_pairs(before, after, moved_matters, reparented),
                *_team_pairs(before, after, team_matters),
                *_activated_pairs(before, after, activated),
            ]
        )
    )
    found: dict[tuple[str, str], WalledChange] = {}
    for at in instants:
        for change in exposure.access_changes(before, after, pairs, at):
            key = (change.person_id, change.matter_id)
            found.setdefault(key, WalledChange(*key, change.change, "walls"))
    result = WalledAccessReview(list(found.values()))
    people = set(alias_people) | set(activated) | _reached_by_groups(before, after, groups)
    for gain in _source_gains(conn, before, after, people, instants):
        if (gain.person_id, gain.matter_id) not in found:
            result.changes.append(gain)
    result.exposure = _exposure_of_losses(conn, after, result.changes, now, lookback_days)
    return result


def _exposure_of_losses(
    conn: Connection,
    after: MatrixSnapshot,
    changes: list[WalledChange],
    now: datetime,
    lookback_days: int,
) -> dict[str, dict[str, Any]]:
    """Per wall that now denies someone a matter: who already read those matters and is
    denied by that wall (the report issuing a wall makes)."""
    by_wall: dict[str, set[str]] = {}
    for change in changes:
        if change.change != "loses":
            continue
        for wall_id in after.walls_by_matter.get(change.matter_id, ()):
            wall = after.walls[wall_id]
            if after.wall_denies(wall, change.person_id):
                by_wall.setdefault(wall_id, set()).add(change.matter_id)
    out: dict[str, dict[str, Any]] = {}
    for wall_id, matters in sorted(by_wall.items()):
        report = exposure.exposure(
            conn,
            wall_id,
            matters,
            now=now,
            lookback_days=lookback_days,
            snapshot=lambda: after,
        )
        out[wall_id] = exposure.summary(report, lookback_days)
    return out
