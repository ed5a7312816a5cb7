"""The suite's own PostgreSQL (tests/pg.py) is a throwaway: without durability, and with its
data in memory where the machine has room, since most tests create a database (a copy of the
template: about 200 files) and drop it, and on ext4 each such copy cost about 0.35-0.5 s of
CPU in the kernel's inode allocator against 16 ms in memory (issue 27, docs/testing.md)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from tests import pg


def _show(server: pg.Server, name: str) -> str:
    with psycopg.connect(server.admin_url) as conn:
        row = conn.execute("SELECT current_setting(%s)", (name,)).fetchone()
    assert row is not None
    return str(row[0])


def test_the_embedded_test_server_keeps_its_data_in_memory(pg_server: pg.Server) -> None:
    if pg_server.kind != "embedded":
        pytest.skip("a server the suite did not start itself")
    folder = pg.memory_folder()
    if folder is None:
        pytest.skip("no shared-memory folder with room on this machine")
    assert Path(_show(pg_server, "data_directory")).is_relative_to(folder)


def test_the_embedded_test_server_is_a_throwaway(pg_server: pg.Server) -> None:
    if pg_server.kind != "embedded":
        pytest.skip("a server the suite did not start itself")
    assert [_show(pg_server, s) for s in ("fsync", "synchronous_commit")] == ["off", "off"]
