"""A folder export's access list names principals as `<source>:user:<id>` or
`<source>:group:<id>`. Anything else matched nobody: "bob" in a deny lapsed for the person
whose alias is folder:user:bob, and the row was imported as if it screened him."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from connectors.folder.source import parse_acl
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm


@pytest.mark.parametrize("key", ["allow", "deny"])
@pytest.mark.parametrize("principal", ["bob", "folder:bob", "folder:person:bob", "user:bob"])
def test_a_principal_out_of_form_is_bad_metadata(key: str, principal: str) -> None:
    with pytest.raises(ValueError, match=f"acl.{key}"):
        parse_acl({"default": "public", key: ["folder:user:alice", principal]})


def test_principals_in_form_are_read_lower_case() -> None:
    acl = parse_acl({"default": "public", "deny": [" Folder:User:Bob "], "allow": []})
    assert acl is not None and acl.deny == {"folder:user:bob"}


def test_a_row_whose_access_list_cannot_be_read_hides_the_stored_copy(
    client: TestClient, auth: Tokens, db: DbHandle, embedder: Any, settings: Any, tmp_path: Path
) -> None:
    """A review: the row was refused, and the copy stored before kept its rules, so the
    valid deny beside the bad principal lapsed. The stored copy now admits nobody until a
    row that can be read comes."""
    from app.ingest.pipeline import IngestPipeline
    from app.ingest.runs import ingest_folder

    firm = Firm(client, auth)
    firm.person("alice@firm.nl", aliases=["folder:user:alice"])
    firm.client_("C-1")
    firm.matter("M-1", "C-1", team=["alice@firm.nl"])
    (tmp_path / "a.txt").write_text("Memo over de huurovereenkomst en ontbinding.")
    row = {"external_id": "F-1", "path": "a.txt", "client_id": "C-1", "matter_id": "M-1"}
    pipeline = IngestPipeline(db.database, embedder, settings)

    def ingest(acl: dict[str, Any] | None) -> None:
        (tmp_path / "metadata.jsonl").write_text(
            json.dumps({**row, **({"acl": acl} if acl else {})})
        )
        ingest_folder(pipeline, tmp_path, started_by="admin@firm.nl")

    ingest(None)
    assert firm.documents_found("alice@firm.nl", "huurovereenkomst", mode="sparse") == ["F-1"]
    ingest({"default": "public", "deny": ["folder:user:alice", "bob"]})
    assert firm.documents_found("alice@firm.nl", "huurovereenkomst", mode="sparse") == []
