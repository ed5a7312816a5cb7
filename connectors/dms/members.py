"""A source group's members as principals: users, and groups nested in it.

A group may hold another group (connectors.md does not rule it out for either vendor, and its
member rows need not say which a member is). The matrix expands nesting at query time
(``app.walls.graph``: a person in an inner group is in every group holding it), so a nested
group must be named as a group: read as a user id it matches nobody, and a deny of the outer
group lapsed for the inner group's members (fail open). A nested group whose members ewall does
not hold makes every group holding it incomplete, and a deny of those admits nobody
(sql/walls.sql), so a nested group that cannot be read fails closed by itself. A member whose
kind cannot be told (a type we do not know, an id that names a user and a group alike) leaves
the holding group unknown (None): its denies admit nobody, its grants nobody.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from app.types import principal_key
from connectors.dms.acl import principal_name
from connectors.http.lenient import as_text, pick

Kind = Literal["user", "group"]
Member = tuple[Kind, str]  # (kind, id as the source spells it)
# a member row's kind, under the names vendors give it (the documented rows carry none)
KIND_KEYS = ("type", "member_type", "memberType", "trustee_type", "principal_type", "kind")
R = TypeVar("R")  # a member row, as the connector holds it
MAX_NESTED_READS = 2000  # nested groups read beyond the listed ones; the rest stay unknown


def member_kind(
    row: Mapping[str, Any], ident: str, is_group: Callable[[str], bool | None]
) -> Kind | None:
    """The kind a member row states ("user"/"group", any casing), else ``is_group(ident)``'s
    reading (None: it cannot tell). None for a stated kind we do not know (a role, a contact:
    unknown, not a user) and for an id it cannot place."""
    stated = pick(row, *KIND_KEYS)
    if stated is not None and not (isinstance(stated, str) and not stated.strip()):
        kind = (as_text(stated) or "").strip().lower()
        return "user" if kind == "user" else "group" if kind == "group" else None
    reading = is_group(ident)
    return None if reading is None else "group" if reading else "user"


def walk_groups(
    source: str,
    roots: Iterable[str],
    read: Callable[[str], Sequence[R] | None],
    members_of: Callable[[str, R], list[Member] | None],
    *,
    follow: Callable[[str], bool],
    warn: Callable[[str], None],
    limit: int = MAX_NESTED_READS,
) -> dict[str, frozenset[str] | None]:
    """Every group in ``roots`` and every group nested in them at any depth, each read once
    (a cycle ends): id (`principal_key`) -> member principals, None when unknown (its rows could not
    be read, or a member's kind cannot be told). ``read(gid)``: the rows, None when unread;
    ``members_of(gid, row)``: the members a row names, None when its kind is unknown;
    ``follow(gid)``: whether a nested group's members can be read (a cabinet cannot). A
    nested group not read (not followed, past ``limit``) is simply absent: the matrix then
    holds its holders incomplete (fail closed)."""
    todo: deque[str] = deque()
    seen: set[str] = set()
    for root in (r.strip() for r in roots):
        if root and principal_key(root) not in seen:
            seen.add(principal_key(root))
            todo.append(root)
    listed = len(todo)
    out: dict[str, frozenset[str] | None] = {}
    while todo:
        gid = todo.popleft()
        rows = read(gid)
        if rows is None:
            out[principal_key(gid)] = None
            continue
        found: set[str] = set()
        named = [members_of(gid, row) for row in rows]
        if any(members is None for members in named):
            warn(f"{source}: group {gid} has a member of a kind we cannot tell; its members "
                 "are unknown (its denies admit nobody)")  # fmt: skip
            out[principal_key(gid)] = None
            continue
        for members in named:
            for kind, ident in members or ():
                found.add(principal_name(source, kind, ident))
                key = principal_key(ident)
                if kind != "group" or key in seen or not follow(ident):
                    continue
                seen.add(key)
                if len(seen) - listed > limit:
                    warn(f"{source}: more than {limit} nested groups; group {ident} not read "
                         "(denies of groups holding it admit nobody)")  # fmt: skip
                    continue
                todo.append(ident.strip())
        out[principal_key(gid)] = frozenset(found)
    return out
