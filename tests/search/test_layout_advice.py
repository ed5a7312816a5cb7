"""The chunks layout follows the measurements: one table up to the largest size measured good
(1,000,000 chunks), past it the advice to measure and, if recall falls, to convert to 4 hash
partitions (docs/scale-out.md), from `ewall chunks layout` and the service's start-up.
Nothing converts by itself (an exclusive lock for minutes is the operator's call)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.chunks import service as chunks_service
from app.chunks.repository import Layout
from app.main import advise_layout
from tests.conftest import DbHandle, Tokens, make_client
from tests.helpers import Firm


@pytest.mark.parametrize(
    ("layout", "advised"),
    [
        (Layout(1, "vector", 0, 0), False),
        (Layout(1, "vector", 1_000_000, 1_000_000), False),  # measured: one table is best
        (Layout(1, "vector", 0, 1_000_001), True),  # never analysed: the counted rows decide
        (Layout(1, "halfvec", 2_000_000, 1_990_000), True),
        (Layout(4, "vector", 2_000_000, 2_000_000), False),
        (Layout(16, "vector", 2_000_000, 2_000_000), False),
    ],
)
def test_one_table_is_questioned_only_past_the_size_measured(
    layout: Layout, advised: bool
) -> None:
    text = chunks_service.advice(layout)
    assert (text is not None) == advised
    if text is not None:
        assert "ewall chunks relayout --partitions 4" in text
        assert "EWALL_CHUNK_PARTITIONS=4" in text
        assert "bench.search" in text  # measure first


def test_the_service_says_so_at_start_up_and_changes_nothing(
    client: TestClient,
    auth: Tokens,
    db: DbHandle,
    settings: Any,
    embedder: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    firm = Firm(client, auth)
    firm.client_("C-1", "Acme B.V.")
    firm.matter("M-1", "C-1")
    firm.document("d-1", "Een document over huur.", client_id="C-1", matter_id="M-1")
    firm.document("d-2", "Een document over pacht.", client_id="C-1", matter_id="M-1")
    assert advise_layout(db.database) is None  # two chunks: one table is right

    monkeypatch.setattr(chunks_service, "ADVICE_ROWS", 1)
    with (
        caplog.at_level(logging.WARNING, logger="ewall.main"),
        make_client(db, settings, embedder) as restarted,
    ):
        assert restarted.get("/healthz").status_code == 200
    said = [r.getMessage() for r in caplog.records if "chunks layout" in r.getMessage()]
    assert said and "--partitions 4" in said[0], said
    with db.database.connect() as conn:
        from app.chunks import repository

        assert repository.layout(conn).partitions == 1  # advice only
