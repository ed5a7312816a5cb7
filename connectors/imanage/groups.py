"""iManage group membership (I16 lists, or the Sync API's ``groups/members/search`` rows) as
principals, nested groups included (`connectors.dms.members`).

connectors.md says neither that a member can be a group nor that it cannot, and gives member
rows no kind. A row whose ``type`` says ``group`` names a nested group; one that says
something else, or an untyped member id that is also the id of a group of the tenant (a user
or a group: which one is not said), leaves the holding group unknown (None): a deny of it
admits nobody, a grant through it nobody. Nested groups are never read apart: every group of
the library is listed on its own, and one that is not leaves its holders incomplete (fail
closed in the matrix).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.types import principal_key
from connectors.dms.members import Member, member_kind, walk_groups
from connectors.http.lenient import as_text, pick
from connectors.imanage.acl import SOURCE

SYNC_MEMBER_KEYS = ("user_id", "member_id", "userId", "id")  # a Sync row's member
LIST_MEMBER_KEYS = ("id", "user_id")  # a row of .../groups/{id}/members

_Row = tuple[Mapping[str, Any], tuple[str, ...]]  # (member row, the keys of its member id)


class Memberships:
    """Member rows by group (its id in `principal_key`'s form), turned into principals once
    every group of the tenant is known."""

    def __init__(self) -> None:
        self.rows: dict[str, list[_Row] | None] = {}

    def group(self, gid: object) -> str | None:
        """Registers a group (empty until rows come); its key, or None for a blank id."""
        text = (as_text(gid) or "").strip()
        if not text:
            return None
        key = principal_key(text)
        self.rows.setdefault(key, [])  # one whose rows failed stays unknown
        return key

    def add(self, key: str, row: Mapping[str, Any], keys: tuple[str, ...]) -> None:
        rows = self.rows.get(key)
        if rows is not None:
            rows.append((row, keys))

    def unknown(self, key: str) -> None:
        self.rows[key] = None

    def resolve(self, warn: Callable[[str], None]) -> dict[str, frozenset[str] | None]:
        groups = frozenset(self.rows)

        def members_of(_gid: str, item: _Row) -> list[Member] | None:
            row, keys = item
            ident = (as_text(pick(row, *keys)) or "").strip()
            if not ident:
                return []  # a row that names no member adds none
            kind = member_kind(row, ident, lambda i: None if principal_key(i) in groups else False)
            return None if kind is None else [(kind, ident)]

        return walk_groups(SOURCE, sorted(self.rows), self.rows.get, members_of,
                           follow=lambda _gid: False, warn=warn)  # fmt: skip
