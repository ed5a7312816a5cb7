"""Hand-written SQL lives in ``sql/*.sql`` as named blocks, loaded once; sets travel to it
as one array literal (``text_array``).

A block starts with a line ``-- name: <block_name>`` and runs to the next such line.
Blocks are addressed as ``"<file stem>.<block_name>"``, e.g. ``"search.hybrid_exact"``.
The ``sql`` folder is a package, so the files are found with ``importlib.resources`` in a
checkout, an editable install and an installed wheel alike.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from importlib import resources
from importlib.resources.abc import Traversable

from sqlalchemy import TextClause, text

# Execution options of the statements a connection prepares once, and of those of them that
# run their generic plan (app/db/engine.py).
PREPARE_OPTION = "ewall_prepare"
GENERIC_OPTION = "ewall_generic"

_NAME = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)
SQL_PACKAGE = "sql"


def sql_dir() -> Traversable:
    """The folder of ``*.sql`` files, wherever the ``sql`` package was installed."""
    return resources.files(SQL_PACKAGE)


def parse_blocks(source: str) -> dict[str, str]:
    blocks: dict[str, str] = {}
    matches = list(_NAME.finditer(source))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(source)
        body = source[match.end() : end].strip()
        name = match.group(1)
        if name in blocks:
            raise ValueError(f"duplicate SQL block {name!r}")
        blocks[name] = body.rstrip(";").strip() if body.count(";") <= 1 else body
    return blocks


@cache
def load_all() -> dict[str, str]:
    out: dict[str, str] = {}
    files = [f for f in sql_dir().iterdir() if f.is_file() and f.name.endswith(".sql")]
    if not files:
        raise FileNotFoundError(f"no SQL files in the {SQL_PACKAGE!r} package")
    for file in sorted(files, key=lambda f: f.name):
        stem = file.name.removesuffix(".sql")
        for name, body in parse_blocks(file.read_text(encoding="utf-8")).items():
            out[f"{stem}.{name}"] = body
    return out


def raw(name: str) -> str:
    try:
        return load_all()[name]
    except KeyError:
        raise KeyError(f"unknown SQL block {name!r}") from None


@cache
def query(name: str) -> TextClause:
    return text(raw(name))


@cache
def prepared(name: str) -> TextClause:
    """``query(name)`` marked to be prepared once per connection (where the database allows
    it, app/db/engine.py). Only for statements whose result never depends on their plan."""
    return text(raw(name)).execution_options(**{PREPARE_OPTION: True})


@cache
def generic(name: str) -> TextClause:
    """``prepared(name)``, always run with its generic plan (planned once per connection).

    For a statement whose custom planning costs more than running it: the query analysis
    takes about 5 ms to plan and 1-3 ms to run; PostgreSQL's default keeps planning it
    for every search, since its generic plan is estimated dearer. Only for statements whose
    plan does not depend on their parameters' values (no constant folded into the plan's
    shape, no index chosen by a value)."""
    return text(raw(name)).execution_options(**{PREPARE_OPTION: True, GENERIC_OPTION: True})


@lru_cache(maxsize=4096)
def text_array(values: tuple[str, ...]) -> str:
    """``values`` as one PostgreSQL array literal, for a parameter the SQL casts itself
    (``CAST(:p AS text[])``): the server parses it exactly as it parses a bound list.

    psycopg dumps a Python list element by element, about 1 ms per thousand elements on this
    project's machines, and a person allowed a thousand wall groups paid that for every
    statement that carries the set (RLS settings, group sizes, the search). One person's set
    is the same tuple for as long as the policy stands, so the literal is built once."""
    quoted = ('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"' for value in values)
    return "{" + ",".join(quoted) + "}"
