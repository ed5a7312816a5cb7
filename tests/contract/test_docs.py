"""Every setting is documented, the documentation is the code's, and the README's two
commands are the ones CI and the Makefile actually run.

docs/settings.md is written from ``Settings`` (``make settings-doc``); the README repeats the
rows an operator needs and may name no setting that the code lacks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.cli import main
from app.settings import Settings
from app.settings_doc import env_name, readme_row, render

ROOT = Path(__file__).resolve().parents[2]
README_ROW = re.compile(r"^\| `(EWALL_[A-Z0-9_]+)` \|", re.MULTILINE)


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_setting_has_a_description() -> None:
    bare = [env_name(name) for name, info in Settings.model_fields.items() if not info.description]
    assert not bare, f"settings without a description: {bare}"


def test_the_settings_reference_is_written_from_the_code() -> None:
    committed = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert committed == render(), (
        "docs/settings.md differs from app/settings.py: run `make settings-doc` "
        "(`ewall settings doc > docs/settings.md`) and commit the result"
    )


def test_the_readme_names_no_setting_the_code_lacks() -> None:
    known = {env_name(name) for name in Settings.model_fields}
    # variables docker-compose.yml itself interpolates (database passwords) are compose's
    compose = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    known |= set(re.findall(r"\$\{(EWALL_[A-Z0-9_]+)", compose))
    named = set(re.findall(r"EWALL_[A-Z0-9_]+", _readme()))
    assert named, "the README names no setting at all: the pattern is wrong"
    assert not named - known, f"the README names settings the code lacks: {sorted(named - known)}"


def test_the_readme_setting_rows_are_the_codes() -> None:
    fields = {env_name(name): name for name in Settings.model_fields}
    rows = [line for line in _readme().splitlines() if README_ROW.match(line)]
    assert len(rows) >= 20, "the README's settings table went missing"
    stale = []
    for line in rows:
        match = README_ROW.match(line)
        assert match is not None
        field = fields.get(match.group(1))
        if field is None or line != readme_row(field):
            stale.append(f"README: {line}\ncode:   {readme_row(field) if field else '(none)'}")
    assert not stale, "README setting rows differ from app/settings.py:\n" + "\n".join(stale)


def test_the_readme_stays_a_front_door() -> None:
    """Long design notes and measurements belong in docs/; the README links them."""
    readme = _readme()
    assert len(readme.splitlines()) <= 200
    assert len(set(README_ROW.findall(readme))) <= 45
    links = re.findall(r"\]\(((?:docs|connectors|bench)/[^)#]+)\)", readme)
    assert "docs/settings.md" in links and "docs/design.md" in links
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, f"README links to missing files: {missing}"


# a read of a variable: .get, [...], getenv, or a membership test ("X" in os.environ)
READS = r"os\.environ(\.get|\[)|os\.getenv|\bin\s+os\.environ\b"


def test_nothing_else_reads_the_environment() -> None:
    offenders = []
    for path in [*ROOT.joinpath("app").rglob("*.py"), *ROOT.joinpath("connectors").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        if re.search(READS, text) and path.name != "settings.py":
            # setdefault of library switches (offline model loading) is allowed
            reads = [line for line in text.splitlines() if re.search(READS, line)]
            if reads:
                offenders.append(f"{path.relative_to(ROOT)}: {reads}")
    assert not offenders, offenders


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in readme and "make run" in readme
    assert re.search(r"^make test$", ci, re.MULTILINE)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^test: ", makefile, re.MULTILINE)
    assert "torch==2.13.0" in makefile


def test_the_settings_command_prints_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["settings", "doc"]) == 0
    assert capsys.readouterr().out == render()
