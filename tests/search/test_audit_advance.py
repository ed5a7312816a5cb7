"""The one chain step, ewall_audit_advance (migration 20261201_0021): the same hash rule as
the Python verifier (so rows written before it verify with rows written after), the
caller's rights only, and no step when the fence says no."""

from __future__ import annotations

import psycopg

from app.audit.chain import GENESIS, chain_hash
from tests.conftest import DbHandle


def test_the_step_hashes_as_the_verifier_does_and_runs_with_the_callers_rights(
    db: DbHandle,
) -> None:
    with psycopg.connect(db.app_url) as conn:
        prosecdef, config = conn.execute(
            "SELECT prosecdef, proconfig FROM pg_proc WHERE proname = 'ewall_audit_advance'"
        ).fetchone() or (None, None)
        assert prosecdef is False
        assert config == ["search_path=pg_catalog, public, pg_temp"]
        canonical = '{"k":"é ünïcode","n":1}'
        first = conn.execute(
            "SELECT seq, prev_hash, hash FROM ewall_audit_advance('policy', %s, true)",
            (canonical,),
        ).fetchall()
        assert first == [(1, GENESIS, chain_hash(GENESIS, 1, canonical))]
        held = conn.execute("SELECT * FROM ewall_audit_advance('policy', 'x', false)").fetchall()
        assert held == []
        second = conn.execute(
            "SELECT seq, prev_hash, hash FROM ewall_audit_advance('policy', 'x', true)"
        ).fetchall()
        assert second == [(2, first[0][2], chain_hash(first[0][2], 2, "x"))]
        conn.rollback()
