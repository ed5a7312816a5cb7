"""Migration 20261213_0069 brings stored principals to app.types.principal_key's form.

Rows are written as the code before it could leave them (a decomposed alias, one group in
two spellings, an ACL naming one user twice), straight into the tables at 20261212_0068;
then the upgrade runs. A deny of the composed id, which the new code writes, must reach the
person whose alias was stored decomposed: end to end through the search API.
"""

from __future__ import annotations

import psycopg
import pytest
from fastapi.testclient import TestClient

from app.db import migrate
from app.settings import Settings
from tests import pg
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm, retag, superuser_rows

BEFORE = "20261212_0068"
JOSE_NFD, JOSE_NFC = "api:user:jose\u0301", "api:user:jos\u00e9"
TEAM_NFD, TEAM_NFC = "e\u0301quipe", "\u00e9quipe"
TEXT = "octrooi inbreuk retard-tablet medivastine"


def _down(db: DbHandle, settings: Settings) -> None:
    migrate.downgrade(
        db.superuser_url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim,
        revision=BEFORE,
    )  # fmt: skip


def _up(db: DbHandle, settings: Settings) -> None:
    migrate.upgrade(db.superuser_url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim)


def _policy_version(db: DbHandle) -> int:
    return int(superuser_rows(db, "SELECT version FROM policy_state")[0][0])


def test_the_upgrade_normalises_aliases_groups_and_access_lists(
    db: DbHandle, settings: Settings
) -> None:
    _down(db, settings)
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute("INSERT INTO people (person_id) VALUES ('jose'), ('rene'), ('ana')")
        conn.execute(
            "INSERT INTO person_aliases (alias, person_id) VALUES (%s, 'jose'), "
            "('api:user:rene\u0301', 'rene'), ('api:user:ren\u00e9', 'rene'), "
            "('api:user:ana', 'ana')",
            (JOSE_NFD,),
        )
        conn.execute(
            "INSERT INTO source_groups (source, group_id, synced) VALUES "
            "('api', %s, true), ('api', %s, false), ('api', 'plain', true)",
            (TEAM_NFD, TEAM_NFC),
        )
        conn.execute(
            "INSERT INTO source_group_members (source, group_id, member) VALUES "
            "('api', %s, %s), ('api', %s, 'api:user:bob'), ('api', 'plain', 'api:user:ana')",
            (TEAM_NFD, JOSE_NFD, TEAM_NFC),
        )
        conn.execute(
            "INSERT INTO source_acls (source_acl_id, default_access, allow, deny) VALUES "
            "('acl_deny', 'public', '{}', %s), ('acl_team', 'private', %s, '{}'), "
            "('acl_plain', 'private', '{api:user:ana}', '{}')",
            ([JOSE_NFD, JOSE_NFC, f"api:group:{TEAM_NFD}"], [f"api:group:{TEAM_NFD}"]),
        )
    version = _policy_version(db)
    _up(db, settings)

    assert sorted(superuser_rows(db, "SELECT alias, person_id FROM person_aliases")) == [
        ("api:user:ana", "ana"), (JOSE_NFC, "jose"), ("api:user:ren\u00e9", "rene"),
    ]  # fmt: skip
    # one group of two spellings: every member either held, API-owned as one spelling was
    assert sorted(superuser_rows(db, "SELECT source, group_id, synced FROM source_groups")) == [
        ("api", "plain", True), ("api", TEAM_NFC, False),
    ]  # fmt: skip
    assert sorted(superuser_rows(db, "SELECT group_id, member FROM source_group_members")) == [
        ("plain", "api:user:ana"), (TEAM_NFC, "api:user:bob"), (TEAM_NFC, JOSE_NFC),
    ]  # fmt: skip
    assert sorted(
        superuser_rows(
            db,
            "SELECT source_acl_id, allow, deny, deny_groups FROM source_acls "
            "WHERE source_acl_id LIKE 'acl_%%'",
        )
    ) == [
        ("acl_deny", [], sorted([JOSE_NFC, f"api:group:{TEAM_NFC}"]), [f"api:group:{TEAM_NFC}"]),
        ("acl_plain", ["api:user:ana"], [], []),
        ("acl_team", [f"api:group:{TEAM_NFC}"], [], []),
    ]
    assert _policy_version(db) == version + 1  # resolution reads the rewritten rows


def test_one_alias_held_by_two_people_stops_the_upgrade_and_changes_nothing(
    db: DbHandle, settings: Settings
) -> None:
    _down(db, settings)
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute("INSERT INTO people (person_id) VALUES ('jose'), ('other')")
        conn.execute(
            "INSERT INTO person_aliases (alias, person_id) VALUES (%s, 'jose'), (%s, 'other')",
            (JOSE_NFD, JOSE_NFC),
        )
        conn.execute(
            "INSERT INTO source_acls (source_acl_id, default_access, allow, deny) VALUES "
            "('acl_deny', 'public', '{}', %s)",
            ([JOSE_NFD],),
        )
    with pytest.raises(Exception, match="held by different people") as raised:
        _up(db, settings)
    assert "'jose'" in str(raised.value) and "'other'" in str(raised.value)
    assert migrate.current_revision(db.superuser_url) == BEFORE
    assert sorted(superuser_rows(db, "SELECT alias, person_id FROM person_aliases")) == [
        (JOSE_NFD, "jose"), (JOSE_NFC, "other"),
    ]  # fmt: skip
    assert superuser_rows(
        db, "SELECT deny FROM source_acls WHERE source_acl_id = 'acl_deny'"
    ) == [([JOSE_NFD],)]


def test_after_the_upgrade_a_composed_deny_denies_the_person_stored_decomposed(
    client: TestClient, auth: Tokens, db: DbHandle, settings: Settings
) -> None:
    firm = Firm(client, auth)
    firm.person("jose@firm.nl", aliases=[JOSE_NFC])
    firm.person("bob@firm.nl", aliases=["api:user:bob"])
    firm.client_("C-1")
    firm.matter("M-1", "C-1", team=["jose@firm.nl", "bob@firm.nl"])
    firm.document("denied", TEXT, client_id="C-1", matter_id="M-1",
                  acl={"default": "public", "deny": [JOSE_NFC]})  # fmt: skip
    retag(client)
    _down(db, settings)
    with psycopg.connect(db.superuser_url) as conn:  # as the code before could store it
        conn.execute("UPDATE person_aliases SET alias = %s WHERE alias = %s", (JOSE_NFD, JOSE_NFC))
        conn.execute("UPDATE policy_state SET version = version + 1")
    _up(db, settings)
    assert firm.documents_found("jose@firm.nl", TEXT) == []
    assert firm.documents_found("bob@firm.nl", TEXT) == ["denied"]
