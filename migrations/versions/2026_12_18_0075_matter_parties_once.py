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


def upgrade() -> None:
    conn = op.get_bind()
    rows = conn.execute(
        text(
            "SELECT matter_id, position, name, name_norm, role FROM matter_parties "
            "ORDER BY matter_id, position"
        )
    ).all()
    kept: dict[str, list[tuple[str, str, str]]] = {}
    seen: set[tuple[str, str, str, str]] = set()
    changed: set[str] = set()
    dropped = 0
    for matter_id, _, name, name_norm, role in rows:
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
    conn.execute(
        text("DELETE FROM matter_parties WHERE matter_id = ANY(CAST(:ids AS text[]))"),
        {"ids": matters},
    )
    for matter_id in matters:
        parties = kept[matter_id]
        conn.execute(
            text(
                "INSERT INTO matter_parties (matter_id, position, name, name_norm, role) "
                "SELECT :m, t.position - 1, t.name, t.name_norm, t.role "
                "FROM unnest(CAST(:names AS text[]), CAST(:norms AS text[]), "
                "CAST(:roles AS text[])) WITH ORDINALITY AS t(name, name_norm, role, position)"
            ),
            {
                "m": matter_id,
                "names": [p[0] for p in parties],
                "norms": [p[1] for p in parties],
                "roles": [p[2] for p in parties],
            },
        )
    conn.execute(text("UPDATE policy_state SET version = version + 1, updated_at = now()"))
    log.warning(
        "matter parties stored once: %d repeated row(s) removed from %d matter(s)",
        dropped, len(matters),
    )  # fmt: skip


def downgrade() -> None:
    """Nothing to undo: the repetitions are not kept (module docstring)."""
