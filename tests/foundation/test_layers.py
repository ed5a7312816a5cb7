"""The layering rules a reviewer relies on, checked on the source tree itself.

1. Only a domain's repository (``repository.py``, ``*_repository.py`` or a ``repository``
   package) and the database plumbing in ``app/db/`` run SQL. A reviewer who wants every
   statement that touches ``chunks`` reads ``sql/*.sql`` and the repositories, nothing else.
2. No module grows past what one person can hold in their head.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from app.db.sqlfiles import parse_blocks
from tests.sources import parse_source

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "connectors")

# Database plumbing: connections, the embedded server, migrations, the SQL loader.
PLUMBING = {"app/db/engine.py", "app/db/embedded.py", "app/db/migrate.py", "app/db/sqlfiles.py",
            "app/db/replicas.py", "app/db/runtime.py", "app/db/snapshot.py",
            "app/db/backend_priority.py", "app/db/function_sources.py", "app/db/clock.py"}

# Calls that run SQL on a connection or build a statement.
RUNS_SQL = {"execute", "exec_driver_sql", "scalar", "scalars", "executemany"}
BUILDS_SQL = {"text", "select", "insert", "update", "delete"}
LOADS_SQL = {"query", "raw"}  # app.db.sqlfiles

MAX_LINES = 800


def modules() -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def is_repository(rel: str) -> bool:
    path = Path(rel)
    return (
        path.name == "repository.py"
        or path.name.endswith("_repository.py")
        or "repository" in path.parts[:-1]
        or rel in PLUMBING
    )


def sql_uses(tree: ast.AST) -> list[tuple[int, str]]:
    sqlalchemy_names: set[str] = set()
    sqlfiles_aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                name = alias.asname or alias.name
                if node.module.startswith("sqlalchemy") and alias.name in BUILDS_SQL:
                    sqlalchemy_names.add(name)
                if node.module == "app.db.sqlfiles" and alias.name in LOADS_SQL:
                    sqlalchemy_names.add(name)
                if node.module == "app.db" and alias.name == "sqlfiles":
                    sqlfiles_aliases.add(name)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in RUNS_SQL and not (
                isinstance(func.value, ast.Name) and func.value.id in {"re", "self"}
            ):
                found.append((node.lineno, f".{func.attr}()"))
            elif isinstance(func.value, ast.Name) and (
                func.value.id in sqlfiles_aliases
                or (func.value.id in {"sa", "sqlalchemy"} and func.attr in BUILDS_SQL)
            ):
                found.append((node.lineno, f"{func.value.id}.{func.attr}()"))
        elif isinstance(func, ast.Name) and func.id in sqlalchemy_names:
            found.append((node.lineno, f"{func.id}()"))
    return found


def test_only_repositories_run_sql() -> None:
    offenders: list[str] = []
    for path in modules():
        rel = path.relative_to(ROOT).as_posix()
        if is_repository(rel):
            continue
        tree = parse_source(path.read_text(encoding="utf-8"), filename=rel)
        offenders += [f"{rel}:{line}: {what}" for line, what in sql_uses(tree)]
    assert not offenders, (
        "SQL outside a repository (move the statement into sql/<domain>.sql and call it "
        "from the domain's repository.py):\n" + "\n".join(offenders)
    )


def test_the_scanner_sees_sql() -> None:
    """The rule above is only as good as its scanner: it must recognise each form."""
    sample = parse_source(
        "from sqlalchemy import text\n"
        "from app.db import sqlfiles\n"
        "conn.execute(text('select 1'))\n"
        "sqlfiles.query('search.hybrid_exact')\n"
        "conn.scalar(x)\n"
    )
    kinds = {what for _, what in sql_uses(sample)}
    assert kinds == {".execute()", "text()", "sqlfiles.query()", ".scalar()"}


def test_no_module_is_too_long() -> None:
    long = []
    for package in (*PACKAGES, "bench", "migrations", "tests"):
        for path in sorted((ROOT / package).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_LINES and "versions" not in path.parts:
                long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not long, f"modules over {MAX_LINES} lines (split by concern):\n" + "\n".join(long)


# --- 3. one visibility rule ------------------------------------------------------------------
# Every statement in sql/ that reads chunks on behalf of a person carries the one visibility
# rule, ewall_chunk_visible (sql/functions/chunk_visible.v1.sql: allowed wall groups and
# source ACLs, no matter pending re-tag, not suppressed), once per read of chunks, on that
# read's alias, with the pending matters read once per statement. Row-level security on
# chunks stays the backstop; this is the rule a reviewer can read in each statement.

SQL_DIR = ROOT / "sql"
RULE = "ewall_chunk_visible"
PENDING = "(SELECT ewall_retag_pending())"
RULE_COLUMNS = ("wall_group_id", "source_acl_id", "matter_id", "suppressed")

# Statements that read chunks for no person: they write, maintain or count every chunk.
READS_FOR_NO_PERSON = {
    "caselaw.set_chunks_suppressed": "writer: withdraws or restores a ruling's chunks",
    "caselaw.case_document": "admin's case-law view: counts of all and searchable chunks",
    "console.chunks_per_matter": "writer mode: counts what a wall would re-tag, no rows",
    "demo.summary_counts": "writer mode: the demo loader's whole-firm counts",
    "functions/pending_counts.v1.sql": (
        "numbers only: the chunks of matters pending re-tag, hidden from everyone, that a "
        "person's statistics leave out"
    ),
    "functions/search_postings.v1.sql": (
        "writer's statement triggers: a touched document's postings rebuilt from its chunks"
    ),
    "ids.not_nfc": "ewall ids check: which stored ids are not NFC, and in how many rows",
    "ids.move_chunk_clients": "writer: ewall ids normalize re-keys the chunks' client ids",
    "ids.move_chunk_matters": "writer: ewall ids normalize re-keys the chunks' matter ids",
    "ingest.document_passages": "writer: ingestion diffs a document's chunks and contexts",
    "ingest.refresh_embeddings": "writer: ingestion re-encodes kept chunks after a context change",
    "ingest.touch_embeddings": "writer: a re-embed run forgets next vectors of a changed context",
    "ingest.embeddings_by_content": "writer: ingestion reuses vectors by content hash",
    "ingest.delete_chunks": "writer: ingestion removes a document's dropped chunks",
    "ingest.update_chunk_metadata": "writer: ingestion moves unchanged chunks to new metadata",
    "ingest.update_chunk_positions": "writer: ingestion renumbers unchanged chunks",
    "ingest.set_document_acl": "writer: a sync applies the rules it read, or hides a document",
    "ingest_runs.document_summary": "admin's document view: a chunk count",
    "pipeline.document_fingerprint": "ingestion's skip test: a document's chunk count",
    "reembed.count_chunks": "writer: the re-embed run's progress",
    "reembed.missing_batch": "writer: the re-embed worker's next chunks to encode",
    "reembed.any_missing": "writer: whether the re-embed worker is done",
    "reembed.write_batch": "writer: the re-embed worker stores new vectors",
    "reembed.chunk_models": "writer: which model's vectors the chunks hold (tests, report)",
    "sessions.chunks_in_matters": "writer mode: counts what a wall would re-tag, no rows",
    "walls.retag_batch": "the re-tag worker moves a pending matter's chunks",
    "walls.retag_done": "the re-tag worker checks a matter has no chunk left behind",
    "walls.clear_idle_retags": "the re-tag worker checks matters have no chunk to move",
}

_COMMENT = re.compile(r"--[^\n]*")
_NOT_ALIAS = {
    "where", "on", "using", "join", "left", "right", "inner", "full", "cross", "natural",
    "group", "order", "limit", "offset", "for", "set", "union", "except", "intersect",
    "window", "having", "returning", "tablesample", "fetch", "lateral", "and", "or", "select",
}
# a read of chunks (or a partition, or an archived layout) after FROM, JOIN, UPDATE or a comma
# of a FROM list, and its alias if any
_CHUNKS_READ = re.compile(
    r"(?:\b(?:FROM|JOIN|UPDATE)|,)\s+(?:ONLY\s+)?(?:public\.)?"
    r"(chunks(?:_p\d+|_before_\w+)?)\b(?!\s*\()(?:\s+(?:AS\s+)?([a-z_]\w*))?",
    re.IGNORECASE,
)
_RULE_CALL = re.compile(rf"\b{RULE}\s*\(")


def sql_units() -> dict[str, str]:
    """Every statement in sql/*.sql (by ``<file stem>.<block>``) and every function source
    file (``functions/<file>``), comments removed."""
    units: dict[str, str] = {}
    for path in sorted(SQL_DIR.glob("*.sql")):
        for name, body in parse_blocks(path.read_text(encoding="utf-8")).items():
            units[f"{path.stem}.{name}"] = _COMMENT.sub("", body)
    for path in sorted((SQL_DIR / "functions").glob("*.sql")):
        units[f"functions/{path.name}"] = _COMMENT.sub("", path.read_text(encoding="utf-8"))
    return units


def chunk_reads(sql: str) -> list[str]:
    """The alias of each read of chunks (the table's own name when it has none)."""
    out = []
    for m in _CHUNKS_READ.finditer(sql):
        alias = m.group(2)
        out.append(m.group(1) if alias is None or alias.lower() in _NOT_ALIAS else alias)
    return out


def _arguments(sql: str, start: int) -> list[str]:
    """The top-level arguments of the call whose "(" is at ``start``."""
    depth, current = 0, start + 1
    args: list[str] = []
    for i in range(start, len(sql)):
        if sql[i] == "(":
            depth += 1
        elif sql[i] == ")":
            depth -= 1
            if depth == 0:
                return [*args, sql[current:i].strip()]
        elif sql[i] == "," and depth == 1:
            args.append(sql[current:i].strip())
            current = i + 1
    raise ValueError("unbalanced parentheses")


def rule_uses(sql: str) -> tuple[list[str], list[str]]:
    """(the alias each well-formed use of the rule tests, what is wrong with the others)."""
    aliases: list[str] = []
    wrong: list[str] = []
    for m in _RULE_CALL.finditer(sql):
        args = [" ".join(a.split()) for a in _arguments(sql, m.end() - 1)]
        qualifiers = {a.rpartition(".")[0] for a in args[:4]}
        columns = tuple(a.rpartition(".")[2] for a in args[:4])
        if len(args) not in (7, 8) or columns != RULE_COLUMNS or len(qualifiers) != 1:
            wrong.append(f"{RULE}({', '.join(args)}): want the four columns of one alias")
        elif args[6] != PENDING:
            wrong.append(f"{RULE}(...{args[6]}...): the pending matters must be {PENDING}")
        else:
            aliases.append(qualifiers.pop() or "chunks")
    return aliases, wrong


def test_every_read_of_chunks_for_a_person_uses_the_visibility_rule() -> None:
    offenders: list[str] = []
    for name, sql in sql_units().items():
        reads = chunk_reads(sql)
        if not reads or name in READS_FOR_NO_PERSON:
            continue
        aliases, wrong = rule_uses(sql)
        offenders += [f"{name}: {w}" for w in wrong]
        for alias in sorted(set(reads)):
            if aliases.count(alias) < reads.count(alias):
                offenders.append(
                    f"{name}: reads chunks as {alias!r} {reads.count(alias)} time(s), "
                    f"{RULE} tests {alias!r} {aliases.count(alias)} time(s)"
                )
    assert not offenders, (
        f"a statement reads chunks without the visibility rule: add {RULE}(<alias>."
        f"wall_group_id, <alias>.source_acl_id, <alias>.matter_id, <alias>.suppressed, "
        f"<allowed groups>, <allowed ACLs>, {PENDING}) to each read, or, for a statement "
        "that reads chunks for no person, list it in READS_FOR_NO_PERSON with the reason:\n"
        + "\n".join(offenders)
    )


def test_the_list_of_reads_for_no_person_is_current() -> None:
    units = sql_units()
    stale = [n for n in READS_FOR_NO_PERSON if n not in units or not chunk_reads(units[n])]
    assert not stale, f"listed in READS_FOR_NO_PERSON but reading no chunks: {stale}"


def test_the_visibility_scanner_sees_every_form() -> None:
    """The rule above is only as good as its scanner."""
    sample = (
        "SELECT 1 FROM chunks WHERE x; SELECT 2 FROM documents d JOIN chunks AS c ON true;"
        " SELECT 3 FROM documents d, public.chunks_p3 p; UPDATE chunks u SET a = 1;"
        " SELECT 4 FROM ONLY chunks_before_20261201t1 old LEFT JOIN chunks ON true"
    )
    assert chunk_reads(sample) == ["chunks", "c", "p", "u", "old", "chunks"]
    good = f"{RULE}(c.wall_group_id, c.source_acl_id, c.matter_id, c.suppressed, :g, :a, {PENDING})"
    assert rule_uses(good) == (["c"], [])
    bare = f"{RULE}(wall_group_id, source_acl_id, matter_id, suppressed, :g, :a, {PENDING}, false)"
    assert rule_uses(bare) == (["chunks"], [])
    mixed = f"{RULE}(c.wall_group_id, d.source_acl_id, c.matter_id, c.suppressed, :g, :a, {PENDING})"
    per_row = f"{RULE}(c.wall_group_id, c.source_acl_id, c.matter_id, c.suppressed, :g, :a, p)"
    for sql in (mixed, per_row):
        aliases, wrong = rule_uses(sql)
        assert not aliases and len(wrong) == 1, sql
