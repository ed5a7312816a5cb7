"""A document field that UTF-8 cannot hold (a lone surrogate, which a DMS's JSON gives
Python for "\\ud800"; the API's body parser refuses one, 422) is one entry that names the
field holding it (invariant 7): a text holding one was reported as "unreadable metadata:
UnicodeEncodeError", sending the admin to the document's metadata."""

from __future__ import annotations

from typing import Any

import pytest

from app.ingest.pipeline import IngestPipeline
from connectors.base import SourceDocument
from tests.conftest import DbHandle

TEXT = "Memo over de huurovereenkomst en de ontbinding daarvan."


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"text": TEXT[:5] + "\ud800" + TEXT[5:]},
         "unreadable text: a lone surrogate (U+D800) at character 5, which UTF-8 cannot hold"),
        ({"title": "Memo \udcff"},
         "unreadable title: a lone surrogate (U+DCFF), which UTF-8 cannot hold"),
    ],
)
def test_a_lone_surrogate_is_named_by_its_field(
    db: DbHandle, embedder: Any, settings: Any, fields: dict[str, str], reason: str
) -> None:
    pipeline = IngestPipeline(db.database, embedder, settings)
    run = pipeline.start_run("api", {}, "admin@firm.nl")
    doc = SourceDocument(source="folder", external_id="R-1", client_id="C-1", matter_id="M-1",
                         text=fields.get("text", TEXT), title=fields.get("title"))
    outcome = pipeline.ingest(run, doc)
    report = pipeline.finish_run(run)
    assert (outcome.status, outcome.reason) == ("error", reason)
    assert [e["reason"] for e in report["errors"]] == [reason], report["errors"]

