"""The per-person limits' rows (sql/limits.sql): token buckets and in-flight slots."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection

from app.db import sqlfiles


@dataclass(frozen=True)
class BucketLevel:
    budget: str
    granted: bool
    tokens: float  # left after a granted spend; there before a refused one


def spend(
    conn: Connection,
    person_id: str,
    costs: Sequence[tuple[str, float, float]],
    now: float | None,
) -> list[BucketLevel]:
    """``costs``: (budget, amount, capacity) each; one row per budget, in no set order."""
    rows = conn.execute(
        sqlfiles.query("limits.spend"),
        {
            "person_id": person_id,
            "budgets": [c[0] for c in costs],
            "amounts": [float(c[1]) for c in costs],
            "capacities": [float(c[2]) for c in costs],
            "now": now,
        },
    )
    return [BucketLevel(str(r.budget), bool(r.granted), float(r.tokens)) for r in rows]


def take_slot(
    conn: Connection,
    family: str,
    person_id: str,
    holder: str,
    limit: int,
    lease_s: float,
    now: float | None,
) -> bool:
    row = conn.execute(
        sqlfiles.query("limits.take_slot"),
        {
            "family": family,
            "person_id": person_id,
            "holder": holder,
            "limit": limit,
            "lease_s": float(lease_s),
            "now": now,
        },
    ).first()
    return row is not None


def release_slot(conn: Connection, family: str, person_id: str, holder: str) -> None:
    conn.execute(
        sqlfiles.query("limits.release_slot"),
        {"family": family, "person_id": person_id, "holder": holder},
    )


def slots_in_flight(conn: Connection, family: str, person_id: str, now: float | None) -> int:
    return int(
        conn.execute(
            sqlfiles.query("limits.slots_in_flight"),
            {"family": family, "person_id": person_id, "now": now},
        ).scalar_one()
    )


def sweep(conn: Connection, batch: int, now: float | None) -> int:
    """Delete up to ``batch`` rows of each table that no longer limit anyone."""
    params = {"batch": batch, "now": now}
    buckets = conn.execute(sqlfiles.query("limits.sweep_buckets"), params).rowcount
    slots = conn.execute(sqlfiles.query("limits.sweep_slots"), params).rowcount
    return int(buckets) + int(slots)
