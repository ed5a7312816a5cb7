"""A source's group memberships into the conflict matrix (`IngestPipeline.sync_groups`).

Document access lists name groups (an iManage group, a NetDocuments ``UG-``); the people in
them come from the source's own membership listing, synced whole: a group the listing lacks,
or gives without members, is forgotten, and a deny naming a group whose members ewall does not
hold admits nobody (fail closed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection

from app.ingest import repository
from app.matrix.service import apply_matrix, group_imports
from connectors.base import SourceGroup

# An entry of the run's report in the caller's transaction: (kind, source, external id,
# reason, details), as `IngestPipeline.record_event` takes them after its connection and run.
Record = Callable[[str, str | None, str | None, str | None, dict[str, Any] | None], None]


def sync_groups(
    conn: Connection, record: Record, groups: list[SourceGroup], actor: str, source: str
) -> None:
    """``groups``: the source's whole membership as just read (empty when it could not be
    read): its groups not listed, or listed without members, are forgotten."""
    imports, forget, refused = group_imports((g.source, g.group_id, g.members) for g in groups)
    if refused:
        record(
            "warning", source, None,
            f"{len(refused)} group(s) the matrix cannot hold, unknown (their denies "
            f"admit nobody): {', '.join(repr(r) for r in refused[:20])}", None,
        )  # fmt: skip
    # the source's own membership, synced; group changes are not reviewed
    result = apply_matrix(conn, actor=actor, source_groups=imports, forget_groups=forget,
                          whole_source=source.lower(), action="groups.sync",
                          may_widen_walls=True)  # fmt: skip
    if result.changed:
        record("groups_synced", None, None, None, {
            "groups": len(groups), "policy_version": result.policy_version})  # fmt: skip
    unknown = repository.unknown_denied_groups(conn, source.lower())
    if unknown:  # fail closed, and said: nobody sees what denies them
        record(
            "warning", source, None,
            f"{len(unknown)} group(s) that access lists deny have no members ewall "
            f"holds; documents denying them are visible to nobody: {', '.join(unknown)}", None,
        )  # fmt: skip
