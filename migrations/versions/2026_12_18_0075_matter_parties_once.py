"""A party stored twice on one matter, written before a matter's body kept one of each, is
stored once.

Revision ID: 20261218_0075
Revises: 20261217_0074
Create Date: 2026-12-18

Since app/matrix/schemas.py ``MatterIn`` dedupes its parties (one per name and role, the
first spelling kept, names alike under ``party_key``: NFKC, case folding, white space runs
as one space), a matter written before kept its duplicates until it was written again: they
were listed twice by every read of the matter. This revision does what a rewrite of each
such matter with its stored body would do, computed in Python by ``party_key`` as written
then (SQL has no casefold, and its lower() follows the collation), with one more condition,
so that nothing is lost: a later row goes only when an earlier row of its matter has its
role, its ``party_key`` AND its stored ``name_norm`` (what the conflict search matches).
Two spellings alike under ``party_key`` whose stored ``name_norm`` differ (normalised by
another version of ``normalize_name``, or folding differently: "STRASSE"/"Straße") are both
kept, as stored; the next write of the matter keeps the first. The positions of a matter
that lost a row are numbered 0.. again in their order, as a write numbers them.

Parties do not decide access, but the matrix snapshot that the sessions' adverse check and
the conflict search read is cached by policy version: when anything changed the version is
bumped, so no process goes on listing a row that is gone. No policy event is written (the
matrix's state is the same; only its repetitions go), and the downgrade restores nothing.
"""

import logging
import unicodedata
from collections.abc import Sequence

from alembic import op
from sqlalchemy import text

revision: str = "20261218_0075"
down_revision: str | None = "20261217_0074"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("alembic.runtime.migration")


def party_key(name: str) -> str:
    """app.matrix.schemas.party_key as this revision was written (kept here, so that a later
    change of that function cannot change what this revision did)."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


# The rows of the matters where two rows share a role and a stored name_norm, the only
# matters that can hold a repetition (a row goes only when an earlier one has both): a big
# firm's other parties are never read into memory (all of them, read whole, took about 0.7 kB
# of memory per row: gigabytes for a firm with millions).
CANDIDATE_ROWS = """
SELECT matter_id, name, name_norm, role FROM matter_parties
WHERE matter_id IN (SELECT matter_id FROM matter_parties
                    GROUP BY matter_id, role, name_norm HAVING count(*) > 1)
ORDER BY matter_id, position
"""
BATCH = 10_000  # matters rewritten per statement


def upgrade() -> None:
    conn = op.get_bind()
    kept: dict[str, list[tuple[str, str, str]]] = {}
    seen: set[tuple[str, str, str, str]] = set()
    changed: set[str] = set()
    dropped = 0
    for matter_id, name, name_norm, role in conn.execute(text(CANDIDATE_ROWS)):
        key = (matter_id, party_key(name), role, name_norm)
        if key in seen:
            changed.add(matter_id)
            dropped += 1
            continue
        seen.add(key)
        kept.setdefault(matter_id, []).append((name, name_norm, role))
    if not changed:
        return
    matters = sorted(changed)
    for start in range(0, len(matters), BATCH):
        batch = matters[start : start + BATCH]
        rows = [(m, i, *party) for m in batch for i, party in enumerate(kept[m])]
        conn.execute(
            text("DELETE FROM matter_parties WHERE matter_id = ANY(CAST(:ids AS text[]))"),
            {"ids": batch},
        )
        conn.execute(
            text(
                "INSERT INTO matter_parties (matter_id, position, name, name_norm, role) "
                "SELECT * FROM unnest(CAST(:matter_ids AS text[]), CAST(:positions AS "
                "integer[]), CAST(:names AS text[]), CAST(:norms AS text[]), "
                "CAST(:roles AS text[]))"
            ),
            {
                "matter_ids": [r[0] for r in rows],
                "positions": [r[1] for r in rows],
                "names": [r[2] for r in rows],
                "norms": [r[3] for r in rows],
                "roles": [r[4] for r in rows],
            },
        )
    conn.execute(text("UPDATE policy_state SET version = version + 1, updated_at = now()"))
    log.warning(
        "matter parties stored once: %d repeated row(s) removed from %d matter(s)",
        dropped, len(matters),
    )  # fmt: skip


def downgrade() -> None:
    """Nothing to undo: the repetitions are not kept (module docstring)."""
