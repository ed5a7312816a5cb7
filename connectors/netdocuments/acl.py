"""NetDocuments permissions (docs/dms-apis.md §2.3) as a SourceAcl.

The document's access list (V/E/S/A grant read, N denies and beats everything), plus
profile-based security: ``N`` rows of a lookup table (usually Matter) whose key is the
document's value of that attribute. Principals are ``U:email`` users, ``UG-`` groups, ``NG-``
cabinets used as principals, or group names (profile-based security writes names).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from app.types import principal_key
from connectors.base import SourceAcl
from connectors.dms.acl import AclDraft, principal_name
from connectors.dms.members import Member, member_kind
from connectors.http.errors import ConnectorError
from connectors.http.lenient import as_text, pick

SOURCE = "netdocuments"
_GRANT_LETTERS = frozenset("VESA")
_KNOWN_LETTERS = frozenset("VESAN")


def principal(kind: str, ident: str) -> str:
    return principal_name(SOURCE, kind, ident)


GroupsByName = Mapping[str, str | tuple[str, ...]]  # a name shared by groups: all their ids


def _principals_of(who: str, kind: str | None, groups_by_name: GroupsByName) -> tuple[str, ...]:
    """``U:email`` and ids with an ``@`` are users; ``UG-`` ids are groups; ``NG-`` (a
    cabinet used as a principal) is kept as a group; anything else is tried as a group name
    (profile-based security writes group names, S9): every group of that name. Empty when
    it cannot be placed."""
    text = who.strip()
    if not text:
        return ()
    prefixed = text[:2].upper() == "U:"
    # a typed user entry may carry the prefix too (a review: "U:x" kept it)
    user = (principal("user", text[2:]),) if prefixed and text[2:].strip() else ()
    if kind == "user":
        return user if prefixed else (principal("user", text),)
    if kind == "group":
        return (principal(kind, text),)
    # a group may be named like an id or an address: such a name stands for both readings
    # (a deny denies both; a grant, two principals, admits neither; a review)
    ids = groups_by_name.get(principal_key(text)) or ()
    named = tuple(principal("group", i) for i in ((ids,) if isinstance(ids, str) else ids))
    if prefixed:
        return user + named
    if text[:3].upper() in ("UG-", "NG-"):
        return tuple(dict.fromkeys((principal("group", text), *named)))
    if "@" in text:
        return (principal("user", text), *named)
    return named


_FLAGS = (("view", "V"), ("edit", "E"), ("share", "S"), ("administer", "A"), ("noAccess", "N"))


def _rights(entry: Mapping[str, Any]) -> str | None:
    """The entry's letters: its rights string and the membership shape's flags (N20, one
    boolean per right, JSON or string) together. None when it says nothing readable of its
    rights (no rights, a list, a flag neither true nor false): the caller fails closed, where
    such an entry was skipped and a deny in it lost (a review)."""
    raw = pick(entry, "rights", "Rights", "access", "Access", "level", "accessLevel")
    if raw is not None and not isinstance(raw, str | int):
        return None
    letters = "" if raw is None else str(raw).strip().upper()
    said = raw is not None
    for name, letter in _FLAGS:
        value = pick(entry, name)
        if value is None:
            continue
        flag = str(value).strip().lower() if isinstance(value, bool | str) else None
        if flag not in ("true", "false"):
            return None
        said = True
        letters += letter if flag == "true" else ""
    return letters if said else None


def profile_parts(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """``Litigation|VES*Estate|V*U:john.smith@firm.com|N`` -> ([(who, LEVELS), ...], the
    parts that could not be read: no ``|``, no one, no levels or letters other than VESAN,
    a ``|`` left in the name (another separator)). Empty parts are nothing."""
    out, unread = [], []
    for part in (p.strip() for p in text.split("*")):
        if not part:
            continue
        who, sep, levels = part.rpartition("|")
        who, levels = who.strip(), levels.strip().upper()
        if not sep or not who or "|" in who or not levels or set(levels) - _KNOWN_LETTERS:
            unread.append(part)
        else:
            out.append((who, levels))
    return out, unread


def build_acl(
    entries: Iterable[Mapping[str, Any]],
    *,
    profile_access: Iterable[str] = (),
    groups_by_name: GroupsByName | None = None,
) -> SourceAcl:
    """Document access list plus profile-based denies -> SourceAcl (default private).

    Any of V/E/S/A grants read; N denies and, being a deny, beats every grant at query time.
    A deny we cannot attribute to a principal makes the document unresolvable (visible to
    nobody): dropping it would widen access. An unplaceable grant is only skipped.
    From profile-based security only the N rows are taken: its grants are applied to the
    document's own access list when it is profiled, and a matter is a filter, never a grant.
    """
    names = groups_by_name or {}
    draft = AclDraft()
    for entry in entries:
        who = as_text(pick(entry, "principal", "Principal", "principalId", "id", "guid")) or ""
        kind = (as_text(pick(entry, "type", "principalType")) or "").strip().lower() or None
        rights = _rights(entry)
        if rights is None:
            draft.unresolvable(f"rights of {who!r} unreadable")
            continue
        letters = set(rights)
        found = _principals_of(who, kind, names)
        if letters - _KNOWN_LETTERS:
            draft.unresolvable(f"unknown rights {''.join(sorted(letters))!r} for {who!r}")
            continue
        if "N" in letters:
            if not found:
                draft.unresolvable(f"no-access entry for unknown principal {who!r}")
            draft.deny.update(found)  # a name several groups share denies them all
        elif letters & _GRANT_LETTERS:
            if len(found) == 1:
                draft.allow.update(found)
            else:  # unknown, or a name several groups share: which one is meant is unknown
                draft.notes.append(f"grant to unknown or ambiguous principal {who!r} skipped")
    for access in profile_access:
        parts, unread = profile_parts(access)
        for part in unread:  # it may have been a deny
            draft.unresolvable(f"matter access part {part!r} unreadable")
        for who, levels in parts:
            if "N" not in levels:
                continue
            found = _principals_of(who, None, names)
            if not found:
                draft.unresolvable(f"matter no-access row for unknown principal {who!r}")
            draft.deny.update(found)
    return draft.build("private")


def is_group_id(ident: str, listed: Iterable[str] = ()) -> bool:
    """``UG-`` (a group), ``NG-`` (a cabinet, which the repository uses as a group) or an
    id the cabinets' group listing names."""
    text = ident.strip()
    return text[:3].upper() in ("UG-", "NG-") or principal_key(text) in listed


def group_member(listed: frozenset[str], row: Mapping[str, Any]) -> list[Member] | None:
    """What one row of ``/v1/Group/{id}/members`` (N22: ``{id, displayName}``, no kind) names.
    A nested group is named as a group (by its id; see `connectors.dms.members`); a user by
    email and by id, since access lists name users by email (``U:``) and membership lists by
    id. None when the row's kind cannot be told (a type we do not know, a group without an
    id): the group's members are then unknown."""
    ident = (as_text(pick(row, "id", "Id")) or "").strip()
    kind = member_kind(row, ident, lambda i: is_group_id(i, listed))
    if kind is None or (kind == "group" and not ident):
        return None
    if kind == "group":
        return [("group", ident)]
    emails = (as_text(pick(row, "email", "Email")) or "").strip()
    return [("user", v) for v in dict.fromkeys((emails, ident)) if v]


@dataclass
class LookupTable:
    """Profile-based security rows of one lookup attribute (N5) of one cabinet.

    ``readable`` is False when the table could not be read completely: then a document
    profiled with a value of this attribute is visible to nobody (a missing ``|N`` row would
    otherwise fail open)."""

    attribute: int
    readable: bool
    rows: list[tuple[str | None, str | None, str]]  # (parent, key, access) normalized
    reason: str | None = None

    def access_for(self, value: str | None, parent: str | None) -> list[str]:
        if not value:
            return []
        # Matter numbers repeat across clients: a row with a parent must match the client.
        # Without a parent value (a document without client, an attribute whose parent is
        # not read) every row of the key applies: only their denies are taken (narrower;
        # such rows were skipped, their denies lost, a review).
        return [
            access
            for row_parent, key, access in self.rows
            if key == value and (row_parent is None or parent is None or row_parent == parent)
        ]


def parse_profile_security(text: str) -> list[str | int]:
    """``"matter"``, ``"client"``, attribute numbers (1001 or 1), comma-separated."""
    out: list[str | int] = []
    for part in (p.strip().lower() for p in text.split(",")):
        if not part:
            continue
        if part in ("matter", "client"):
            out.append(part)
        elif part.isdigit():
            number = int(part)
            out.append(number - 1000 if number > 1000 else number)
        else:
            raise ConnectorError(
                f"netdocuments: EWALL_NETDOCUMENTS_PROFILE_SECURITY entry "
                f"{part!r} is not matter, client or an attribute number"
            )
    return out
