"""The end of a sync: the source's group memberships, for access lists that name groups.

A source's whole membership is synced at once (`Pipeline.sync_groups`): a group it lacks
(every group, when the listing could not be read, or when the feature is off on this tenant)
is forgotten, and a deny naming it admits nobody until a sync reads it again (fail closed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from connectors.base import SourceGroup
from connectors.http import ConnectorError, CredentialsError

if TYPE_CHECKING:
    from connectors.sync import _SyncRun


def sync_groups(sync: _SyncRun) -> None:
    """Read the source's groups and hand them to the pipeline; the report says how many
    (``groups``: None when they could not be read)."""
    if not sync.caps.permissions:
        return
    sync.phase = "groups"
    try:
        groups: list[SourceGroup] | None = list(sync.origin.groups())
    except CredentialsError:
        raise
    except ConnectorError as exc:
        sync.error(None, f"group membership not read, its groups forgotten: {exc}")
        groups = None
    sync.collect_warnings()
    if not groups and (groups is None or sync.origin.warnings()):
        groups = None  # unreadable, or the feature is off on this tenant
    # the source's whole membership: a group it lacks (every group, when it could not be
    # read) is forgotten, and a deny naming it admits nobody until it is read again
    sync.pipeline.sync_groups(sync.run, groups or [], sync.started_by, source=sync.source)
    sync.summary["groups"] = None if groups is None else len(groups)
