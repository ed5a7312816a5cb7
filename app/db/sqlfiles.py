"""Hand-written SQL lives in ``sql/*.sql`` as named blocks, loaded once.

A block starts with a line ``-- name: <block_name>`` and runs to the next such line.
Blocks are addressed as ``"<file stem>.<block_name>"``, e.g. ``"search.hybrid_exact"``.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from sqlalchemy import TextClause, text

_NAME = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)


def sql_dir() -> Path:
    here = Path(__file__).resolve()
    for candidate in (here.parents[2] / "sql", here.parents[1] / "sql"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("sql/ folder not found next to the app package")


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
    for path in sorted(sql_dir().glob("*.sql")):
        for name, body in parse_blocks(path.read_text(encoding="utf-8")).items():
            out[f"{path.stem}.{name}"] = body
    return out


def raw(name: str) -> str:
    try:
        return load_all()[name]
    except KeyError:
        raise KeyError(f"unknown SQL block {name!r}") from None


@cache
def query(name: str) -> TextClause:
    return text(raw(name))
