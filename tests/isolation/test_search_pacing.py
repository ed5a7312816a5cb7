"""The job worker's documents give way to searches (app/jobs/pacing.py).

The pacing rule is tested on a scripted clock and audit head; the signal itself (the
retrieval chain's head moves with every audited search) and the pipeline's use of the pacer
on a real database."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.ingest.pipeline import IngestPipeline
from app.jobs import repository
from app.jobs.pacing import SearchPacer
from app.settings import Settings
from connectors.base import SourceDocument
from tests.conftest import DbHandle, Tokens
from tests.helpers import Firm


class Script:
    """A clock that moves only when the pacer waits or the test works, and an audit head
    that advances whenever ``searching`` is on (one search per read)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.head = 0
        self.searching = False
        self.reads = 0
        self.fail = False

    def clock(self) -> float:
        return self.now

    def wait(self, seconds: float) -> None:
        self.now += seconds

    def read_head(self) -> int:
        from sqlalchemy.exc import OperationalError

        self.reads += 1
        if self.fail:
            raise OperationalError("SELECT", {}, Exception("server closed the connection"))
        if self.searching:
            self.head += 1
        return self.head

    def work(self, seconds: float, *, searches: int = 0) -> None:
        self.now += seconds
        self.head += searches


@pytest.fixture
def script() -> Script:
    return Script()


def pacer(script: Script, **kw: Any) -> SearchPacer:
    options: dict[str, Any] = {"duty": 0.25, "pause_max_s": 5.0, "quiet_s": 1.0}
    options.update(kw)
    return SearchPacer(script.read_head, clock=script.clock, wait=script.wait, **options)


def test_no_pause_while_nobody_searches(script: Script) -> None:
    p = pacer(script)
    for _ in range(5):
        assert p.pace() == 0.0
        script.work(1.0)
    assert p.pauses == 0


def test_a_document_during_searches_is_followed_by_a_proportional_pause(
    script: Script,
) -> None:
    p = pacer(script, duty=0.25)
    p.pace()  # the first document: nothing to give way to yet
    script.work(0.8, searches=3)
    script.searching = True  # and people keep searching during the pause
    # duty 0.25: three times the 0.8 s the document took
    assert p.pace() == pytest.approx(2.4)
    assert p.pauses == 1 and p.paused_s == pytest.approx(2.4)


def test_the_pause_is_capped(script: Script) -> None:
    p = pacer(script, duty=0.1, pause_max_s=2.0)
    p.pace()
    script.work(10.0, searches=1)
    script.searching = True
    assert p.pace() == pytest.approx(2.0)


def test_the_pause_ends_once_searches_stop(script: Script) -> None:
    p = pacer(script, duty=0.25, quiet_s=0.5)
    p.pace()
    script.work(2.0, searches=1)  # searched during the document, then nobody
    # about quiet_s (to a poll), not the 5 s (capped from 6 s) it would be
    assert p.pace() == pytest.approx(0.5, abs=0.11)


def test_no_starvation_under_continuous_searches(script: Script) -> None:
    """With someone searching all the time the work still gets its duty of the time."""
    p = pacer(script, duty=0.25)
    script.searching = True
    p.pace()
    started = script.now
    worked = 0.0
    for _ in range(20):
        script.work(0.5)
        worked += 0.5
        p.pace()
    assert worked / (script.now - started) == pytest.approx(0.25)


def test_time_between_jobs_is_not_work(script: Script) -> None:
    p = pacer(script)
    p.pace()
    script.work(600.0, searches=5)  # idle between two jobs while people searched
    p.reset()
    assert p.pace() == 0.0
    script.work(0.4, searches=1)
    assert p.pace() == pytest.approx(1.0, abs=0.11)  # ends after quiet_s of no searches


def test_small_pieces_of_work_are_looked_at_together(script: Script) -> None:
    """A crawl of unchanged documents: at most one read per poll interval."""
    p = pacer(script, poll_s=0.1)
    p.pace()
    reads = script.reads
    for _ in range(50):
        script.work(0.001)
        p.pace()
    assert script.reads - reads <= 1


def test_duty_one_never_reads_or_pauses(script: Script) -> None:
    p = pacer(script, duty=1.0)
    script.searching = True
    for _ in range(3):
        script.work(1.0)
        assert p.pace() == 0.0
    assert script.reads == 0


def test_an_unreadable_head_never_fails_or_pauses_the_work(script: Script) -> None:
    p = pacer(script)
    p.pace()
    script.work(1.0, searches=2)
    script.fail = True
    assert p.pace() == 0.0


def test_stopping_ends_a_pause() -> None:
    stop = threading.Event()
    heads = iter(range(1_000_000))
    p = SearchPacer(
        lambda: next(heads), duty=0.01, pause_max_s=600.0, quiet_s=600.0, stop=stop
    )
    p.pace()
    threading.Event().wait(0.15)  # a document's work, while heads keep moving
    stop.set()
    assert p.pace() < 5  # returns at once instead of pausing for a quarter of an hour


def test_an_invalid_duty_is_refused() -> None:
    with pytest.raises(ValueError, match="duty"):
        SearchPacer(lambda: 0, duty=0.0, pause_max_s=1.0, quiet_s=1.0)


# --- on a real database ---------------------------------------------------------------------


@pytest.fixture
def firm(client: TestClient, auth: Tokens) -> Firm:
    f = Firm(client, auth)
    f.person("alice@firm.nl")
    f.client_("C-1", "Acme B.V.")
    f.matter("M-1", "C-1", team=["alice@firm.nl"])
    f.document("m-1", "De huurder is de huur verschuldigd.", client_id="C-1", matter_id="M-1")
    return f


def _head(db: DbHandle) -> int:
    with db.database.connect() as conn:
        return repository.retrieval_head(conn)


def test_every_audited_search_moves_the_signal(firm: Firm, db: DbHandle) -> None:
    before = _head(db)
    firm.search("alice@firm.nl", "huur")
    firm.search("alice@firm.nl", "huurder")
    assert _head(db) == before + 2


def test_the_worker_pacer_gives_way_to_a_real_search(firm: Firm, db: DbHandle) -> None:
    p = SearchPacer.for_database(db.database, duty=0.5, pause_max_s=0.3, quiet_s=30.0)
    p.pace()
    threading.Event().wait(0.2)  # a document's work, nobody searching
    assert p.pace() == 0.0 and p.pauses == 0
    threading.Event().wait(0.2)
    firm.search("alice@firm.nl", "huur")  # someone searched during the next one
    assert p.pace() > 0 and p.pauses == 1


class Recorder:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def pace(self) -> float:
        self.calls.append("pace")
        return 0.0

    def reset(self) -> None:
        self.calls.append("reset")


@pytest.fixture
def pipeline(db: DbHandle, embedder: Any, settings: Settings) -> IngestPipeline:
    return IngestPipeline(db.database, embedder, settings)


def test_the_pipeline_paces_each_document_and_resets_per_run(pipeline: IngestPipeline) -> None:
    recorder = Recorder()
    pipeline.pacer = recorder
    run = pipeline.start_run("folder", {}, "admin@firm.nl")
    for n in range(3):
        doc = SourceDocument(
            source="statutes", external_id=f"art-{n}", text=f"Artikel {n}. De huurder betaalt."
        )
        assert pipeline.ingest(run, doc, public=True).status == "added"
    pipeline.resume_run(run.run_id)
    assert recorder.calls == ["reset", "pace", "pace", "pace", "reset"]


def test_a_pipeline_without_pacer_never_waits(pipeline: IngestPipeline) -> None:
    """The API process's pipeline (synchronous pushes) has none."""
    assert pipeline.pacer is None


def test_a_long_document_gives_way_between_slices_of_its_chunks(
    pipeline: IngestPipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.ingest import pipeline as pipeline_module

    monkeypatch.setattr(pipeline_module, "PACED_SLICE", 2)
    recorder = Recorder()
    pipeline.pacer = recorder
    run = pipeline.start_run("folder", {}, "admin@firm.nl")
    sections = "\n\n".join(
        f"# Artikel {n}\n\n"
        + " ".join(f"Zin {i} van artikel {n} gaat over de huur van perceel {i}." for i in range(30))
        for n in range(1, 5)
    )
    doc = SourceDocument(source="statutes", external_id="long", text=sections)
    outcome = pipeline.ingest(run, doc, public=True)
    assert outcome.status == "added" and outcome.chunks >= 5
    slices = -(-outcome.chunks // 2)
    # once before the document, then once before every slice after the first
    assert recorder.calls == ["reset", "pace"] + ["pace"] * (slices - 1)


class PoolWatcher(Recorder):
    """Records how many pooled connections the pipeline holds at each pause."""

    def __init__(self, database: Any) -> None:
        super().__init__()
        self.database = database
        self.held: list[int] = []

    def pace(self) -> float:
        self.held.append(self.database.engine.pool.checkedout())
        return super().pace()


def test_no_pause_holds_a_transaction_or_a_pooled_connection(
    pipeline: IngestPipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.ingest import pipeline as pipeline_module

    monkeypatch.setattr(pipeline_module, "PACED_SLICE", 2)
    watcher = PoolWatcher(pipeline.database)
    pipeline.pacer = watcher
    run = pipeline.start_run("folder", {}, "admin@firm.nl")
    text = " ".join(f"Zin {i} gaat over de huur van perceel {i} en de borg." for i in range(200))
    doc = SourceDocument(source="statutes", external_id="paced", text=text)
    outcome = pipeline.ingest(run, doc, public=True)
    assert outcome.status == "added" and outcome.chunks >= 3
    # before the document and between its slices: a paused worker keeps no connection busy
    assert len(watcher.held) >= 3 and set(watcher.held) == {0}
