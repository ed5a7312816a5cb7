"""The layering rules a reviewer relies on, checked on the source tree itself.

1. Only a domain's repository (``repository.py``, ``*_repository.py`` or a ``repository``
   package) and the database plumbing in ``app/db/`` run SQL. A reviewer who wants every
   statement that touches ``chunks`` reads ``sql/*.sql`` and the repositories, nothing else.
2. No module grows past what one person can hold in their head.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "connectors")

# Database plumbing: connections, the embedded server, migrations, the SQL loader.
PLUMBING = {"app/db/engine.py", "app/db/embedded.py", "app/db/migrate.py", "app/db/sqlfiles.py",
            "app/db/replicas.py", "app/db/runtime.py", "app/db/snapshot.py",
            "app/db/backend_priority.py", "app/db/function_sources.py"}

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
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        offenders += [f"{rel}:{line}: {what}" for line, what in sql_uses(tree)]
    assert not offenders, (
        "SQL outside a repository (move the statement into sql/<domain>.sql and call it "
        "from the domain's repository.py):\n" + "\n".join(offenders)
    )


def test_the_scanner_sees_sql() -> None:
    """The rule above is only as good as its scanner: it must recognise each form."""
    sample = ast.parse(
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
