"""The replica fences' window-edge check, written as a count over the partial indexes on the
edges (migration 20261215_0072), answers as the NOT EXISTS it replaced did, wall by wall:
edges before, at, inside and after the window, no end, lifted walls."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import psycopg

from app.db import sqlfiles
from tests.conftest import DbHandle

# the check before migration 20261215_0072, as sql/walls.sql had it
BEFORE = """
SELECT NOT EXISTS (
    SELECT FROM walls w
    WHERE w.lifted_at IS NULL
      AND ((w.effective_from > CAST(%(at)s AS timestamptz)
            AND w.effective_from <= clock_timestamp())
           OR (w.effective_until > CAST(%(at)s AS timestamptz)
               AND w.effective_until <= clock_timestamp())))
"""


def test_the_count_answers_as_not_exists_did(db: DbHandle) -> None:
    now = datetime.now(UTC)
    at = now - timedelta(minutes=5)
    instants = [
        at - timedelta(days=1),
        at,
        at + timedelta(microseconds=1),
        at + timedelta(minutes=2),
        now + timedelta(days=1),
    ]
    compiled = str(sqlfiles.query("walls.no_window_edge_since").compile())
    after = compiled.replace(":at", "%(at)s")
    answers: list[object] = []
    with psycopg.connect(db.superuser_url) as conn:
        for begun, ended, lifted in itertools.product(instants, [None, *instants], [False, True]):
            if ended is not None and ended <= begun:
                continue
            conn.execute("DELETE FROM walls")
            conn.execute(
                "INSERT INTO walls (wall_id, kind, title, reason, effective_from,"
                " effective_until, created_by, lifted_at, lifted_by)"
                " VALUES ('W-1', 'exclusionary', 't', 'r', %s, %s, 'cp@firm.nl', %s, %s)",
                (begun, ended, now if lifted else None, "cp@firm.nl" if lifted else None),
            )
            for when in (at, None):
                params = {"at": when}
                old = conn.execute(BEFORE, params).fetchone()
                new = conn.execute(after, params).fetchone()
                assert old == new, (begun, ended, lifted, when, old, new)
                answers.append(new)
            conn.rollback()
    # both answers came up: edges inside the window, and none
    assert {(True,), (False,)} <= set(answers) and len(answers) > 50
