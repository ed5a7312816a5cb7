"""The import structure of ``app/`` and ``connectors/`` (read from the source with `ast`):

* no cycle among module-level imports (what runs when a module is imported; imports under
  ``if TYPE_CHECKING:`` do not run and are left out);
* no import of an in-repo module inside a function, which is how a cycle gets hidden, unless
  the module is in `FUNCTION_IMPORTS_ALLOWED` with the reason. Lazy imports of heavy
  third-party libraries (torch, rich) are not in-repo and are not checked.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

from tests.sources import parse_source

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "connectors")

# module -> why its functions may import in-repo modules.
_CLI = (
    "a command's machinery (database, embedding model, pipeline: seconds of imports) "
    "loads when that command runs, so `ewall --help` and the other commands stay fast"
)
FUNCTION_IMPORTS_ALLOWED: dict[str, str] = {
    "app.cli": _CLI,
    "app.demo.cli": _CLI,
    "app.evaluation.cli": _CLI,
    "app.ingest.cli": _CLI,
    "app.model.cli": _CLI,
    "app.reembed.cli": _CLI,
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """Dotted names a statement imports, relative ones resolved; for ``from X import a`` both
    X and X.a (X.a counts only where it is a module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def _module_level(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports that run on import: the module body and class bodies, into if/try/with
    blocks, not into functions, not under ``if TYPE_CHECKING:``."""
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node):
            todo.extend(node.orelse)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        else:
            todo.extend(ast.iter_child_nodes(node))


def _function_level(tree: ast.Module) -> Iterator[tuple[str, ast.Import | ast.ImportFrom]]:
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    yield fn.name, node


def _in_repo(name: str, modules: dict[str, Path], importer: str) -> list[str]:
    """The in-repo modules that importing ``name`` runs: each package on the way and the
    module itself, except the importer's own packages (already initialised by then)."""
    parts = name.split(".")
    out = []
    for i in range(1, len(parts) + 1):
        prefix = ".".join(parts[:i])
        if prefix in modules and prefix != importer and not importer.startswith(prefix + "."):
            out.append(prefix)
    return out


def _graph() -> tuple[nx.DiGraph, list[str]]:
    modules = _modules()
    graph: nx.DiGraph = nx.DiGraph()
    hidden: list[str] = []
    for module, path in modules.items():
        graph.add_node(module)
        tree = parse_source(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in _module_level(tree):
            for name in _imported(module, is_package, node):
                for target in _in_repo(name, modules, module):
                    graph.add_edge(module, target, line=node.lineno)
        if module in FUNCTION_IMPORTS_ALLOWED:
            continue
        for function, node in _function_level(tree):
            targets = {
                t
                for name in _imported(module, is_package, node)
                for t in _in_repo(name, modules, module)
            }
            if targets:
                hidden.append(
                    f"{path.relative_to(ROOT)}:{node.lineno} {function}() imports "
                    f"{', '.join(sorted(targets))}"
                )
    return graph, hidden


def test_no_module_level_import_cycle() -> None:
    graph, _ = _graph()
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not cycles, f"import cycles among module-level imports: {cycles}"


def test_no_in_repo_import_inside_a_function() -> None:
    _, hidden = _graph()
    assert not hidden, (
        "in-repo imports inside functions (move them to module level, or break "
        "the cycle they hide):\n" + "\n".join(hidden)
    )


def test_the_checker_sees_a_cycle_and_a_hidden_import(tmp_path: Path) -> None:
    """The checks above would fail on the patterns they look for."""
    tree = parse_source("from app import b\nclass C:\n    import app.c\n")
    assert sorted(str(getattr(n, "module", None)) for n in _module_level(tree)) == ["None", "app"]
    graph: nx.DiGraph = nx.DiGraph([("app.a", "app.b"), ("app.b", "app.a")])
    assert any(len(c) > 1 for c in nx.strongly_connected_components(graph))
    hidden = parse_source("def f():\n    from app.caselaw import parse\n")
    found = [fn for fn, _ in _function_level(hidden)]
    assert found == ["f"]
    guarded = parse_source(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app import x\n"
    )
    assert [getattr(n, "module", None) for n in _module_level(guarded)] == ["typing"]
    relative = parse_source("from ..caselaw import ingest").body[0]
    assert isinstance(relative, ast.ImportFrom)
    assert _imported("app.ingest.runs", False, relative) == ["app.caselaw", "app.caselaw.ingest"]
