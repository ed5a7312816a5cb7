"""Migration 20261218_0075 stores once a party stored twice on one matter before a matter's
body kept one of each (``MatterIn``: one per name and role, names alike under ``party_key``).

The rows are written as the code before the dedupe could leave them, straight into the table
at 20261217_0074; then the upgrade runs. A repetition goes only when an earlier row of its
matter has its role, its ``party_key`` and its stored ``name_norm``, so that nothing the
listing or the conflict search reads is lost; the first spelling stays, as a rewrite keeps
it, and the positions are numbered again."""

from __future__ import annotations

import tracemalloc

import psycopg
from fastapi.testclient import TestClient

from app.db import migrate
from app.settings import Settings
from app.walls.names import normalize_name
from tests import pg
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, ok, superuser_rows

BEFORE = "20261217_0074"
AFTER = "20261218_0075"

STORED = [  # name, role, name_norm (None: as the code wrote it)
    ("Acme B.V.", "adverse", None),
    ("ACME  B.V.", "adverse", None),  # the same party, another spelling: goes
    ("Acme B.V.", "related", None),  # the same name in another role: stays
    ("Beta Holding", "adverse", None),
    ("acme b.v.", "adverse", None),  # goes
    ("Ａｃｍｅ B.V.", "adverse", "acme bv legacy"),  # alike, but matched otherwise: stays
    ("Acme N.V.", "adverse", None),  # another company: stays
    ("Beta Holding", "adverse", None),  # goes
]


def _rows(db: DbHandle, matter_id: str) -> list[tuple[object, ...]]:
    return superuser_rows(
        db,
        "SELECT position, name, role, name_norm FROM matter_parties WHERE matter_id = %s "
        "ORDER BY position",
        matter_id,
    )


def test_the_upgrade_keeps_one_of_each_party_and_loses_nothing(
    client: TestClient, auth: Tokens, db: DbHandle, settings: Settings
) -> None:
    firm = Firm(client, auth)
    firm.client_("C-1")
    firm.matter("M-1", "C-1")
    firm.matter("M-2", "C-1", parties=[{"name": "Gamma", "role": "adverse"}])
    migrate.downgrade(
        db.superuser_url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim,
        revision=BEFORE,
    )  # fmt: skip
    with psycopg.connect(db.superuser_url) as conn:  # as the code before the dedupe wrote
        for position, (name, role, norm) in enumerate(STORED):
            conn.execute(
                "INSERT INTO matter_parties (matter_id, position, name, name_norm, role) "
                "VALUES ('M-1', %s, %s, %s, %s)",
                (position, name, norm or normalize_name(name), role),
            )
    untouched = _rows(db, "M-2")
    version = int(superuser_rows(db, "SELECT version FROM policy_state")[0][0])

    migrate.upgrade(db.superuser_url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim)

    assert _rows(db, "M-1") == [
        (0, "Acme B.V.", "adverse", normalize_name("Acme B.V.")),
        (1, "Acme B.V.", "related", normalize_name("Acme B.V.")),
        (2, "Beta Holding", "adverse", normalize_name("Beta Holding")),
        (3, "Ａｃｍｅ B.V.", "adverse", "acme bv legacy"),
        (4, "Acme N.V.", "adverse", normalize_name("Acme N.V.")),
    ]
    assert _rows(db, "M-2") == untouched
    assert int(superuser_rows(db, "SELECT version FROM policy_state")[0][0]) == version + 1
    listed = ok(client.get("/v1/matters/M-1", headers=firm.h))["parties"]
    assert [(p["name"], p["role"]) for p in listed] == [
        ("Acme B.V.", "adverse"), ("Acme B.V.", "related"), ("Beta Holding", "adverse"),
        ("Ａｃｍｅ B.V.", "adverse"), ("Acme N.V.", "adverse"),
    ]  # fmt: skip
    # a second run finds nothing to do and leaves the version alone
    migrate.downgrade(
        db.superuser_url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim,
        revision=BEFORE,
    )  # fmt: skip
    migrate.upgrade(db.superuser_url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim)
    assert int(superuser_rows(db, "SELECT version FROM policy_state")[0][0]) == version + 1


def test_the_upgrade_reads_into_memory_only_the_matters_that_repeat_a_party(
    client: TestClient, auth: Tokens, db: DbHandle, settings: Settings
) -> None:
    """A big firm: the upgrade read every party of every matter into memory (about 0.7 kB a
    row, gigabytes for millions of rows); only a matter where two rows share a role and a
    stored name_norm can hold a repetition, and only those are read."""
    firm = Firm(client, auth)
    firm.client_("C-1")
    migrate.downgrade(
        db.superuser_url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim,
        revision=BEFORE,
    )  # fmt: skip
    with psycopg.connect(db.superuser_url) as conn:  # 100,000 parties, none repeated
        conn.execute(
            "INSERT INTO matters (matter_id, client_id, title, status) "
            "SELECT 'X-' || i, 'C-1', 't', 'open' FROM generate_series(1, 25000) i"
        )
        conn.execute(
            "INSERT INTO matter_parties (matter_id, position, name, name_norm, role) "
            "SELECT 'X-' || i, p, 'Party ' || i || '-' || p, 'party ' || i || ' ' || p, "
            "'adverse' FROM generate_series(1, 25000) i, generate_series(0, 3) p"
        )
        for position, name in enumerate(("Acme B.V.", "Beta", "ACME B.V.")):  # one repeated
            conn.execute(
                "INSERT INTO matter_parties (matter_id, position, name, name_norm, role) "
                "VALUES ('X-7', %s, %s, %s, 'related')",
                (4 + position, name, normalize_name(name)),
            )
    tracemalloc.start()
    try:
        migrate.upgrade(
            db.superuser_url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim,
            revision=AFTER,
        )  # fmt: skip
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    migrate.upgrade(db.superuser_url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim)
    assert [(r[1], r[2]) for r in _rows(db, "X-7")] == [
        ("Party 7-0", "adverse"), ("Party 7-1", "adverse"), ("Party 7-2", "adverse"),
        ("Party 7-3", "adverse"), ("Acme B.V.", "related"), ("Beta", "related"),
    ]  # fmt: skip
    assert int(superuser_rows(db, "SELECT count(*) FROM matter_parties")[0][0]) == 100_002
    # the whole table read into memory: about 70 MB here; the matters that repeat: about 1
    assert peak < 20_000_000, f"{peak / 1e6:.0f} MB"
