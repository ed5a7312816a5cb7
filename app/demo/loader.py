"""Load the demo firm into a database, idempotently.

Order matters and is part of the demonstration:

1. the conflict matrix (people, clients, matters, parties, teams), except one matter;
2. the walls, matched by title so a second load issues none (and a lifted demo wall is
   never re-issued behind the conflicts partner's back);
3. the matter "opened later": a client-level wall must cover it although it did not exist
   when the wall was issued;
4. public case law (through the Rechtspraak ingestion) and statutes;
5. the firm's own documents, case law filed into matters as productions, a document with a
   private source ACL and an unfiled scan that must end quarantined;
6. re-tagging drained, so searches work as soon as this returns;
7. the evaluation starter set.

Every step goes through the same code paths as production (``apply_matrix``,
``issue_wall``, ``IngestPipeline``), so running it twice changes nothing: no matrix change
(no policy bump), no new wall, every document ``unchanged``.
"""

from __future__ import annotations

import csv
import logging
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Connection

from app.caselaw.ingest import ingest_rechtspraak_folder
from app.db.engine import Database
from app.demo import documents as demo_docs
from app.demo import firm
from app.demo import repository as demo_repo
from app.demo import vectors as demo_vectors
from app.embeddings import Embedder
from app.evaluation.starter import STARTER_ECLIS, load_starter_set
from app.ingest.pipeline import IngestPipeline, IngestRun
from app.known_vectors import KnownVectors
from app.matrix.schemas import ClientImport, MatterImport, PartyIn, PersonImport
from app.matrix.service import apply_matrix
from app.settings import Settings
from app.walls.retag import run_once
from app.walls.schemas import Protects, WallIn
from app.walls.service import issue_wall, list_walls
from connectors.base import SourceDocument

log = logging.getLogger("ewall.demo")

ACTOR = firm.CONFLICTS_PARTNER  # the conflicts partner sets up the matrix and issues walls
DATA_DIR = Path(__file__).parent / "data"
STATUTE_SOURCE = "wetten"
# Decisions loaded whatever else is chosen, because they show the withdrawal states of
# app.caselaw: one set aside by a higher court, one declared lapsed, one voided (replaced by
# another ECLI) and published as metadata only. None of them is searchable after the load.
WITHDRAWAL_EXAMPLES = (
    "ECLI:NL:RBAMS:2012:BZ5426",
    "ECLI:NL:CRVB:2012:BY5954",
    "ECLI:NL:RBAMS:2007:YB0083",
)

# (phase, done, total): the CLI turns these into progress bars.
Progress = Callable[[str, int, int | None], None]


def _no_progress(phase: str, done: int, total: int | None) -> None:
    return None


# --- the conflict matrix ------------------------------------------------------------------


def _people() -> list[PersonImport]:
    return [
        PersonImport(person_id=p.person_id, name=p.name, aliases=[p.alias]) for p in firm.PEOPLE
    ]


def _clients() -> list[ClientImport]:
    return [
        ClientImport(client_id=c.client_id, name=c.name, parent_id=c.parent_id)
        for c in firm.CLIENTS
    ]


def _matters(*, opened_after_walls: bool) -> list[MatterImport]:
    return [
        MatterImport(
            matter_id=m.matter_id,
            client_id=m.client_id,
            title=m.title,
            status=m.status,
            parties=[PartyIn(name=p.name, role=p.role) for p in m.parties],
            team=list(m.team),
        )
        for m in firm.MATTERS
        if m.opened_after_walls == opened_after_walls
    ]


def _wall_in(wall: firm.DemoWall) -> WallIn:
    return WallIn(
        kind=wall.kind,
        title=wall.title,
        reason=wall.reason,
        protects=Protects(matters=list(wall.protects_matters), clients=list(wall.protects_clients)),
        screened=list(wall.screened),
        allowed=list(wall.allowed),
        include_team=wall.include_team,
        effective_from=wall.effective_from,
        effective_until=wall.effective_until,
    )


def _issue_walls(conn: Connection) -> tuple[list[str], list[str]]:
    """Issue the demo walls that do not exist yet; (issued titles, existing titles)."""
    existing = {w.title for w in list_walls(conn, None)}
    issued: list[str] = []
    for wall in firm.WALLS:
        if wall.title in existing:
            continue
        issue_wall(conn, _wall_in(wall), ACTOR)
        issued.append(wall.title)
    return issued, [w.title for w in firm.WALLS if w.title in existing]


# --- case law: which decisions, from where ------------------------------------------------


@dataclass(frozen=True)
class CaseLawSelection:
    files: dict[str, Path]  # ECLI -> XML file
    origin: str  # "corpus" (../shared/corpus) or "package" (app/demo/data)
    starter_set: bool  # chosen by the evaluation starter set
    missing: tuple[str, ...]  # wanted but not available


def _read_manifest(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def select_case_law(settings: Settings) -> CaseLawSelection:
    """The decisions to load: the starter set's decisions from the shared corpus
    when it is there, else everything shipped in the package."""
    exhibit_eclis = [ecli for _, ecli, _ in demo_docs.EXHIBITS]
    corpus = Path(settings.corpus_dir).expanduser() / "rechtspraak"
    manifest = corpus / "manifest.tsv"
    if manifest.is_file():
        rows = _read_manifest(manifest)
        by_ecli: dict[str, Path] = {}
        for row in rows:
            by_ecli.setdefault(row["ecli"], corpus / row["file"])
        wanted = list(STARTER_ECLIS)
        # The productions are public decisions too: the same text, stored twice, is
        # embedded once (the pipeline reuses vectors by content hash).
        wanted += [e for e in (*exhibit_eclis, *WITHDRAWAL_EXAMPLES) if e not in wanted]
        files = {e: by_ecli[e] for e in wanted if e in by_ecli and by_ecli[e].is_file()}
        missing = tuple(e for e in wanted if e not in files)
        return CaseLawSelection(files, "corpus", True, missing)
    shipped = DATA_DIR / "rechtspraak"
    files = {
        row["ecli"]: shipped / Path(row["file"]).name
        for row in _read_manifest(shipped / "manifest.tsv")
    }
    return CaseLawSelection(files, "package", False, ())


@contextmanager
def _staged(files: dict[str, Path]) -> Iterator[Path]:
    """The selected files in a folder of their own, for the folder ingestion."""
    with tempfile.TemporaryDirectory(prefix="ewall-demo-caselaw-") as tmp:
        folder = Path(tmp)
        for path in sorted(set(files.values())):
            shutil.copyfile(path, folder / path.name)
        yield folder


def _ingest_case_law(
    pipeline: IngestPipeline, selection: CaseLawSelection, progress: Progress
) -> dict[str, Any]:
    total = len(selection.files)
    progress("case law", 0, total)
    with _staged(selection.files) as folder:
        return ingest_rechtspraak_folder(
            pipeline,
            folder,
            started_by=ACTOR,
            on_progress=lambda done, _total: progress("case law", done, total),
        )


# --- statutes -----------------------------------------------------------------------------


@dataclass(frozen=True)
class StatuteArticle:
    bwb_id: str
    law: str
    cite: str
    book: str
    number: str
    version: str
    body: str

    @property
    def label(self) -> str:
        number = f"{self.book}:{self.number}" if self.book else self.number
        return f"artikel {number} {self.cite}"

    @property
    def external_id(self) -> str:
        number = f"{self.book}:{self.number}" if self.book else self.number
        return f"{self.bwb_id}:{number}"


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _front_matter(raw: str) -> tuple[dict[str, str], str]:
    _, head, rest = raw.split("---\n", 2)
    meta: dict[str, str] = {}
    for line in head.splitlines():
        key, _, value = line.partition(":")
        meta[key.strip()] = value.strip()
    return meta, rest


def statute_articles(folder: Path = DATA_DIR / "wetgeving") -> list[StatuteArticle]:
    """The shipped statute excerpts (cut from ../shared/corpus/wetgeving), one per article."""
    out: list[StatuteArticle] = []
    for path in sorted(folder.glob("*.md")):
        meta, body = _front_matter(path.read_text(encoding="utf-8"))
        for block in body.split("## Artikel ")[1:]:
            number, _, article = block.partition("\n")
            out.append(
                StatuteArticle(
                    bwb_id=meta["bwb_id"],
                    law=meta["titel"],
                    cite=meta["citeertitel"],
                    book=meta.get("boek", ""),
                    number=number.strip(),
                    version=meta["versie"],
                    body=article.strip(),
                )
            )
    return out


def _statute_document(article: StatuteArticle) -> SourceDocument:
    title = article.label[0].upper() + article.label[1:]
    modified = None
    if _ISO_DATE.fullmatch(article.version):
        modified = datetime.fromisoformat(article.version).replace(tzinfo=UTC)
    body = f"{title}\n{article.law} ({article.bwb_id}), versie {article.version}\n\n{article.body}"
    return SourceDocument(
        source=STATUTE_SOURCE,
        external_id=article.external_id,
        title=title,
        doc_type="Wetgeving",
        author=article.law,
        modified_at=modified,
        source_url=f"https://wetten.overheid.nl/{article.bwb_id}",
        text=body,
    )


# --- firm documents -----------------------------------------------------------------------


def _exhibit_documents(selection: CaseLawSelection) -> tuple[list[SourceDocument], list[str]]:
    docs: list[SourceDocument] = []
    missing: list[str] = []
    for matter_id, ecli, title in demo_docs.EXHIBITS:
        path = selection.files.get(ecli)
        if path is None:
            missing.append(ecli)
            continue
        m = firm.matter(matter_id)
        docs.append(
            SourceDocument(
                source=demo_docs.SOURCE,
                external_id=f"{demo_docs.LIBRARY}!{matter_id}.{ecli}",
                title=title,
                doc_type="Jurisprudentie",
                client_id=m.client_id,
                matter_id=matter_id,
                author=firm.person(m.team[0]).name,
                modified_at=datetime.combine(
                    demo_docs.DEMO_TODAY - timedelta(days=20), datetime.min.time(), tzinfo=UTC
                ),
                content=path.read_bytes(),
                mime_type="application/xml",
            )
        )
    return docs, missing


def _ingest_firm(
    pipeline: IngestPipeline, selection: CaseLawSelection, progress: Progress
) -> tuple[dict[str, Any], list[str]]:
    statutes = [_statute_document(a) for a in statute_articles()]
    exhibits, missing = _exhibit_documents(selection)
    firm_docs = demo_docs.firm_documents()
    run: IngestRun = pipeline.start_run(
        "demo",
        {"statutes": len(statutes), "exhibits": len(exhibits), "firm_documents": len(firm_docs)},
        ACTOR,
    )
    total = len(statutes) + len(exhibits) + len(firm_docs)
    done = 0
    progress("statutes and firm documents", 0, total)
    for doc in statutes:
        pipeline.ingest(run, doc, public=True)
        done += 1
        progress("statutes and firm documents", done, total)
    for doc in exhibits + firm_docs:
        pipeline.ingest(run, doc)
        done += 1
        progress("statutes and firm documents", done, total)
    return pipeline.finish_run(run), missing


# --- the load -----------------------------------------------------------------------------


def is_empty(database: Database) -> bool:
    """No matters and no documents: nothing a demo load could collide with."""
    with database.transaction() as conn:
        return not demo_repo.has_matters_or_documents(conn)


def load_demo(
    database: Database,
    settings: Settings,
    embedder: Embedder | None = None,
    *,
    progress: Progress | None = None,
    known: KnownVectors | None = None,
) -> dict[str, Any]:
    """Load (or re-load, changing nothing) the demo firm; returns a summary. ``known``:
    vectors to take instead of encoding (default: the shipped ones, app/demo/vectors.py)."""
    report = progress or _no_progress
    started = time.perf_counter()

    report("conflict matrix", 0, 2)
    with database.transaction() as conn:
        before = apply_matrix(
            conn,
            actor=ACTOR,
            people=_people(),
            clients=_clients(),
            matters=_matters(opened_after_walls=False),
            action="demo.load",
            may_widen_walls=True,  # the demo firm's own conflicts desk
        )
    report("conflict matrix", 1, 2)
    report("walls", 0, len(firm.WALLS))
    with database.transaction() as conn:
        issued, existing = _issue_walls(conn)
    report("walls", len(firm.WALLS), len(firm.WALLS))
    with database.transaction() as conn:
        later = apply_matrix(
            conn,
            actor=ACTOR,
            matters=_matters(opened_after_walls=True),
            action="demo.load",
            may_widen_walls=True,  # the demo firm's own conflicts desk
        )
    report("conflict matrix", 2, 2)
    timings = {"matrix_and_walls_s": time.perf_counter() - started}

    if embedder is None:
        embedder = Embedder(settings)
    pipeline = IngestPipeline(database, embedder, settings)
    pipeline.hold_runs = True  # the loader runs its work itself: a killed load's runs end
    pipeline.known = known if known is not None else demo_vectors.load(embedder)
    taken_before = pipeline.known.taken if pipeline.known is not None else 0
    encoded_before = embedder.encoded_texts
    selection = select_case_law(settings)
    mark = time.perf_counter()
    caselaw_report = _ingest_case_law(pipeline, selection, report)
    timings["case_law_s"] = time.perf_counter() - mark
    mark = time.perf_counter()
    firm_report, missing_exhibits = _ingest_firm(pipeline, selection, report)
    timings["statutes_and_firm_documents_s"] = time.perf_counter() - mark
    # the encoder's share of both ingestion steps: on two CPU cores it is most of the load
    timings["embedding_s"] = pipeline.timings["embed_s"]
    vectors = {
        # chunks whose vector was taken from the known (shipped) ones, and texts encoded
        "known": pipeline.known.taken - taken_before if pipeline.known is not None else 0,
        "encoded": embedder.encoded_texts - encoded_before,
    }

    report("re-tagging", 0, None)
    mark = time.perf_counter()
    retag = run_once(database, settings.retag_batch_size)
    report("re-tagging", retag.matters_done, retag.matters_done)

    report("starter set", 0, 1)
    starter_set = load_starter_set(database, created_by=ACTOR)
    report("starter set", 1, 1)
    timings["retag_and_starter_set_s"] = time.perf_counter() - mark

    with database.transaction() as conn:
        counts = demo_repo.summary_counts(conn)
        quarantined = demo_repo.quarantined_documents(conn)
    documents_changed = sum(
        r.get("counts", {}).get(name, 0)
        for r in (caselaw_report, firm_report)
        for name in ("added", "updated", "deleted")
    )
    summary: dict[str, Any] = {
        "firm": firm.FIRM_NAME,
        **counts,
        # False on a repeated load: nothing in the matrix, the walls or the documents moved
        "changed": bool(before.changed or later.changed or issued or documents_changed),
        "matrix_changed": before.changed or later.changed,
        "walls_issued": issued,
        "walls_existing": existing,
        "case_law": {
            "origin": selection.origin,
            "selected_by": "starter set" if selection.starter_set else "demo subset",
            "files": len(selection.files),
            "missing": list(selection.missing),
            "run_id": caselaw_report.get("run_id"),
            "counts": caselaw_report.get("counts", {}),
            "withdrawal_states": caselaw_report.get("caselaw", {}).get("counts", {}),
        },
        "firm_documents": {
            "run_id": firm_report.get("run_id"),
            "counts": firm_report.get("counts", {}),
            "quarantined": firm_report.get("quarantined", []),
            "missing_exhibits": missing_exhibits,
        },
        "quarantined": quarantined,
        "retagged_chunks": retag.chunks_moved,
        "vectors": vectors,
        "starter_set": starter_set,
        "example_searches": firm.EXAMPLE_SEARCHES,
        "elapsed_s": round(time.perf_counter() - started, 1),
        "timings": {name: round(value, 1) for name, value in timings.items()},
    }
    log.info(
        "demo loaded",
        extra={
            "chunks": counts["chunks"],
            "documents": counts["documents"],
            "elapsed_s": summary["elapsed_s"],
        },
    )
    return summary


def load_demo_if_empty(
    database: Database, settings: Settings, embedder: Embedder | None = None
) -> dict[str, Any] | None:
    """``ewall serve --demo-if-empty``: load the demo into an empty database only."""
    if not is_empty(database):
        log.info("database not empty; demo not loaded")
        return None
    return load_demo(database, settings, embedder)


__all__ = [
    "ACTOR",
    "CaseLawSelection",
    "Progress",
    "StatuteArticle",
    "is_empty",
    "load_demo",
    "load_demo_if_empty",
    "select_case_law",
    "statute_articles",
]
