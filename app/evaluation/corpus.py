"""The corpus evaluation sets: Dutch questions over the whole shared corpus.

Two sets ship as JSON lines in ``app/evaluation/data``: ``corpus-nl`` (development: the
starter set's 47 questions plus new ones) and ``corpus-nl-heldout`` (never tuned on: its
first 28 were kept aside while the sparse leg was tuned, 36 more were added in issue 30;
report it, do not tune on it). Every answer is judged at document
level: ``rechtspraak:<ECLI>`` for a decision of ``../shared/corpus/rechtspraak`` and
``wetten:<BWB id>:[<book>:]<article>`` for a statute article the demo loads (cut from
``../shared/corpus/wetgeving``).

The question type is the key's prefix (``question_type``):

- ``para``: a paraphrase written from the legal issue without the decision's words;
- ``own``: reuses words of the decision;
- ``stat``: asks for a statute article;
- ``multi``: several documents are relevant (grade 3 each, related ones lower).

To evaluate: ``ewall demo`` (statutes and the starter decisions), ``ewall ingest
rechtspraak ../shared/corpus/rechtspraak/xml`` (the other decisions), ``ewall eval corpus``
(loads both sets), then ``ewall eval --set corpus-nl`` and ``--set corpus-nl-heldout``.
"""

from __future__ import annotations

from importlib import resources as package_files

from app.db.engine import Database
from app.evaluation.repository import QueryIn
from app.evaluation.sets import import_queries, parse_jsonl

CORPUS_JUDGE = "ewall-corpus"
CORPUS_SET = "corpus-nl"
HELDOUT_SET = "corpus-nl-heldout"
SET_FILES: dict[str, str] = {CORPUS_SET: "corpus_nl.jsonl", HELDOUT_SET: "corpus_nl_heldout.jsonl"}
QUESTION_TYPES = ("para", "own", "stat", "multi")


def question_type(key: str) -> str:
    """The type of a question from its key (``para-12`` -> ``para``); ``other`` if none."""
    prefix = key.split("-", 1)[0].lower()
    return prefix if prefix in QUESTION_TYPES else "other"


def corpus_set(name: str) -> tuple[str, list[QueryIn]]:
    """(description, queries) of a shipped corpus set."""
    if name not in SET_FILES:
        raise ValueError(f"no shipped corpus set {name!r} (known: {', '.join(SET_FILES)})")
    data = package_files.files("app.evaluation").joinpath("data", SET_FILES[name])
    header, queries = parse_jsonl(data.read_text(encoding="utf-8"), CORPUS_JUDGE)
    return header.get("description", ""), queries


def load_corpus_sets(database: Database, *, created_by: str) -> dict[str, int]:
    """Create or refresh both sets (idempotent, like the starter set); name -> queries."""
    out: dict[str, int] = {}
    for name in SET_FILES:
        description, queries = corpus_set(name)
        with database.transaction() as conn:
            import_queries(conn, name, description, created_by, queries, replace=True)
        out[name] = len(queries)
    return out
