"""The one chain step, ewall_audit_advance (migration 20261201_0021): the same hash rule as
the Python verifier (so rows written before it verify with rows written after), run as the
NOLOGIN audit owner (migration 20261202_0036) so that the service role need not update the
heads, and no step when the fence says no."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest

from app.audit.chain import GENESIS, chain_hash
from tests.conftest import DbHandle


def test_the_step_hashes_as_the_verifier_does_and_runs_as_the_audit_owner(
    db: DbHandle,
) -> None:
    with psycopg.connect(db.app_url) as conn:
        prosecdef, config, owner = conn.execute(
            "SELECT prosecdef, proconfig, CAST(CAST(proowner AS regrole) AS text) FROM pg_proc "
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


def _gate_row(seq: int, prev_hash: str, hash_: str) -> tuple[object, ...]:
    return (str(uuid.uuid4()), seq, "u@firm.nl", "citations", True, "{}", "{}", prev_hash, hash_)


INSERT_GATE_ROW = (
    "INSERT INTO gate_events (event_id, seq, at, person_id, gate, ok, request, outcome, "
    "prev_hash, hash) VALUES (%s, %s, now(), %s, %s, %s, %s, %s, %s, %s)"
)


def _head(conn: psycopg.Connection[tuple[Any, ...]], chain: str) -> tuple[int, str]:
    row = conn.execute("SELECT seq, hash FROM audit_heads WHERE chain = %s", (chain,)).fetchone()
    assert row is not None
    return int(row[0]), str(row[1])


def test_the_service_role_cannot_commit_a_head_without_its_row(db: DbHandle) -> None:
    """A head moved by the step alone names no row: verification would fail for good, so the
    transaction does not commit. Moved together with its row (what sql/audit.sql does), it
    does."""
    with psycopg.connect(db.app_url) as conn:
        before = _head(conn, "retrievals")
        conn.execute("SELECT * FROM ewall_audit_advance('retrievals', 'alone', true)")
        with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="names no row"):
            conn.commit()
        assert _head(conn, "retrievals") == before
        conn.rollback()
        seq, prev, hash_ = conn.execute(
            "SELECT seq, prev_hash, hash FROM ewall_audit_advance('gates', 'with row', true)"
        ).fetchone() or (0, "", "")
        conn.execute(INSERT_GATE_ROW, _gate_row(int(seq), str(prev), str(hash_)))
        conn.commit()
        assert _head(conn, "gates") == (seq, hash_)


def test_the_service_role_cannot_commit_a_row_beyond_the_head(db: DbHandle) -> None:
    """A row at the next sequence number, written without the step, would make every later
    append collide with it (every search failing): the transaction does not commit."""
    with psycopg.connect(db.app_url) as conn:
        seq, hash_ = _head(conn, "gates")
        conn.execute(INSERT_GATE_ROW, _gate_row(seq + 1, str(hash_), "f" * 64))
        with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="beyond the head"):
            conn.commit()
        conn.rollback()
        moved = conn.execute("SELECT seq FROM ewall_audit_advance('gates', 'y', true)").fetchall()
        assert moved == [(seq + 1,)]
        conn.rollback()


def test_each_move_of_a_head_needs_its_own_row(db: DbHandle) -> None:
    """Two moves in one transaction and only the second row written: the head names a row,
    but the chain skips one (verification fails for good); every move is checked as it left
    the head, so the transaction does not commit (a review of the first form of the check,
    which read the head once at commit)."""
    with psycopg.connect(db.app_url) as conn:
        conn.execute("SELECT * FROM ewall_audit_advance('gates', 'skipped', true)")
        seq, prev, hash_ = conn.execute(
            "SELECT seq, prev_hash, hash FROM ewall_audit_advance('gates', 'written', true)"
        ).fetchone() or (0, "", "")
        conn.execute(INSERT_GATE_ROW, _gate_row(int(seq), str(prev), str(hash_)))
        with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="names no row"):
            conn.commit()


@pytest.mark.parametrize("seq", [0, -5])
def test_a_row_below_the_first_sequence_number_is_refused(db: DbHandle, seq: int) -> None:
    """The unique index holds 1..head; a row at 0 or below went in beside it, and no row can
    ever be deleted, so the chain failed verification for good."""
    with psycopg.connect(db.app_url) as conn:
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(INSERT_GATE_ROW, _gate_row(seq, "0" * 64, "f" * 64))
        conn.rollback()
