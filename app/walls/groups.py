"""Wall groups: matters covered by exactly the same set of non-lifted walls share one.

The id is a hash of the sorted wall ids, so it depends only on the matter's own walls:
issuing an unrelated wall never changes it. When a change moves a matter to another group,
the matter is queued for re-tagging in the same transaction; until its chunks carry the new
group they are invisible to everyone (the search excludes pending matters).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from sqlalchemy import Connection

from app.walls import repository
from app.walls.graph import OPEN_GROUP


def wall_group_id(wall_ids: Iterable[str]) -> str:
    ordered = sorted(set(wall_ids))
    if not ordered:
        return OPEN_GROUP
    digest = hashlib.sha256("\x1f".join(ordered).encode()).hexdigest()
    return f"wg_{digest[:24]}"


def matters_under_clients(conn: Connection, client_ids: Sequence[str]) -> list[str]:
    if not client_ids:
        return []
    return repository.matters_under_clients(conn, client_ids)


def recompute(conn: Connection, matter_ids: Iterable[str], policy_version: int) -> dict[str, str]:
    """Recompute the groups of ``matter_ids``; returns {matter_id: new_group} for those that
    changed (and queues them for re-tagging)."""
    ids = sorted(set(matter_ids))
    if not ids:
        return {}
    wall_sets = repository.matter_wall_sets(conn, ids)
    current = repository.current_groups(conn, ids)
    changed: dict[str, str] = {}
    new_groups: dict[str, list[str]] = {}
    for matter_id, walls in wall_sets.items():
        group = wall_group_id(walls)
        new_groups[group] = sorted(walls)
        if current.get(matter_id) != group:
            changed[matter_id] = group
    if not changed:
        return {}
    repository.ensure_groups(conn, sorted(new_groups.items()))
    matters = sorted(changed)
    repository.set_matter_groups(conn, matters, [changed[m] for m in matters])
    existing = [m for m in matters if m in current]
    if existing:
        repository.queue_retag(conn, existing, [changed[m] for m in existing], policy_version)
    return changed
