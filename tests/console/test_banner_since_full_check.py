"""The chain banner verifies, on each page load, only the rows after the position the last
full verification reached (app.console.chain_watch), and says so.

A full verification reads and hashes every row of the log: at a few thousand rows a second,
a firm's year of retrievals made every load of /console/audit take minutes. A row edited
after the position shows at the next load; one edited before it, at the next full
verification; a rewrite that recomputed the position's hash, at once.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.console import chain_watch
from app.console.audit_pages import chain_banner
from tests.conftest import DbHandle
from tests.console.conftest import COMPLIANCE, LAWYER, console_client, sign_in
from tests.helpers import Firm
from tests.search.test_audit_chain import _tamper
from tests.search.test_audit_checkpoints import _rewrite_history


@pytest.fixture
def large(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Makes the log count as large once the first load has verified it in full: later
    loads verify from that load's position (a small log is verified in full every time)."""

    def make_large() -> None:
        monkeypatch.setattr(chain_watch, "INLINE_FULL_ROWS", 0)

    return make_large


def _client(firm: Firm) -> TestClient:
    client = console_client(firm)
    assert sign_in(client, firm.auth, COMPLIANCE, "compliance").status_code == 303
    return client


def _banner(client: TestClient) -> str:
    page = client.get("/console/audit")
    assert page.status_code == 200, page.text
    text = page.text[page.text.index('id="chain-banner"') : page.text.index("</section>")]
    return " ".join(re.sub("<[^>]+>", "", text).split())


def _searches(firm: Firm, n: int) -> None:
    for i in range(n):
        firm.search(LAWYER, f"lekkage {i}")


def _retrievals(report: dict[str, Any]) -> dict[str, Any]:
    chains: dict[str, Any] = report["chains"]
    return dict(chains["retrievals"])


def test_a_page_load_reads_only_the_rows_after_the_full_check(firm: Firm, db: DbHandle, large: Any) -> None:
    _searches(firm, 3)
    client = _client(firm)
    first = _banner(client)  # the first load verifies the small log in full
    assert "Audit chains verified" in first and "retrievals: verified up to sequence 3" in first
    large()
    _searches(firm, 2)
    report = chain_banner(db.database)
    assert report["ok"], report
    retrievals = _retrievals(report)
    # the two new rows, chained on from row 3 (whose hash is checked), not all five
    assert retrievals["checked"] == 2, retrievals
    assert (retrievals["full_through"], retrievals["through"]) == (3, 5)
    words = _banner(client)
    assert "Audit chains verified" in words, words
    assert "retrievals: verified up to sequence 5 (in full through 3, 2 rows after it now)" in (
        words
    ), words
    assert "in full up to the check of" in words


def test_a_row_edited_after_the_full_check_shows_on_the_next_load(firm: Firm, db: DbHandle, large: Any) -> None:
    _searches(firm, 2)
    client = _client(firm)
    assert "Audit chains verified" in _banner(client)
    large()
    _searches(firm, 2)
    _tamper(db, "UPDATE audit_retrievals SET query = 'edited' WHERE seq = 4")
    words = _banner(client)
    assert "AUDIT CHAIN BROKEN" in words, words
    assert "first bad sequence 4 (hash mismatch (row edited))" in words, words
    chain_watch.watch_for(db.database).wait(60)  # the full check the break started


def test_a_row_edited_before_it_shows_after_the_next_full_check(
    firm: Firm, db: DbHandle, monkeypatch: pytest.MonkeyPatch, large: Any
) -> None:
    _searches(firm, 3)
    client = _client(firm)
    assert "Audit chains verified" in _banner(client)
    large()
    _tamper(db, "UPDATE audit_retrievals SET query = 'edited' WHERE seq = 1")
    # the page load does not read row 1 again, and says how far back its claim reaches
    words = _banner(client)
    assert "retrievals: verified up to sequence 3 (in full through 3, 0 rows after it now)" in (
        words
    ), words
    # the next full verification (due: every check is stale now) finds it ...
    monkeypatch.setattr(chain_watch, "REFRESH_S", 0.0)
    monkeypatch.setattr(chain_watch, "DUTY_FACTOR", 0.0)
    _banner(client)
    watch = chain_watch.watch_for(db.database)
    watch.wait(60)
    assert watch.last is not None and not watch.last.ok
    # ... and the banner shows it from then on
    words = _banner(client)
    assert "AUDIT CHAIN BROKEN" in words, words
    assert "first bad sequence 1 (hash mismatch (row edited))" in words, words
    watch.wait(60)


def test_a_rewrite_that_recomputed_the_hashes_shows_at_once(firm: Firm, db: DbHandle, large: Any) -> None:
    _searches(firm, 3)
    client = _client(firm)
    assert "Audit chains verified" in _banner(client)
    large()
    # edited and every hash after it recomputed, head included: the chain verifies on its
    # own, but row 3 no longer has the hash the full verification found
    _rewrite_history(db, 2)
    words = _banner(client)
    assert "AUDIT CHAIN BROKEN" in words, words
    assert "first bad sequence 3 (row 3, verified with hash" in words, words
    chain_watch.watch_for(db.database).wait(60)


def test_a_large_log_is_not_called_intact_before_its_full_check(
    firm: Firm, db: DbHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    _searches(firm, 2)
    _tamper(db, "UPDATE audit_retrievals SET query = 'edited' WHERE seq = 2")
    monkeypatch.setattr(chain_watch, "INLINE_FULL_ROWS", 1)  # too large to verify on a load
    client = _client(firm)
    words = _banner(client)
    assert "Audit chains not verified yet" in words, words
    assert "Audit chains verified" not in words and "intact" not in words
    # the full verification ran in the background; its break is the banner from then on
    chain_watch.watch_for(db.database).wait(60)
    words = _banner(client)
    assert "AUDIT CHAIN BROKEN" in words and "first bad sequence 2" in words, words


def test_a_small_log_edited_anywhere_shows_at_once(firm: Firm, db: DbHandle) -> None:
    """A log small enough to verify in full on a load (INLINE_FULL_ROWS) is, on every load:
    an edit before the last full verification's position shows on the next load, as it did
    before the banner verified from a position."""
    _searches(firm, 3)
    client = _client(firm)
    assert "Audit chains verified" in _banner(client)
    _tamper(db, "UPDATE audit_retrievals SET query = 'edited' WHERE seq = 1")
    words = _banner(client)
    assert "AUDIT CHAIN BROKEN" in words, words
    assert "first bad sequence 1 (hash mismatch (row edited))" in words, words
