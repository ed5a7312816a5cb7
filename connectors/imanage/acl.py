"""iManage security (docs/dms-apis.md §1.4) as a SourceAcl.

Default security (public/view/private, or inherit), explicit ACL entries with an access level,
the Sync API's denied trustees, and Security Policy Manager restrictions that the ACL only
hints at (``has_restricted_member`` on a group).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from app.types import principal_key
from connectors.base import DefaultAccess, SourceAcl
from connectors.dms.acl import AclDraft, principal_name
from connectors.http.lenient import as_text, has_key, pick

if TYPE_CHECKING:
    from connectors.imanage.containers import ContainerDenies

SOURCE = "imanage"

# (library, versioned document id, group id) -> the group's members that Security Policy
# Manager restricts on this document, as principals; None when that cannot be known.
RestrictedMemberResolver = Callable[[str, str, str], frozenset[str] | None]

_GRANTS = GRANTS = frozenset({"read", "read_write", "full_access", "change_security"})
_LEVEL_BY_NUMBER = {0: "no_access", 1: "read", 2: "read_write", 3: "full_access"}
_DEFAULTS: dict[str, DefaultAccess] = {"public": "public", "view": "view", "private": "private"}


def principal(kind: str, ident: str) -> str:
    return principal_name(SOURCE, kind, ident)


_KIND_KEYS = ("type", "trustee_type", "member_type")


def _valued(entry: Mapping[str, Any], key: str) -> bool:
    return bool((as_text(pick(entry, key)) or "").strip())


def _trustee(entry: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(kind, id). Without a type the kind is the one of the id key that holds a value: a
    serialiser writes both keys, one empty, and a user's deny read as a group's was lost (a
    review); both holding one is no kind."""
    kind = (as_text(pick(entry, *_KIND_KEYS)) or "").strip().lower()
    if kind not in ("user", "group"):
        group, user = _valued(entry, "group_id"), _valued(entry, "user_id")
        kind = "group" if group and not user else "user" if user and not group else ""
    keys = (
        ("trustee_id", f"{kind}_id", "id", "user_id", "group_id") if kind else ("trustee_id", "id")
    )
    ident = as_text(pick(entry, *keys))
    if not ident or not ident.strip():
        return (kind or None), None
    return (kind or None), ident.strip()


def _restricted(entry: Mapping[str, Any]) -> bool:
    """``has_restricted_member`` in any spelling (hasRestrictedMember, ...), any value but a
    plain no (False, 0, "0", "false", "") counting as yes: it only narrows (a review)."""
    for key, value in entry.items():
        if str(key).replace("_", "").lower() == "hasrestrictedmember":
            if value is None or value is False or value == 0:
                continue
            if isinstance(value, str) and value.strip().lower() in ("", "0", "false", "no", "n"):
                continue
            return True
    return False


def _level(entry: Mapping[str, Any]) -> str | None:
    raw = pick(entry, "access_level", "access", "role", "rights")
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return _LEVEL_BY_NUMBER.get(raw)
    if isinstance(raw, str):
        text = raw.strip().lower()
        if text.isdigit():
            return _LEVEL_BY_NUMBER.get(int(text))
        return text or None
    return None


def resolve_default(
    default_security: object, inherited: object = None
) -> tuple[DefaultAccess, str | None]:
    raw = (as_text(default_security) or "").strip().lower()
    if raw == "inherit":
        raw = (as_text(inherited) or "").strip().lower()
    if raw in _DEFAULTS:
        return _DEFAULTS[raw], None
    # Unknown or unresolved inheritance: "private" still honours every explicit grant and
    # admits nobody else, the narrowest reading that is not "nobody at all".
    return "private", f"default_security {default_security!r} unresolved; treated as private"


def build_acl(
    *,
    library: str,
    document_id: str,
    default_security: object,
    inherited_default: object = None,
    entries: Iterable[Mapping[str, Any]] = (),
    denied: Iterable[Mapping[str, Any]] = (),
    implicit_users: Iterable[str] = (),
    resolver: RestrictedMemberResolver | None = None,
) -> SourceAcl:
    """Normalize iManage security (docs/dms-apis.md §1.4) into a SourceAcl.

    * ``no_access`` entries and Sync API denied trustees are denies; deny wins at query time.
    * ``read`` and stronger grant read. An access level we do not know makes the document
      unresolvable: reading an unknown level as a grant could leak, reading it as nothing
      could drop a deny.
    * A group grant with ``has_restricted_member`` (Security Policy Manager restricts some
      members, who are not named): the restricted members come from ``resolver``; when they
      cannot be resolved the whole document is unresolvable (visible to nobody). Dropping only
      the group's grant would NOT fail closed: SPM denies a restricted user regardless of any
      other route (another group, an individual grant, public/view default security), and we
      cannot tell which users to deny.
    * Author and operator always reach their private documents (docs/dms-apis.md §1.4).
    """
    default, default_note = resolve_default(default_security, inherited_default)
    draft = AclDraft(notes=[default_note] if default_note else [])
    for entry in entries:
        kind, ident = _trustee(entry)
        level = _level(entry)
        if kind is None or ident is None:
            if level in _GRANTS:
                draft.notes.append("grant without a usable trustee skipped")
            else:
                draft.unresolvable("deny or unknown entry without a usable trustee")
            continue
        name = principal(kind, ident)
        if level == "no_access":
            draft.deny.add(name)
        elif level in _GRANTS:
            if kind == "group" and _restricted(entry):
                restricted = resolver(library, document_id, ident) if resolver else None
                if restricted is None:
                    draft.unresolvable(
                        f"group {ident.lower()} has members restricted by Security "
                        "Policy Manager that cannot be resolved"
                    )
                    continue
                draft.deny.update(principal_key(p) for p in restricted)
            draft.allow.add(name)
        else:
            draft.unresolvable(f"unknown access level {level!r} for {name}")
    for entry in denied:
        kind, ident = _trustee(entry)
        if kind is None or ident is None:
            draft.unresolvable("denied trustee without a usable id")
            continue
        draft.deny.add(principal(kind, ident))
    for user in implicit_users:
        if user and user.strip():
            draft.allow.add(principal("user", user))
    return draft.build(default)


_ENTRY_KEYS = frozenset({"acl", "access_list", "permissions"})
# A server that lists users and groups apart: the key names the kind of a row that has none.
_KIND_BY_KEY = {"users": "user", "groups": "group"}
# Other keys whose name speaks of access, or of denies: a list there that we cannot read
# fails closed ("denied_users": ["BOB"] must not be skipped), as does an object under a deny.
_ACCESS_WORDS = re.compile(r"acl|access|permission|trustee|den(y|ied)|users|groups|members")
_DENY_WORDS = re.compile(r"den(y|ied|ial)|block|exclu|restrict|no_?access|forbid|prohibit")


def acl_entries(security: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The explicit entries of a /security answer, under every one of their key names (an
    empty "acl" beside a full "permissions" must not hide it; "users" and "groups" lists).
    Under any other key a row is never a grant: its denies count ("no_access", or any row of
    a list named for denies), and a level we do not know makes the document unresolvable.
    None when an entry list, or a list about access, or an object under a deny's name, is in
    a shape we cannot read (an object, a string, a list of strings): a deny there would be
    lost."""
    entries: list[dict[str, Any]] = []
    for key, rows in security.items():
        name = str(key).lower()
        if rows is None:
            continue
        readable = isinstance(rows, list) and all(isinstance(r, dict) for r in rows)
        if name in _ENTRY_KEYS or name in _KIND_BY_KEY:
            if not readable:
                return None
            kind = _KIND_BY_KEY.get(name)
            entries.extend(
                r if kind is None or has_key(r, *_KIND_KEYS, "user_id", "group_id")
                else {**r, "type": kind}
                for r in rows
            )
        elif readable:
            denies = _DENY_WORDS.search(name) is not None
            for row in rows:
                level = _level(row)
                if level is None and denies:
                    entries.append({**row, "access_level": "no_access"})
                elif level is not None and level not in _GRANTS:
                    entries.append(row)  # a deny, or a level we do not know (unresolvable)
        elif rows and (
            (isinstance(rows, list) and (_ACCESS_WORDS.search(name) or _DENY_WORDS.search(name)))
            or (isinstance(rows, dict) and _DENY_WORDS.search(name))
        ):
            return None
    return entries


TrusteeRows = dict[tuple[str, int], list[dict[str, Any]]]  # by document key


@dataclass(frozen=True)
class Trustees:
    """A library's trustee rows from the Sync API and when their reading began. A document
    whose profile changed since (less the overlap) takes its rules from its own security
    (I7) plus these denies: rows read before a change could pair old grants with a new
    profile. ``containers``: the denies of the workspaces and folders documents sit in
    (`connectors.imanage.containers`). ``fenced``: why no document's denies can be known
    (a denied row that names no document: it could be any one's)."""

    allowed: TrusteeRows
    denied: TrusteeRows
    read_at: datetime
    containers: ContainerDenies | None = None
    fenced: str | None = None

    def denies(self, key: tuple[str, int], workspace: object) -> tuple[list[dict[str, Any]],
                                                                       str | None]:
        """The document's denied rows and those of every container it sits in; or, with no
        rows, why its denies cannot be known (it is then unresolvable)."""
        if self.fenced is not None:
            return [], self.fenced
        own = self.denied.get(key, [])
        if self.containers is None:
            return own, None
        inherited, fenced = self.containers.for_document(key, workspace)
        return [*own, *inherited], fenced
