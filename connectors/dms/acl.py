"""The bookkeeping every access-list mapping does, whatever the vendor's rights model.

A mapping collects allows and denies under principal names, notes what it skipped, and marks
the document unresolvable (visible to nobody) when something it cannot place could have been
a deny: dropping an unknown deny would widen access.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.types import principal_key
from connectors.base import DefaultAccess, SourceAcl


def principal_name(source: str, kind: str, ident: str) -> str:
    """``source:kind:id`` in the form groups and people are matched under (`principal_key`)."""
    return principal_key(f"{source}:{kind}:{ident.strip()}")


def unresolvable_acl(note: str) -> SourceAcl:
    """Permissions that could not be read: the document is visible to nobody."""
    return SourceAcl(default="private", resolvable=False, note=note)


@dataclass
class AclDraft:
    """Allows, denies and notes gathered while mapping one document's permissions."""

    allow: set[str] = field(default_factory=set)
    deny: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    resolvable: bool = True

    def unresolvable(self, note: str) -> None:
        self.resolvable = False
        self.notes.append(note)

    def build(self, default: DefaultAccess) -> SourceAcl:
        return SourceAcl(
            default=default,
            allow=frozenset(self.allow),
            deny=frozenset(self.deny),
            resolvable=self.resolvable,
            note="; ".join(self.notes) or None,
        )
