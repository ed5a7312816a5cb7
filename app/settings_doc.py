"""docs/settings.md, written from the ``Settings`` class so that the reference cannot drift.

Each row is one field: its environment name, type with bounds, default and the field's own
``description``. Fields are grouped under the ``# --- group ---`` comments of
``app/settings.py`` in the order the class declares them. ``ewall settings doc`` prints the
page; ``tests/contract/test_docs.py`` fails when the committed page differs, and checks the
README's setting rows against :func:`readme_row`.
"""

from __future__ import annotations

import inspect
import io
import re
import tokenize
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import SecretStr
from pydantic.fields import FieldInfo

from app.settings import Settings

PREFIX = "EWALL_"
_GROUP = re.compile(r"#\s*---\s*(?P<name>.*?)\s*-*\s*$")
_FIELD = re.compile(r"^\s{4}(?P<name>[a-z_][a-z0-9_]*)\s*:")


def env_name(field_name: str) -> str:
    """The variable a setting is read from: EWALL_ and its name, or the name it is given (a
    library's own variable)."""
    alias = Settings.model_fields[field_name].validation_alias
    return alias if isinstance(alias, str) else f"{PREFIX}{field_name.upper()}"


def _groups() -> dict[str, str]:
    """Field name -> the heading of the ``# --- ... ---`` comment above it."""
    source = inspect.getsource(Settings)
    current = "general"
    found: dict[str, str] = {}
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    comments = {tok.start[0]: tok.string for tok in tokens if tok.type == tokenize.COMMENT}
    for number, line in enumerate(source.splitlines(), start=1):
        comment = _GROUP.match(comments.get(number, ""))
        if comment:
            current = comment.group("name")
            continue
        field = _FIELD.match(line)
        if field and field.group("name") in Settings.model_fields:
            found.setdefault(field.group("name"), current)
    return found


def _type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin is Literal:
        return " | ".join(str(arg) for arg in get_args(annotation))
    if origin in (Union, types.UnionType):
        names = [_type_name(arg) for arg in get_args(annotation) if arg is not type(None)]
        return " | ".join(names)
    if annotation is SecretStr:
        return "secret"
    if annotation is Path:
        return "path"
    if annotation is str:
        return "string"
    return getattr(annotation, "__name__", str(annotation))


def _bounds(info: FieldInfo) -> str:
    parts = []
    for item in info.metadata:
        if isinstance(item, annotated_types.Ge):
            parts.append(f">= {item.ge}")
        elif isinstance(item, annotated_types.Gt):
            parts.append(f"> {item.gt}")
        elif isinstance(item, annotated_types.Le):
            parts.append(f"<= {item.le}")
        elif isinstance(item, annotated_types.Lt):
            parts.append(f"< {item.lt}")
    return ", ".join(parts)


def type_text(info: FieldInfo) -> str:
    bounds = _bounds(info)
    name = _type_name(info.annotation)
    return f"{name} ({bounds})" if bounds else name


def default_text(info: FieldInfo) -> str:
    value = info.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if value == "":
        return '`""`'
    return f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def readme_row(field_name: str) -> str:
    """The README's row for one setting: name, default, description, exactly the code's."""
    info = Settings.model_fields[field_name]
    description = _cell(info.description or "")
    return f"| `{env_name(field_name)}` | {default_text(info)} | {description} |"


def render() -> str:
    """The whole of docs/settings.md."""
    groups = _groups()
    lines = [
        "# Settings",
        "",
        "<!-- Written by `ewall settings doc > docs/settings.md` (`make settings-doc`) from",
        "     app/settings.py; edit the field descriptions there, not this file. -->",
        "",
        "Every setting comes from the environment with the prefix `EWALL_` (or a `.env` file",
        "in the working directory); nothing else reads the environment. The README lists the",
        "ones an operator sets; this page lists all "
        f"{len(Settings.model_fields)}, grouped as `app/settings.py` declares them.",
        "A value outside the bounds stops the service at start-up.",
    ]
    current = None
    for name, info in Settings.model_fields.items():
        group = groups.get(name, "general")
        if group != current:
            current = group
            lines += [
                "",
                f"## {group[0].upper()}{group[1:]}",
                "",
                "| setting | type | default | description |",
                "|---|---|---|---|",
            ]
        lines.append(
            f"| `{env_name(name)}` | {_cell(type_text(info))} | {default_text(info)} "
            f"| {_cell(info.description or '')} |"
        )
    return "\n".join(lines) + "\n"
