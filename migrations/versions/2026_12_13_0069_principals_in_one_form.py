"""Stored source principals in the one form every way in now writes (app.types.principal_key).

Revision ID: 20261213_0069
Revises: 20261212_0068
Create Date: 2026-12-13

Principals are compared as exact strings, in Python and in SQL. Before this revision the
ways in lowered them but did not normalise them: an alias typed "josé" (NFC) and a source's
"jose" + U+0301 (NFD) were two principals, so a deny of one missed the person aliased by the
other. The new code writes one form; this revision brings the stored rows to it, computed
in Python by that function as written then (SQL's lower() follows the collation, not
Python's rules).

Rows that become equal:
* person_aliases (alias is the key): spellings of one alias held by one person become one
  row. Held by two different people, nobody can tell whose source account it is: nothing
  is written and the upgrade stops, naming them (remove the alias from the wrong person,
  then migrate again).
* source_groups (source, group_id) and their members: spellings of one group become one
  group holding every member any of them held, so every deny through it still denies
  whom it denied (a grant through it may now admit more: the report names those groups
  and members; the next membership sync replaces a synced group's members with what the
  source lists). The merged group is sync-owned only when each spelling was.
* source_acls allow/deny: each list normalised and deduplicated; no constraint joins rows
  by their lists. An ACL keeps its id (its rules' old hash): a document's next sync gives
  the new hash, a narrowing-or-equal change that takes effect at once.

Nothing is deleted that does not reappear in the normalised rows. Audit rows and policy
events keep the spellings they recorded. When anything changed, policy_version is bumped
(resolution caches and replicas read the new rows) and the report is logged.

The downgrade changes nothing back: the original spellings are not kept, and the code of
the revision before reads normalised principals as it reads any others.
"""

import logging
import unicodedata
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from alembic import op
from sqlalchemy import Connection, text

revision: str = "20261213_0069"
down_revision: str | None = "20261212_0068"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("alembic.runtime.migration")
SHOWN = 50  # examples a report line names


def principal_key(text: str) -> str:
    """app.types.principal_key as this revision was written (kept here, so that a later
    change of that function cannot change what this revision did)."""
    lowered = unicodedata.normalize("NFC", text.strip()).lower()
    return unicodedata.normalize("NFC", lowered).replace("\u03c2", "\u03c3")


class AliasCollisionError(RuntimeError):
    """One alias, in two spellings, held by two people."""


def _aliases(conn: Connection) -> dict[str, list[tuple[str, str]]]:
    """The aliases to rewrite, by their normalised form: [(stored alias, person)]."""
    by_key: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for alias, person_id in conn.execute(text("SELECT alias, person_id FROM person_aliases")):
        by_key[principal_key(alias)].append((alias, person_id))
    clashes = {
        key: rows for key, rows in by_key.items() if len({person for _, person in rows}) > 1
    }
    if clashes:
        named = "; ".join(
            f"{key!r}: " + ", ".join(f"{a!r} of {p!r}" for a, p in sorted(rows))
            for key, rows in sorted(clashes.items())[:SHOWN]
        )
        raise AliasCollisionError(
            f"{len(clashes)} alias(es) are one principal in two spellings held by different "
            f"people; nothing was changed. Keep each with one person, then migrate again: "
            f"{named}"
        )
    return {key: rows for key, rows in by_key.items() if any(a != key for a, _ in rows)}


def _rewrite_aliases(conn: Connection, changed: dict[str, list[tuple[str, str]]]) -> None:
    for key, rows in changed.items():
        person_id = rows[0][1]
        stale = [a for a, _ in rows if a != key]
        conn.execute(text("DELETE FROM person_aliases WHERE alias = ANY(:a)"), {"a": stale})
        conn.execute(
            text(
                "INSERT INTO person_aliases (alias, person_id) VALUES (:alias, :person_id) "
                "ON CONFLICT (alias) DO NOTHING"
            ),
            {"alias": key, "person_id": person_id},
        )


def _groups(conn: Connection) -> tuple[int, list[dict[str, Any]]]:
    """Rewrite the groups whose id or members are not in the normalised form; the count of
    groups rewritten and the merges where spellings held different members."""
    held: dict[tuple[str, str], tuple[bool, datetime, set[str]]] = {}
    for source, group_id, synced, updated_at in conn.execute(
        text("SELECT source, group_id, synced, updated_at FROM source_groups")
    ):
        held[(source, group_id)] = (synced, updated_at, set())
    for source, group_id, member in conn.execute(
        text("SELECT source, group_id, member FROM source_group_members")
    ):
        held[(source, group_id)][2].add(member)
    spellings: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for source, group_id in held:
        spellings[(source, principal_key(group_id))].append((source, group_id))
    rewritten, merges = 0, []
    for (source, key), stored in sorted(spellings.items()):
        members_of = {g: {principal_key(m) for m in held[g][2]} for g in stored}
        if stored == [(source, key)] and members_of[(source, key)] == held[(source, key)][2]:
            continue
        rewritten += 1
        every: set[str] = set().union(*members_of.values())
        common = every.intersection(*members_of.values())
        if len(stored) > 1 and common != every:
            merges.append({
                "group": f"{source}:group:{key}",
                "spellings": sorted(g for _, g in stored),
                "members_not_in_every_spelling": sorted(every - common)[:SHOWN],
            })  # fmt: skip
        synced = all(held[g][0] for g in stored)
        updated_at = max(held[g][1] for g in stored)
        for _, group_id in stored:  # members go with their group (ON DELETE CASCADE)
            conn.execute(
                text("DELETE FROM source_groups WHERE source = :s AND group_id = :g"),
                {"s": source, "g": group_id},
            )
        conn.execute(
            text(
                "INSERT INTO source_groups (source, group_id, synced, updated_at) "
                "VALUES (:s, :g, :synced, :at)"
            ),
            {"s": source, "g": key, "synced": synced, "at": updated_at},
        )
        conn.execute(
            text(
                "INSERT INTO source_group_members (source, group_id, member) "
                "SELECT :s, :g, m FROM unnest(CAST(:members AS text[])) AS t(m)"
            ),
            {"s": source, "g": key, "members": sorted(every)},
        )
    return rewritten, merges


def _acls(conn: Connection) -> int:
    changed = 0
    for acl_id, allow, deny in conn.execute(
        text("SELECT source_acl_id, allow, deny FROM source_acls")
    ):
        new_allow = {principal_key(p) for p in allow}
        new_deny = {principal_key(p) for p in deny}
        if new_allow != set(allow) or new_deny != set(deny):  # some spelling not the key's
            changed += 1
            conn.execute(
                text(
                    "UPDATE source_acls SET allow = CAST(:allow AS text[]), "
                    "deny = CAST(:deny AS text[]) WHERE source_acl_id = :id"
                ),
                {"allow": sorted(new_allow), "deny": sorted(new_deny), "id": acl_id},
            )
    return changed


def upgrade() -> None:
    conn = op.get_bind()
    aliases = _aliases(conn)  # refuses before anything is written
    _rewrite_aliases(conn, aliases)
    groups, merges = _groups(conn)
    acls = _acls(conn)
    if not (aliases or groups or acls):
        return
    conn.execute(text("UPDATE policy_state SET version = version + 1, updated_at = now()"))
    log.warning(
        "principals normalised: %d alias(es), %d source group(s), %d source ACL(s)",
        len(aliases), groups, acls,
    )  # fmt: skip
    for merge in merges:
        log.warning(
            "group %s was held in %d spellings with different members, now one group "
            "holding them all (its denies deny them all; its grants may admit more until "
            "the next membership sync): %s",
            merge["group"], len(merge["spellings"]), merge,
        )  # fmt: skip


def downgrade() -> None:
    """Nothing to undo: the original spellings are not kept (module docstring)."""
