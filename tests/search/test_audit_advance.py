"""The one chain step, ewall_audit_advance (migration 20261201_0021): the same hash rule as
the Python verifier (so rows written before it verify with rows written after), run as the
NOLOGIN audit owner (migration 20261202_0036) so that the service role need not update the
heads, and no step when the fence says no."""

from __future__ import annotations

import psycopg
import pytest

from app.audit.chain import GENESIS, chain_hash
from tests.conftest import DbHandle


def test_the_step_hashes_as_the_verifier_does_and_runs_as_the_audit_owner(
    db: DbHandle,
) -> None:
    with psycopg.connect(db.app_url) as conn:
        prosecdef, config, owner = conn.execute(
            "SELECT prosecdef, proconfig, proowner::regrole::text FROM pg_proc "
            "WHERE proname = 'ewall_audit_advance'"
        ).fetchone() or (None, None, None)
        assert prosecdef is True and owner == "ewall_audit_owner"
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


def test_the_service_role_cannot_move_a_head_itself(db: DbHandle) -> None:
    """Leaked service credentials cannot forge a head (verification broken for good) or
    take the next sequence number (every search failing): only the function moves it."""
    with psycopg.connect(db.app_url) as conn:
        for statement in (
            "UPDATE audit_heads SET hash = repeat('f', 64) WHERE chain = 'retrievals'",
            "UPDATE audit_heads SET seq = seq + 1",
            "INSERT INTO audit_heads (chain, seq, prev_hash, hash) VALUES ('x', 0, '', '')",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
            conn.rollback()
        # the step itself still works for the service role
        moved = conn.execute("SELECT seq FROM ewall_audit_advance('gates', 'y', true)").fetchall()
        assert moved == [(1,)]
        conn.rollback()
