"""`ewall ids normalize` moves a person, client or matter by copying its row under the NFC id
(sql/ids.sql copy_*): a column the copy leaves out would silently take its default on every
re-keyed row. The copies name every column of their table as the schema snapshot has it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.db import sqlfiles

SCHEMA = Path(__file__).resolve().parents[2] / "migrations" / "schema.sql"


def _columns(table: str) -> set[str]:
    found = re.search(
        r"CREATE TABLE public\." + table + r" \((.*?)\n\);", SCHEMA.read_text(), re.S
    )
    assert found, table
    lines = [line.strip() for line in found.group(1).splitlines() if line.strip()]
    return {line.split()[0] for line in lines if not line.startswith("CONSTRAINT")}


@pytest.mark.parametrize(
    ("block", "table"),
    [("ids.copy_people", "people"), ("ids.copy_clients", "clients"),
     ("ids.copy_matters", "matters")],
)
def test_each_copy_names_every_column_of_its_table(block: str, table: str) -> None:
    statement = str(sqlfiles.query(block))
    listed = re.search(r"INSERT INTO " + table + r" \(([^)]*)\)", statement)
    assert listed, statement
    assert {c.strip() for c in listed.group(1).split(",")} == _columns(table)
