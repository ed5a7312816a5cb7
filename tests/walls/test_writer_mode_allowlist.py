"""Writer mode (app.walls.access.mark_writer) bypasses the chunks RLS backstop, so who may use
it is a list in this file, not a convention. The test reads the source tree (AST, no
imports) and fails when a module outside the list imports or calls mark_writer, when anything
but mark_writer reaches the repository function behind it, or when any module or SQL block
other than that one enters the writer role (ewall_writer) itself."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.sources import parse_source

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("app", "connectors", "bench")

# Each entry: why the module needs writer mode (see the rule in mark_writer's docstring).
ALLOWED = {
    "app/walls/access.py": "defines mark_writer",
    "app/walls/retag.py": "re-tag worker: moves chunks to their new wall group (writes)",
    "app/walls/exposure.py": "wall preview: counts every chunk a new wall would move",
    "app/console/repository.py": "console issue page: counts chunks per matter a wall moves",
    "app/ingest/pipeline.py": "ingestion: writes chunks",
    "app/ingest/document_write.py": "a queued push: sets the stored chunks' access (writes)",
    "app/ingest/repository.py": "admin document view: counts the document's chunks",
    "app/caselaw/repository.py": "case-law ingestion (writes) and its admin view (counts)",
    "app/demo/repository.py": "demo loader: counts chunks in its summary (past RLS)",
    "app/matrix/rekey.py": "ids re-keyed to NFC: writes the chunks' client and matter ids",
    "app/reembed/service.py": "re-embedding: writes every chunk's new vector and switches "
    "columns (its last check and its report count every chunk; numbers only)",
}
WRITER_FUNCTIONS = {"mark_writer"}
# only mark_writer itself may reach the statement behind it
INNER = {"set_writer_mode": {"app/walls/access.py", "app/walls/repository.py"}}
RAW_SETTING = "ewall_writer"
RAW_ALLOWED = {"app/walls/access.py"}  # names it in a docstring only


def _modules() -> list[Path]:
    return sorted(p for top in SCANNED for p in (ROOT / top).rglob("*.py"))


def _uses(tree: ast.AST, names: set[str]) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [f"import {a.name}" for a in node.names if a.name in names]
        elif isinstance(node, ast.FunctionDef) and node.name in names:
            found.append(f"def {node.name}")
        elif isinstance(node, ast.Name) and node.id in names:
            found.append(f"name {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in names:
            found.append(f"attribute {node.attr}")
    return found


def test_only_the_allow_list_uses_writer_mode() -> None:
    offenders: dict[str, list[str]] = {}
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        tree = parse_source(path.read_text(encoding="utf-8"), filename=rel)
        uses = _uses(tree, WRITER_FUNCTIONS)
        if uses and rel not in ALLOWED:
            offenders[rel] = uses
        for name, allowed in INNER.items():
            inner = _uses(tree, {name})
            if inner and rel not in allowed:
                offenders[rel] = offenders.get(rel, []) + inner
    assert not offenders, (
        "writer mode (mark_writer) used outside the allow-list; read the rule in "
        f"app/walls/access.py before adding a module here: {offenders}"
    )


def test_nothing_else_sets_the_writer_setting() -> None:
    """No module spells the writer role itself, and exactly one SQL block enters it."""
    spelled = [
        path.relative_to(ROOT).as_posix()
        for path in _modules()
        if RAW_SETTING in path.read_text(encoding="utf-8")
    ]
    assert set(spelled) <= RAW_ALLOWED, spelled
    blocks = [
        path.name
        for path in sorted((ROOT / "sql").glob("*.sql"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if RAW_SETTING in line and not line.lstrip().startswith("--")
    ]
    assert blocks == ["walls.sql"], blocks


def test_every_allowed_module_still_uses_it() -> None:
    """A stale entry would leave room for a new caller to hide behind it."""
    for rel in ALLOWED:
        tree = parse_source((ROOT / rel).read_text(encoding="utf-8"))
        assert _uses(tree, WRITER_FUNCTIONS), rel


def test_the_scan_sees_a_caller_outside_the_list() -> None:
    """The scanner itself: an import and a call of mark_writer are both found."""
    source = "from app.walls.access import mark_writer\n\ndef f(c):\n    mark_writer(c)\n"
    assert len(_uses(parse_source(source), WRITER_FUNCTIONS)) == 2
