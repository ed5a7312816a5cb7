"""The statements of app/matrix/rekey.py (sql/ids.sql)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection

from app.db import sqlfiles

_STORED = {"person": "ids.people_stored", "client": "ids.clients_stored",
           "matter": "ids.matters_stored"}
_LOCK = {"person": "ids.lock_people", "client": "ids.lock_clients", "matter": "ids.lock_matters"}


def not_nfc(conn: Connection) -> list[dict[str, Any]]:
    """Every stored id that is not NFC: kind, tbl, col, id and n (rows)."""
    return [dict(r) for r in conn.execute(sqlfiles.query("ids.not_nfc")).mappings()]


def any_matrix_id_not_nfc(conn: Connection) -> bool:
    return bool(conn.execute(sqlfiles.query("ids.any_matrix_id_not_nfc")).scalar_one())


def stored(conn: Connection, kind: str, ids: Sequence[str]) -> set[str]:
    """Those of ``ids`` that the matrix holds as a person, client or matter (``kind``)."""
    return {str(r[0]) for r in conn.execute(sqlfiles.query(_STORED[kind]), {"ids": list(ids)})}


def lock(conn: Connection, kind: str, old_ids: Sequence[str]) -> None:
    """The rows to move, locked until commit."""
    conn.execute(sqlfiles.query(_LOCK[kind]), {"old_ids": list(old_ids)}).all()


def move(conn: Connection, statement: str, old_ids: Sequence[str], new_ids: Sequence[str]) -> None:
    """One statement of the move (``ids.<block>``), with the mapping old id -> new id."""
    conn.execute(
        sqlfiles.query(statement), {"old_ids": list(old_ids), "new_ids": list(new_ids)}
    )
