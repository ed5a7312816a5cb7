"""The starter relevance set: Dutch questions whose answer is a known Rechtspraak decision.

The set ships as ``app/evaluation/data/starter_set.jsonl`` (no ``../shared`` needed once the
decisions are ingested). Keys ``para-NN`` are paraphrases that avoid the decision's own
words; ``own-NN`` reuse some of them. Every answer is judged at document level, grade 3,
target ``rechtspraak:<ECLI>`` (case law is ingested with source "rechtspraak" and the ECLI
as external id); two pairs of decisions on the same legal question also judge each other
grade 1.

``STARTER_ECLIS`` lists the decisions the demo must ingest for the set to mean anything:
the answers plus distractors on neighbouring tax questions, 60 in all (about 430,000
characters), so ingestion stays within minutes on two cores.
"""

from __future__ import annotations

import csv
import shutil
from collections.abc import Iterator
from importlib import resources as package_files
from pathlib import Path

from app.db.engine import Database
from app.evaluation.repository import QueryIn
from app.evaluation.sets import import_queries, parse_jsonl
from connectors.base import SourceDocument

STARTER_SET_NAME = "starter-rechtspraak"
STARTER_DESCRIPTION = (
    "Starter set: Dutch questions whose answer is a known Rechtspraak decision (document "
    "level, grade 3 for the answer). Keys para-* avoid the decision's own words, own-* "
    "reuse some of them."
)
# the authors of the shipped judgements, kept apart from the people who rate later
STARTER_JUDGE = "ewall-starter"
DATA_FILE = "starter_set.jsonl"

ANSWER_ECLIS: list[str] = [
    "ECLI:NL:HR:1996:AA2015",
    "ECLI:NL:HR:1994:AA3004",
    "ECLI:NL:HR:1995:AA1531",
    "ECLI:NL:HR:1995:AA1561",
    "ECLI:NL:HR:1995:AA1575",
    "ECLI:NL:HR:1995:AA1657",
    "ECLI:NL:HR:1995:AA3039",
    "ECLI:NL:HR:1995:AA3120",
    "ECLI:NL:HR:1995:AA3157",
    "ECLI:NL:HR:1996:AA1742",
    "ECLI:NL:HR:1996:AA1797",
    "ECLI:NL:HR:1996:AA1849",
    "ECLI:NL:HR:1996:AA1899",
    "ECLI:NL:HR:1996:AA1921",
    "ECLI:NL:HR:1996:AA1985",
    "ECLI:NL:HR:1996:AA1991",
    "ECLI:NL:HR:1996:AA1992",
    "ECLI:NL:HR:1996:AA2009",
    "ECLI:NL:HR:1996:AA2016",
    "ECLI:NL:HR:1997:AA2132",
    "ECLI:NL:HR:1992:BA5424",
    "ECLI:NL:RBAMS:2010:BO3979",
    "ECLI:NL:CBB:2001:AA9413",
    "ECLI:NL:RBGEL:2015:6991",
    "ECLI:NL:PHR:2011:BP5608",
    "ECLI:NL:CRVB:2013:1886",
    "ECLI:NL:CBB:2000:AA8268",
    "ECLI:NL:HR:1994:AA2943",
    "ECLI:NL:HR:1995:AA1497",
    "ECLI:NL:HR:1995:AA1526",
    "ECLI:NL:HR:1995:AA1568",
    "ECLI:NL:HR:1995:AA3106",
    "ECLI:NL:HR:1995:AA3148",
    "ECLI:NL:HR:1995:AA3165",
    "ECLI:NL:HR:1996:AA1825",
    "ECLI:NL:HR:1996:AA1846",
    "ECLI:NL:HR:1996:AA1964",
    "ECLI:NL:HR:1996:AA1983",
    "ECLI:NL:HR:1996:AA2031",
    "ECLI:NL:HR:1997:AA2065",
    "ECLI:NL:HR:1997:AA2094",
    "ECLI:NL:HR:1997:AA3187",
    "ECLI:NL:RBDHA:2013:15631",
    "ECLI:NL:RBARN:2006:AY6200",
    "ECLI:NL:RBZWB:2016:1440",
    "ECLI:NL:GHAMS:2011:1684",
    "ECLI:NL:CBB:2000:AA7087",
]
DISTRACTOR_ECLIS: list[str] = [
    "ECLI:NL:HR:1992:AA1835",
    "ECLI:NL:HR:1994:AA2946",
    "ECLI:NL:HR:1994:AA2962",
    "ECLI:NL:HR:1994:AA2974",
    "ECLI:NL:HR:1994:AA2993",
    "ECLI:NL:HR:1995:AA3110",
    "ECLI:NL:HR:1995:AA3116",
    "ECLI:NL:HR:1995:AA3169",
    "ECLI:NL:HR:1996:AA1919",
    "ECLI:NL:HR:1996:AA2005",
    "ECLI:NL:HR:1996:AA2050",
    "ECLI:NL:HR:1997:AA2101",
    "ECLI:NL:HR:1997:AA2123",
]
STARTER_ECLIS: list[str] = ANSWER_ECLIS + DISTRACTOR_ECLIS


def starter_queries() -> list[QueryIn]:
    data = package_files.files("app.evaluation").joinpath("data", DATA_FILE)
    _, queries = parse_jsonl(data.read_text(encoding="utf-8"), STARTER_JUDGE)
    return queries


def load_starter_set(database: Database, *, created_by: str) -> str:
    """Create or refresh the starter set; returns its name. Idempotent: queries are matched
    by key, the shipped judgements (rater ``ewall-starter``) re-graded, queries no longer
    shipped removed; ratings that people added on the rating page are kept."""
    queries = starter_queries()
    with database.transaction() as conn:
        import_queries(
            conn, STARTER_SET_NAME, STARTER_DESCRIPTION, created_by, queries, replace=True
        )
    return STARTER_SET_NAME


def _manifest(folder: Path) -> dict[str, Path]:
    path = folder / "manifest.tsv"
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8", newline="") as handle:
        return {
            row["ecli"]: folder / row["file"]
            for row in csv.DictReader(handle, delimiter="\t")
            if row.get("ecli") and row.get("file")
        }


def starter_files(corpus_dir: Path) -> dict[str, Path]:
    """ECLI -> XML file in ``<corpus_dir>/rechtspraak`` for the starter decisions found there
    (the corpus names files ``ECLI.NL.HR.1996.AA2015.xml`` or ``ECLI_NL_..._.xml``)."""
    folder = corpus_dir / "rechtspraak"
    listed = _manifest(folder)
    out: dict[str, Path] = {}
    for ecli in STARTER_ECLIS:
        candidates = [listed.get(ecli)] + [
            folder / "xml" / (ecli.replace(":", sep) + ".xml") for sep in (".", "_")
        ]
        found = next((p for p in candidates if p is not None and p.is_file()), None)
        if found is not None:
            out[ecli] = found
    return out


def stage_starter_files(corpus_dir: Path, dest: Path) -> list[Path]:
    """Copy the starter decisions into ``dest`` (a folder for ``ingest_rechtspraak_folder``,
    which ingests every XML file under a folder); returns the copies."""
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for ecli, path in starter_files(corpus_dir).items():
        target = dest / (ecli.replace(":", ".") + ".xml")
        shutil.copyfile(path, target)
        out.append(target)
    return out


def starter_documents(corpus_dir: Path) -> Iterator[SourceDocument]:
    """The starter decisions as the case-law pipeline ingests them (public, source
    "rechtspraak", ECLI as external id, the open-data XML as content)."""
    for ecli, path in starter_files(corpus_dir).items():
        yield SourceDocument(
            source="rechtspraak",
            external_id=ecli,
            content=path.read_bytes(),
            mime_type="application/xml",
        )
