"""Which rules of a queued push may stand on the stored version before its job writes it:
only those that admit no one the stored rules did not (app.ingest.document_write._narrows).
A review mutated the rule (a deny dropped, any allow taken) and the end-to-end tests still
passed; these name each case."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import pytest

from app.ingest.document_write import _narrows
from app.ingest.repository import StoredRules
from connectors.base import SourceAcl

INSIDER, OUTSIDER, GROUP = "api:user:in", "api:user:out", "api:group:lit"


Default = Literal["public", "view", "private", "none"]
NONE: frozenset[str] = frozenset()


def stored(default: str, allow: Iterable[str] = NONE, deny: Iterable[str] = NONE,
           resolvable: bool = True) -> StoredRules:  # fmt: skip
    return StoredRules(default, frozenset(allow), frozenset(deny), resolvable)


def acl(default: Default, allow: Iterable[str] = NONE, deny: Iterable[str] = NONE) -> SourceAcl:
    return SourceAcl(default=default, allow=frozenset(allow), deny=frozenset(deny))


@pytest.mark.parametrize(
    ("new", "old", "narrows"),
    [
        # narrower: a deny added, an allow taken away, public made private
        (acl("public", deny={OUTSIDER}), stored("public"), True),
        (acl("private", allow={INSIDER}), stored("private", allow={INSIDER, OUTSIDER}), True),
        (acl("private", allow={INSIDER}), stored("public"), True),
        (acl("view", deny={OUTSIDER, GROUP}), stored("public", deny={OUTSIDER}), True),
        (acl("private", allow={"API:USER:IN"}), stored("private", allow={INSIDER}), True),
        # not narrower: a deny dropped, an allow swapped or added, private opened
        (acl("public"), stored("public", deny={OUTSIDER}), False),
        (acl("private", allow={OUTSIDER}), stored("private", allow={INSIDER}), False),
        (acl("private", allow={INSIDER, OUTSIDER}), stored("private", allow={INSIDER}), False),
        (acl("view"), stored("private", allow={INSIDER}), False),
        (None, stored("private", allow={INSIDER}), False),
        (acl("private", allow={GROUP}), stored("private", allow={INSIDER}), False),
        # stored rules that admit nobody: nothing but nobody narrows them
        (acl("private", allow={INSIDER}), stored("none", resolvable=False), False),
        (acl("private", allow={INSIDER}), stored("private", allow={INSIDER}, resolvable=False),
         False),
    ],
)
def test_only_rules_that_admit_no_one_new_narrow(
    new: SourceAcl | None, old: StoredRules, narrows: bool
) -> None:
    assert _narrows(new, old) is narrows
