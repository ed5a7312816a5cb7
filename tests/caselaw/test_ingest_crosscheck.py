"""The second-source cross-check during case-law ingestion, against the fake judiciary
endpoint serving the real corpus: discrepancies are recorded and never resolved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from app.caselaw.ingest import CROSSCHECK_MAX_CONSECUTIVE_FAILURES, CrossChecker
from app.caselaw.ingest import ingest_rechtspraak_folder as ingest
from app.caselaw.parse import parse_rechtspraak
from app.ingest.pipeline import IngestPipeline
from connectors.http.allowlist import same_server
from tests.caselaw.test_ingest import (
    PARKING,
    SMALL,
    SMALL_2,
    case_row,
    copy_records,
    corpus_file,
    document_row,
    entries,
    pytestmark,
)
from tests.conftest import DbHandle, make_settings
from tests.fakes.rechtspraak import FakeRechtspraak, closed_port_url

__all__ = ["pytestmark"]


def test_discrepancies_are_recorded_and_never_resolved(
    db: DbHandle, embedder: Any, tmp_path: Path
) -> None:
    folder = copy_records(tmp_path / "records", [PARKING, SMALL, SMALL_2])
    with FakeRechtspraak() as fake:
        fake.withdrawn(PARKING)  # the second source says withdrawn, the primary does not
        fake.fail(SMALL_2, 500)
        settings = make_settings(rechtspraak_crosscheck_url=fake.url)
        pipeline = IngestPipeline(db.database, embedder, settings)

        report = ingest(pipeline, folder, started_by="test")
        assert fake.hits(PARKING) == fake.hits(SMALL) == fake.hits(SMALL_2) == 1
        assert report["status"] == "succeeded"
        counts = report["caselaw"]["counts"]
        assert counts["crosscheck_discrepancies"] == 1
        assert counts["crosscheck_agree"] == 1 and counts["crosscheck_unavailable"] == 1

        listed = entries(report, "crosscheck", PARKING)
        assert len(listed) == 1
        found = listed[0]["details"]["discrepancies"]
        assert any(d.startswith("withdrawn: primary absent, second source True") for d in found)
        assert any(d.startswith("liveness:") for d in found)
        row = case_row(db, PARKING)
        assert row is not None and row["crosscheck"]["status"] == "discrepancies"
        assert row["crosscheck"]["discrepancies"] == found
        assert row["crosscheck"]["source"] == fake.url
        # not resolved: the primary record decides, the decision stays searchable
        assert row["state"] == "active" and row["withdrawn"] is None
        doc = document_row(db, PARKING)
        assert doc is not None and doc["search_state"] == "active"

        agree = case_row(db, SMALL)
        assert agree is not None and agree["crosscheck"]["status"] == "agree"
        assert agree["crosscheck"]["discrepancies"] == []
        down = case_row(db, SMALL_2)
        assert down is not None and down["crosscheck"]["status"] == "unavailable"
        assert "HTTP 500" in entries(report, "crosscheck_errors", SMALL_2)[0]["reason"]
        assert down["state"] == "active"

        # a check that cannot run keeps the last known discrepancies (no answer is not "agree")
        fake.reset()
        fake.fail(PARKING, 503)
        report = ingest(pipeline, folder, started_by="test")
        row = case_row(db, PARKING)
        assert row is not None and row["crosscheck"]["status"] == "discrepancies"
        assert row["crosscheck"]["discrepancies"] == found
        assert row["crosscheck"]["last_error"] == "HTTP 503"
        assert entries(report, "crosscheck_errors", PARKING)
        down = case_row(db, SMALL_2)
        assert down is not None and down["crosscheck"]["status"] == "agree"

        # the second source now agrees: that is what it says today, recorded as such
        fake.reset()
        report = ingest(pipeline, folder, started_by="test")
        row = case_row(db, PARKING)
        assert row is not None and row["crosscheck"]["status"] == "agree"
        assert report["caselaw"]["counts"]["crosscheck_agree"] == 3

        # a second source with another decision under this ECLI is a discrepancy too
        fake.wrong_record(SMALL, PARKING)
        report = ingest(pipeline, folder, started_by="test")
        wrong = entries(report, "crosscheck", SMALL)[0]["details"]["discrepancies"]
        assert any(d.startswith("ecli:") for d in wrong)


def test_no_second_source_configured_means_no_check(
    db: DbHandle, embedder: Any, tmp_path: Path
) -> None:
    folder = copy_records(tmp_path / "records", [SMALL])
    pipeline = IngestPipeline(db.database, embedder, make_settings())
    report = ingest(pipeline, folder, started_by="test")
    assert report["caselaw"]["crosscheck"] == []
    row = case_row(db, SMALL)
    assert row is not None and row["crosscheck"] is None


def test_an_unreachable_second_source_is_given_up_after_a_few_failures() -> None:
    record = parse_rechtspraak(corpus_file(SMALL).read_bytes())
    checker = CrossChecker(closed_port_url(), timeout_s=1.0)
    try:
        results = [checker.check(record) for _ in range(CROSSCHECK_MAX_CONSECUTIVE_FAILURES + 2)]
    finally:
        checker.close()
    assert all(r["status"] == "unavailable" for r in results)
    tried = results[:CROSSCHECK_MAX_CONSECUTIVE_FAILURES]
    assert all("ConnectError" in r["error"] for r in tried)
    assert all(r["error"].startswith("skipped") for r in results[len(tried) :])


def test_a_record_served_by_another_server_is_no_second_source() -> None:
    """The citation gate refuses a redirect to another server; so does the cross-check (a
    review: it followed one and compared what came back)."""
    record = parse_rechtspraak(corpus_file(SMALL).read_bytes())
    with FakeRechtspraak() as asked, FakeRechtspraak() as elsewhere:
        asked.set(record.ecli, redirect_to=elsewhere.url)
        checker = CrossChecker(asked.url, timeout_s=10.0)
        try:
            result = checker.check(record)
        finally:
            checker.close()
    assert result["status"] == "unavailable"
    assert result["error"] == "redirected to another server"


def test_only_the_same_server_or_its_https_counts() -> None:
    """The cross-check's every hop: the host and port asked, by the same scheme or https."""
    asked = "https://data.rechtspraak.nl/uitspraken/content"
    assert same_server(asked, httpx.URL("https://data.rechtspraak.nl/other?id=1"))
    assert not same_server(asked, httpx.URL("http://data.rechtspraak.nl/uitspraken/content"))
    assert not same_server(asked, httpx.URL("https://evil.example/uitspraken/content"))
    assert not same_server(asked, httpx.URL("https://data.rechtspraak.nl:8443/content"))
    assert same_server("http://127.0.0.1:8799/c", httpx.URL("https://127.0.0.1:8799/c"))
