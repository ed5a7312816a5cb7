"""Denies set on workspaces and folders, applied to the documents filed in them.

Security Policy Manager restricts users and groups on a container "regardless of any explicit
Work permission", and its exclusions are not in a document's ACL (docs/dms-apis.md §1.4).
The Sync API lists each container's denied trustees (``containers/security/denied-trustees/
search``, rows keyed by ``container_id`` or ``folder_id``; [O] S4, connectors.md §1.4). A
document takes the denies of every container it sits in: each parent that
``documents/parents/search`` names (``document_number``, ``parent_id``), the workspace its
profile names (``workspace_id``), and every ancestor of those up the tree that
``folders/crawl`` and ``workspaces/crawl`` give (``id``, ``parent_id``, ``workspace_id``).
Filed in several folders, it takes the union. Container grants are not read: a document's own
security governs grants; only denies propagate.

Failing closed, in order of reach:

* the denied list absent on the tenant (404/405/501 on its first page; the lists are [O]):
  container denies are off, with a warning; the rules are those of the documents' lists.
* any list that cannot be read whole (another status, paging that breaks, an absent endpoint
  after its first page) raises, as a failed read of the documents' trustee lists does: the
  walk fails and nothing stored gains access.
* when the library has container denies: the parents map or the tree absent, a deny row that
  names no container, or a parents row without a document whose parent may carry a deny
  (we cannot tell which document it is): every document of the library is unresolvable.
* a document in a container the tree does not hold, or under one whose chain of parents meets
  an unknown parent or a cycle, or with a parents row that names no parent: unresolvable.
* a deny row whose trustee cannot be named: unresolvable (`build_acl`, as for a document's).

Without container denies in a library only the denied list is read (one request for a quiet
library); the map and the tree are read only where a deny could apply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from connectors.http.errors import CredentialsError, SourceHTTPError
from connectors.http.lenient import as_text, pick
from connectors.imanage.acl import TrusteeRows, Trustees
from connectors.imanage.client import (
    SYNC_ALLOWED,
    SYNC_CONTAINER_DENIED,
    SYNC_DENIED,
    SYNC_FOLDERS,
    SYNC_PARENTS,
    SYNC_WORKSPACES,
    IManageClient,
)
from connectors.imanage.profile import doc_key

Rows = list[dict[str, Any]]
ABSENT_STATUSES = frozenset({404, 405, 501})  # as for I7 (connector._acl): no such endpoint
_CONTAINER_KEYS = ("container_id", "containerId", "folder_id", "folderId", "workspace_id",
                   "workspaceId")
_PARENT_KEYS = ("parent_id", "parentId", "container_id", "folder_id")
_NONE: frozenset[str] = frozenset()


def container_id(value: object, lib: str) -> str | None:
    """A container id in one spelling: ``LIB!number`` (a bare number is of ``lib``), else the
    text upper-cased; None when there is none."""
    text = (as_text(value) or "").strip()
    if not text:
        return None
    if text.isdigit():
        return f"{lib.upper()}!{int(text)}"
    head, sep, tail = text.partition("!")
    if sep and tail.strip().isdigit():
        return f"{head.strip().upper()}!{int(tail)}"
    return text.upper()


def _first(row: Mapping[str, Any], names: tuple[str, ...], lib: str) -> str | None:
    """The first of ``names`` that holds a container id (a key present but empty is passed
    over: a serialiser writes ``folder_id: null`` beside a ``container_id``)."""
    for name in names:
        found = container_id(pick(row, name), lib)
        if found is not None:
            return found
    return None


def _document(row: Mapping[str, Any], lib: str) -> tuple[str, int] | None:
    return doc_key(pick(row, "document_id", "documentId", "doc_id"), lib) or doc_key(
        pick(row, "document_number", "documentNumber"), lib)


def by_document(rows: Rows, lib: str) -> TrusteeRows:
    """A document list's trustee rows by document key; keyed by number where no id is given
    (S4's rows; a review found such a deny lost)."""
    grouped: TrusteeRows = {}
    for row in rows:
        key = _document(row, lib)
        if key is not None:
            grouped.setdefault(key, []).append(row)
    return grouped


@dataclass(frozen=True)
class ContainerDenies:
    """One library's container denies, placed: ``denied`` by container, ``parents`` by
    document, ``above[c]``: the denied containers among ``c`` and its ancestors, or why they
    cannot be known. ``fenced``: why no document of the library can be placed."""

    denied: dict[str, Rows] = field(default_factory=dict)
    parents: dict[tuple[str, int], set[str]] = field(default_factory=dict)
    unplaced: dict[tuple[str, int], str] = field(default_factory=dict)
    above: dict[str, frozenset[str] | str] = field(default_factory=dict)
    fenced: str | None = None

    def for_document(self, key: tuple[str, int], workspace: object) -> tuple[Rows, str | None]:
        """The denied rows of every container the document sits in, or (no rows, why the
        document is unresolvable)."""
        if self.fenced is not None:
            return [], self.fenced
        if not self.denied:
            return [], None
        if key in self.unplaced:
            return [], self.unplaced[key]
        places = set(self.parents.get(key, ()))
        profile_workspace = container_id(workspace, key[0])
        if profile_workspace is not None:
            places.add(profile_workspace)
        rows: Rows = []
        for place in sorted(places):
            above = self.above.get(place)
            if above is None:
                return [], f"filed in container {place}, which the folder and workspace lists " \
                    "do not hold: its container denies cannot be known"
            if isinstance(above, str):
                return [], above
            for denied in sorted(above):
                rows.extend(self.denied[denied])
        return rows, None


def _read(client: IManageClient, lib: str, endpoint: str, limit: int,
          on_restart: Callable[[str], None]) -> Rows | SourceHTTPError:
    """Every row of one Sync endpoint (`IManageClient.sync_all`), or the error of a first
    page that says the tenant has no such endpoint. Any other failure raises."""
    listing = client.sync_listing(lib, endpoint, limit)
    try:
        rows = listing.all()
    except CredentialsError:
        raise
    except SourceHTTPError as exc:
        if listing.pages_read or listing.restarts or exc.status not in ABSENT_STATUSES:
            raise
        return exc
    for _ in range(listing.restarts):
        on_restart(endpoint)
    return rows


def _warn(warnings: list[str], text: str) -> None:
    if text not in warnings:
        warnings.append(text)


def read_container_denies(client: IManageClient, lib: str, limit: int,
                          on_restart: Callable[[str], None],
                          warnings: list[str]) -> ContainerDenies:
    """A library's container denies (see the module's doc for what fails closed)."""
    rows = _read(client, lib, SYNC_CONTAINER_DENIED, limit, on_restart)
    if isinstance(rows, SourceHTTPError):
        _warn(warnings, f"imanage: library {lib}: container denies not available on this tenant "
              f"(HTTP {rows.status} from {rows.path}); denies set on workspaces and folders "
              "(Security Policy Manager) are not applied")
        return ContainerDenies()
    if not rows:
        return ContainerDenies()
    denied: dict[str, Rows] = {}
    for row in rows:
        place = _first(row, _CONTAINER_KEYS, lib)
        if place is None:
            return _fenced(warnings, lib, "a container deny names no container")
        denied.setdefault(place, []).append(row)
    lists: list[Rows] = []
    for endpoint in (SYNC_PARENTS, SYNC_FOLDERS, SYNC_WORKSPACES):
        listed = _read(client, lib, endpoint, limit, on_restart)
        if isinstance(listed, SourceHTTPError):
            return _fenced(warnings, lib, f"it has container denies, and {endpoint} is not "
                           f"available (HTTP {listed.status}): where documents sit is unknown")
        lists.append(listed)
    parent_rows, folder_rows, workspace_rows = lists
    tree: dict[str, set[str]] = {}
    own = ("id", "container_id", "containerId")  # a folder's workspace_id is not its id
    for row, ids in [*((r, (*own, "folder_id", "folderId")) for r in folder_rows),
                     *((r, (*own, "workspace_id", "workspaceId")) for r in workspace_rows)]:
        node = _first(row, ids, lib)
        if node is None:
            continue  # nothing can point at it; its children, if any, meet an unknown parent
        up = tree.setdefault(node, set())
        parent = _first(row, ("parent_id", "parentId"), lib)
        workspace = _first(row, ("workspace_id", "workspaceId"), lib)
        up.update(p for p in (parent, workspace if workspace != node else None) if p)
    above = _above(tree, set(denied))
    parents: dict[tuple[str, int], set[str]] = {}
    unplaced: dict[tuple[str, int], str] = {}
    for row in parent_rows:
        key, parent = _document(row, lib), _first(row, _PARENT_KEYS, lib)
        if key is None:
            if parent is None or above.get(parent, "unknown") != _NONE:
                return _fenced(warnings, lib, "a parents row names no document, and its "
                               "container may carry a deny")
        elif parent is None:
            unplaced[key] = "a parents row names no container: its container denies cannot " \
                "be known"
        else:
            parents.setdefault(key, set()).add(parent)
    broken = sorted(c for c, found in above.items() if isinstance(found, str))
    if broken:
        _warn(warnings, f"imanage: library {lib}: {len(broken)} containers have a chain of "
              f"parents that cannot be followed (e.g. {broken[0]}); their documents are "
              "visible to nobody")
    return ContainerDenies(denied, parents, unplaced, above)


def _fenced(warnings: list[str], lib: str, why: str) -> ContainerDenies:
    _warn(warnings, f"imanage: library {lib}: {why}; its documents are visible to nobody until "
          "a read places them")
    return ContainerDenies(fenced=f"container denies of library {lib} cannot be placed: {why}")


def _above(tree: dict[str, set[str]], denied: set[str]) -> dict[str, frozenset[str] | str]:
    """For every container of ``tree`` (container -> its parents), the denied containers
    among it and its ancestors, or why they cannot be known (a parent the tree does not
    hold, a cycle). An iterative depth-first walk: the containers begun and not finished
    are the path being walked, so meeting one again is a cycle."""
    begun = object()
    state: dict[str, object] = {}
    cyclic: set[str] = set()
    for start in tree:
        stack = [start]
        while stack:
            node = stack[-1]
            seen = state.get(node)
            if seen is None:
                state[node] = begun
                for parent in tree[node]:
                    if state.get(parent) is begun:
                        cyclic.add(node)
                    elif parent in tree and parent not in state:
                        stack.append(parent)
                continue
            stack.pop()
            if seen is begun:
                state[node] = _combine(node, tree, denied, state, cyclic, begun)
    return {node: found for node, found in state.items() if isinstance(found, frozenset | str)}


def _combine(node: str, tree: dict[str, set[str]], denied: set[str], state: dict[str, object],
             cyclic: set[str], begun: object) -> frozenset[str] | str:
    if node in cyclic:
        return f"container {node}: its chain of parents is a cycle"
    found = {node} if node in denied else set()
    for parent in sorted(tree[node]):
        if parent not in tree:
            return f"container {node}: its parent {parent} is in no folder or workspace list"
        upper = state.get(parent)
        if isinstance(upper, str):
            return upper
        if upper is begun or not isinstance(upper, frozenset):
            return f"container {node}: its chain of parents is a cycle"
        found |= upper
    return frozenset(found) if found else _NONE


def read_trustees(client: IManageClient, lib: str, limit: int, read_at: datetime,
                  on_restart: Callable[[str], None], warnings: list[str]) -> Trustees:
    """A library's trustee lists for one walk of it: the documents' allowed and denied lists
    and the container denies, with ``read_at`` (taken before the first read)."""
    def rows(endpoint: str) -> Rows:
        return client.sync_all(lib, endpoint, limit, on_restart=on_restart)

    # a grant that names no document is passed over (that only narrows); a deny is not
    allowed, denied = by_document(rows(SYNC_ALLOWED), lib), rows(SYNC_DENIED)
    unplaced = sum(1 for row in denied if _document(row, lib) is None)
    fenced = None
    if unplaced:
        fenced = f"{unplaced} denied trustee rows of library {lib} name no document"
        _warn(warnings, f"imanage: {fenced}; its documents are visible to nobody until a read "
              "of the lists places every deny")
    return Trustees(allowed, by_document(denied, lib), read_at,
                    read_container_denies(client, lib, limit, on_restart, warnings), fenced)
