"""verify_chain_after: a chain verified from a position an earlier full verification reached
(the console banner's page-load check) reads only the rows after it, and still finds an edit
among them, a rewrite of the position's row, a removed tail and an altered access set."""

from __future__ import annotations

from typing import Any

from app.audit.chain import GENESIS, verify_all, verify_chain_after
from app.db.engine import begin_snapshot
from tests.conftest import DbHandle
from tests.helpers import Firm
from tests.search.test_audit_chain import _tamper, audited  # noqa: F401 (fixture)


def _after(db: DbHandle, seq: int) -> dict[str, Any]:
    with db.database.engine.connect() as conn:
        begin_snapshot(conn)
        full = verify_all(conn)
        assert full["ok"], full
    return _report(db, _position(db, seq))


def _report(db: DbHandle, position: tuple[int, str]) -> dict[str, Any]:
    with db.database.engine.connect() as conn:
        begin_snapshot(conn)
        return verify_chain_after(conn, "retrievals", position).as_dict()


def _position(db: DbHandle, seq: int) -> tuple[int, str]:
    with db.database.engine.connect() as conn:
        stored = conn.exec_driver_sql(
            f"SELECT hash FROM audit_retrievals WHERE seq = {int(seq)}"
        ).scalar_one()
        return seq, str(stored)


def test_only_the_rows_after_the_position_are_read(audited: Firm, db: DbHandle) -> None:  # noqa: F811
    report = _after(db, 4)
    assert report["ok"] and report["checked"] == 2, report  # rows 5 and 6, not all six
    assert _report(db, (0, GENESIS))["checked"] == 6  # from the genesis: the whole chain
    assert _after(db, 6)["checked"] == 0


def test_an_edit_after_the_position_is_found(audited: Firm, db: DbHandle) -> None:  # noqa: F811
    position = _position(db, 4)
    _tamper(db, "UPDATE audit_retrievals SET query = 'edited' WHERE seq = 6")
    report = _report(db, position)
    assert not report["ok"] and report["first_bad_seq"] == 6, report


def test_a_rewritten_position_is_found(audited: Firm, db: DbHandle) -> None:  # noqa: F811
    position = _position(db, 4)
    _tamper(db, f"UPDATE audit_retrievals SET hash = '{'f' * 64}' WHERE seq = 4")
    report = _report(db, position)
    assert not report["ok"] and report["first_bad_seq"] == 4, report
    assert "row 4, verified with hash" in report["problem"]


def test_a_removed_tail_is_found(audited: Firm, db: DbHandle) -> None:  # noqa: F811
    position = _position(db, 4)
    _tamper(
        db,
        "DELETE FROM audit_retrieval_results WHERE retrieval_id IN "
        "(SELECT retrieval_id FROM audit_retrievals WHERE seq = 6)",
        "DELETE FROM audit_retrievals WHERE seq = 6",
    )
    report = _report(db, position)
    assert not report["ok"] and report["first_bad_seq"] == 6, report
    assert "chain head says seq 6 but the log ends at seq 5" in report["problem"]


def test_an_altered_access_set_of_a_later_row_is_found(audited: Firm, db: DbHandle) -> None:  # noqa: F811
    position = _position(db, 4)
    _tamper(
        db,
        "ALTER TABLE audit_access_sets DROP CONSTRAINT ck_audit_access_sets_content_addressed",
        "UPDATE audit_access_sets SET members = members || CAST('extra' AS text) WHERE set_id = "
        "(SELECT source_principals_set FROM audit_retrievals WHERE seq = 6)",
    )
    report = _report(db, position)
    assert not report["ok"], report
    assert "was altered" in report["problem"]
