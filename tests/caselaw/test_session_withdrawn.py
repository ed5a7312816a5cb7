"""A decision a session read and the source withdrew since taints the session (invariant 11):
withdrawal hides it from every search, and the session still holds its text (Rechtspraak
withdraws decisions that were published too soon or not anonymised well enough)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.caselaw.ingest import ingest_rechtspraak_folder
from app.ingest.pipeline import IngestPipeline
from tests.caselaw.test_ingest import (
    LAWYER,
    PARKING,
    WITHDRAWN_MARKER,
    api,
    corpus_file,
    pipeline,
    with_marker,
    write_record,
)
from tests.conftest import Tokens
from tests.helpers import Firm, ok

pytestmark = pytest.mark.usefixtures("shared_corpus")

__all__ = ["api", "pipeline"]  # the fixtures, imported for pytest

QUERY = "parkeerbelasting Purmerend naheffingsaanslag"


def _gate(firm: Firm, auth: Tokens, session_id: str) -> Any:
    return ok(
        firm.client.post(
            "/v1/gates/session", json={"session_id": session_id}, headers=auth(LAWYER, "lawyer")
        )
    )


def test_a_decision_withdrawn_since_taints_the_sessions_that_read_it(
    pipeline: IngestPipeline, api: Firm, auth: Tokens, tmp_path: Path
) -> None:
    original = corpus_file(PARKING).read_bytes()
    write_record(tmp_path, PARKING, original)
    ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")
    body = {"filters": {"sources": ["rechtspraak"]}, "k": 5}
    found = api.documents_found(LAWYER, QUERY, session_id="s-read", **body)
    assert PARKING in found, found
    assert _gate(api, auth, "s-read")["status"] == "ok"

    write_record(tmp_path, PARKING, with_marker(original, WITHDRAWN_MARKER))
    report = ingest_rechtspraak_folder(pipeline, tmp_path, started_by="test")
    assert report["caselaw"]["counts"]["withdrawn"] == 1
    answer = _gate(api, auth, "s-read")
    assert answer["status"] == "tainted", answer
    assert [(r["kind"], r["cause"], r["matters"], r["documents"]) for r in answer["reasons"]] == [
        ("wall", "withdrawn", [], [f"rechtspraak:{PARKING}"])]
