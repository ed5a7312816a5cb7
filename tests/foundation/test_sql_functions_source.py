"""Database functions are reviewed source: ``sql/functions/*.sql``, applied by content.

A migration defines a function by naming its source file and the sha256 of the bytes it was
written for (``app.db.function_sources``); it never reads another migration nor edits SQL
text. These checks read the tree only; that the migrations build the committed catalog is
test_schema_snapshot.py (and the round trip in test_migrations.py); the downgrades that put
an earlier version back are checked here, where the snapshot does not look.
"""

from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path

import psycopg
import pytest

from app.db import migrate
from app.db.function_sources import FunctionSourceChanged, function_source
from app.settings import Settings
from tests import pg
from tests.conftest import DbHandle
from tests.sources import parse_source

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = ROOT / "migrations" / "versions"
FUNCTIONS = ROOT / "sql" / "functions"
SCHEMA = ROOT / "migrations" / "schema.sql"

HELPER = "apply_function_source"
# what reads a file or loads a module at run time: a migration has no business with either
READS = {"open", "exec", "eval", "compile", "__import__", "read_text", "read_bytes",
         "spec_from_file_location", "import_module", "module_from_spec", "run_path"}
LOADERS = {"re", "importlib", "runpy", "regex"}
EDITS = {"replace", "sub", "subn", "format", "format_map", "translate", "removeprefix",
         "removesuffix"}
SQL_WORD = re.compile(r"\b(CREATE|ALTER|DROP|SELECT|INSERT|UPDATE|DELETE|FUNCTION|FROM|WITH|"
                      r"WHERE|RETURNS|LANGUAGE|BEGIN|END)\b")
REVISION_FILE = re.compile(r"\d{4}_\d{2}_\d{2}_\d{4}_")
# a function's definition lives in sql/functions/, never in a migration's text
DEFINES_FUNCTION = re.compile(r"\bCREATE\s+(OR\s+REPLACE\s+)?FUNCTION\b", re.I)

SOURCE_FUNCTION = re.compile(
    r"CREATE OR REPLACE FUNCTION (?P<name>\w+)\(.*?\sAS (?P<tag>\$\w*\$)(?P<body>.*?)(?P=tag);",
    re.S,
)
SCHEMA_FUNCTION = re.compile(
    r"^CREATE FUNCTION public\.(?P<name>\w+)\(.*?\n    AS (?P<tag>\$\w*\$)(?P<body>.*?)(?P=tag);",
    re.S | re.M,
)
VERSIONED = re.compile(r"^(?P<stem>[a-z][a-z0-9_]*)\.v(?P<version>[1-9][0-9]*)\.sql$")


def _revisions() -> list[Path]:
    found = sorted(VERSIONS.glob("*.py"))
    assert found
    return found


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound to a string (the migration's own SQL blocks)."""
    out: dict[str, str] = {}
    for node in tree.body:
        target: ast.expr | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        elif isinstance(node, ast.AnnAssign):
            target = node.target
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant | ast.JoinedStr):
            text = value.value if isinstance(value, ast.Constant) else ast.unparse(value)
            if isinstance(text, str):
                out[target.id] = text
    return out


def _sql_text(node: ast.expr, constants: dict[str, str]) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(SQL_WORD.search(node.value))
    if isinstance(node, ast.Name) and node.id in constants:
        return bool(SQL_WORD.search(constants[node.id]))
    return False


def offences(source: str) -> list[str]:
    """What in a migration's source reads another file or edits SQL text."""
    tree = parse_source(source)
    constants = _string_constants(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names
                      if a.name.split(".")[0] in LOADERS]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.split(".")[0] in LOADERS or "versions" in module.split("."):
                found.append(f"{node.lineno}: from {module} import ...")
        elif isinstance(node, ast.Name) and node.id == "__file__":
            found.append(f"{node.lineno}: __file__")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if REVISION_FILE.search(node.value):
                found.append(f"{node.lineno}: names a revision file")
            if DEFINES_FUNCTION.search(node.value):
                found.append(f"{node.lineno}: a function body inline")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in READS:
                found.append(f"{node.lineno}: {name}()")
            # cutting SQL out of a text or putting SQL into it (a migration's own template
            # filled with a number is not borrowed SQL)
            elif (
                isinstance(func, ast.Attribute)
                and name in EDITS
                and any(_sql_text(arg, constants) for arg in node.args)
            ):
                found.append(f"{node.lineno}: .{name}() with SQL text")
    return found


def _pins() -> list[tuple[str, str, str, int]]:
    """(revision file, source file, sha256, line) of every ``apply_function_source`` call."""
    pins: list[tuple[str, str, str, int]] = []
    for path in _revisions():
        for node in ast.walk(parse_source(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == HELPER):
                continue
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            assert len(node.args) == 2 and not node.keywords and len(args) == 2, (
                f"{path.name}:{node.lineno}: {HELPER} takes the file name and its sha256 as "
                "two string literals, so a reviewer sees the pin in the migration"
            )
            pins.append((path.name, str(args[0]), str(args[1]), node.lineno))
    return pins


def _source_functions() -> dict[str, dict[str, str]]:
    """file name -> {function name: body} for every file of sql/functions."""
    out: dict[str, dict[str, str]] = {}
    for path in sorted(FUNCTIONS.glob("*.sql")):
        out[path.name] = {
            m["name"]: m["body"]
            for m in SOURCE_FUNCTION.finditer(path.read_text(encoding="utf-8"))
        }
    return out


def test_no_migration_reads_another_or_edits_sql_text() -> None:
    found = [
        f"{path.name}:{what}"
        for path in _revisions()
        for what in offences(path.read_text(encoding="utf-8"))
    ]
    assert not found, (
        "A migration reads another file or edits SQL text. Put a function in "
        f"sql/functions/<name>.v<N>.sql and apply it with {HELPER}(file, sha256):\n"
        + "\n".join(found)
    )


def test_the_scanner_sees_each_way_of_borrowing_sql() -> None:
    """How revision 0033 once rewrote 0027's function, and the other spellings of it."""
    sample = (
        "import importlib.util\n"
        "import re\n"
        "from pathlib import Path\n"
        "OLD = 'FROM search_document_stats'\n"
        "path = Path(__file__).with_name('2026_12_01_0027_sparse_document_rank.py')\n"
        "text = path.read_text()\n"
        "found = re.search(r'CREATE FUNCTION x.*', text)\n"
        "sql = found.group(0).replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION', 1)\n"
        "sql = sql.replace(OLD, NEW)\n"
    )
    kinds = "\n".join(offences(sample))
    for expected in ("import importlib.util", "import re", "__file__", "names a revision file",
                     "read_text()", ".replace() with SQL text", "a function body inline"):
        assert expected in kinds, expected
    # a migration's own template and a role name check are not SQL borrowed from elsewhere
    own = (
        "TABLES = 'CREATE TABLE t (e vector({dim}))'\n"
        "op.execute(TABLES.replace('{dim}', str(384)))\n"
        "ok = role.replace('_', '').isalnum()\n"
    )
    assert offences(own) == []


def test_each_migration_applies_a_frozen_file_by_its_sha256() -> None:
    pins = _pins()
    assert pins, f"no migration calls {HELPER}"
    wrong: list[str] = []
    for revision, file, sha256, line in pins:
        path = FUNCTIONS / file
        if not VERSIONED.match(file) or not path.is_file():
            wrong.append(f"{revision}:{line}: no file sql/functions/{file} (<name>.v<N>.sql)")
            continue
        found = hashlib.sha256(path.read_bytes()).hexdigest()
        if found != sha256:
            wrong.append(
                f"{revision}:{line}: sql/functions/{file} is {found}, pinned {sha256} "
                "(a file a migration applies is frozen: change the next version instead)"
            )
    assert not wrong, "\n".join(wrong)
    unused = sorted({p.name for p in FUNCTIONS.glob("*.sql")} - {file for _, file, _, _ in pins})
    assert not unused, f"source files no migration applies: {unused}"


def test_every_function_of_the_schema_has_a_source_file() -> None:
    in_schema = {m["name"] for m in SCHEMA_FUNCTION.finditer(SCHEMA.read_text(encoding="utf-8"))}
    assert len(in_schema) >= 10, "the schema parser found too few functions"
    in_sources = {name for functions in _source_functions().values() for name in functions}
    missing = sorted(in_schema - in_sources)
    assert not missing, f"functions of migrations/schema.sql without a sql/functions file: {missing}"


def test_the_newest_source_of_each_function_is_what_the_catalog_holds() -> None:
    """The highest version of a file is the function's current definition: its body is the
    body that migrations/schema.sql (what the migrations build) holds, character for
    character. A new version that no migration applies yet, or a migration that applies an
    older one last, shows here."""
    newest: dict[str, tuple[int, str, str]] = {}
    for file, functions in _source_functions().items():
        match = VERSIONED.match(file)
        assert match, f"sql/functions/{file}: name it <name>.v<N>.sql"
        for name, body in functions.items():
            version = int(match["version"])
            if name not in newest or version > newest[name][0]:
                newest[name] = (version, file, body)
    schema = {
        m["name"]: m["body"] for m in SCHEMA_FUNCTION.finditer(SCHEMA.read_text(encoding="utf-8"))
    }
    differ = [
        f"{name}: sql/functions/{file}"
        for name, (_, file, body) in sorted(newest.items())
        if name in schema and schema[name] != body
    ]
    assert not differ, (
        "the newest source file of these functions is not what migrations/schema.sql holds "
        "(apply it in a migration, then `ewall schema snapshot`):\n" + "\n".join(differ)
    )


def test_a_source_file_is_refused_when_its_bytes_are_not_the_pinned_ones() -> None:
    _, file, sha256, _ = _pins()[0]
    assert function_source(file, sha256) == (FUNCTIONS / file).read_text(encoding="utf-8")
    with pytest.raises(FunctionSourceChanged, match="frozen"):
        function_source(file, "0" * 64)
    with pytest.raises(ValueError, match="not a function source file name"):
        function_source("../search.sql", sha256)


def _bodies(url: str) -> dict[str, str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT p.proname, p.prosrc FROM pg_proc p "
            "WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'ewall%'"
        ).fetchall()
    return {str(name): str(body) for name, body in rows}


def test_downgrades_put_back_the_versions_their_revisions_replaced(
    db: DbHandle, settings: Settings
) -> None:
    """0074's downgrade puts back the citation normaliser of 0061; 0062's the names of 0057;
    0061's the citation normaliser of 0001;
    0058's puts back the
    impact top-k of 0047, 0047's that of 0045; 0041's
    re-creates the two functions it dropped from the files 0034/0035 apply; 0033's puts back
    the ranking's first version, the one 0027 applies; 0044's puts back the question's
    snowball lexemes and the rule trigger of 0001/0032."""
    sources = _source_functions()
    url = db.superuser_url

    def move(revision: str) -> dict[str, str]:
        migrate.downgrade(
            url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim, revision=revision
        )
        return _bodies(url)

    topk = "ewall_sparse_impact_topk"
    normalise = "ewall_legal_normalize"
    assert _bodies(url)[topk] == sources["search_postings.v3.sql"][topk]
    assert _bodies(url)[normalise] == sources["legal_normalize.v3.sql"][normalise]
    names = "ewall_question_names"
    assert _bodies(url)[names] == sources["document_names.v5.sql"][names]
    before_0074 = move("20261216_0073")
    assert before_0074[normalise] == sources["legal_normalize.v2.sql"][normalise]
    before_0070 = move("20261213_0069")
    assert before_0070[names] == sources["document_names.v4.sql"][names]
    before_0066 = move("20261211_0065")
    assert before_0066[names] == sources["document_names.v3.sql"][names]
    assert "ewall_court_family" not in before_0066
    before_0064 = move("20261211_0063")
    assert before_0064[names] == sources["document_names.v2.sql"][names]
    before_0062 = move("20261210_0061")
    assert before_0062[names] == sources["document_names.v1.sql"][names]
    assert "ewall_case_number" not in before_0062
    before_0061 = move("20261209_0060")
    assert before_0061[normalise] == sources["legal_normalize.v1.sql"][normalise]
    assert before_0061[normalise] == sources["legal_text.v1.sql"][normalise]
    before_0058 = move("20261208_0057")
    assert before_0058[topk] == sources["search_postings.v2.sql"][topk]
    before_0047 = move("20261203_0046")
    assert before_0047[topk] == sources["search_postings.v1.sql"][topk]
    before_0045 = move("20261203_0044")
    assert before_0045["ewall_sparse_document_rank"] == (
        sources["sparse_document_rank.v3.sql"]["ewall_sparse_document_rank"]
    )
    assert "ewall_sparse_impact_topk" not in before_0045
    before_0044 = move("20261203_0043")
    for file, name in (("legal_text.v1.sql", "ewall_query_lexemes"),
                       ("synonym_rule.v1.sql", "ewall_synonym_rule")):
        assert before_0044[name] == sources[file][name]
    assert "ewall_nl_tsvector" not in before_0044
    before_0041 = move("20261202_0040")
    assert before_0041["ewall_sparse_feedback_rank"] == (
        sources["sparse_feedback_rank.v1.sql"]["ewall_sparse_feedback_rank"]
    )
    assert before_0041["ewall_compound_parts"] == (
        sources["compound_parts.v1.sql"]["ewall_compound_parts"]
    )
    rank = "ewall_sparse_document_rank"
    assert before_0041[rank] == sources["sparse_document_rank.v2.sql"][rank]
    before_0033 = move("20261201_0032")
    assert before_0033[rank] == sources["sparse_document_rank.v1.sql"][rank]
    assert "ewall_document_totals_after_insert" not in before_0033
    migrate.upgrade(url, app_role=pg.APP_ROLE, embedding_dim=settings.embedding_dim)
    at_head = _bodies(url)
    assert rank not in at_head
    assert at_head[normalise] == sources["legal_normalize.v3.sql"][normalise]
    assert at_head[names] == sources["document_names.v5.sql"][names]
    assert at_head[topk] == sources["search_postings.v3.sql"][topk]
    assert "ewall_sparse_feedback_rank" not in at_head
    for file, name in (("legal_text.v2.sql", "ewall_query_lexemes"),
                       ("synonym_rule.v2.sql", "ewall_synonym_rule")):
        assert at_head[name] == sources[file][name]
