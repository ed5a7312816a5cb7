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
from app.settings_doc import env_name, render

ROOT = Path(__file__).resolve().parents[2]


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


def test_every_setting_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [
        f"EWALL_{name.upper()}"
        for name in Settings.model_fields
        if f"EWALL_{name.upper()}" not in readme
    ]
    assert not missing, f"undocumented settings: {missing}"


def test_nothing_else_reads_the_environment() -> None:
    offenders = []
    for path in [*ROOT.joinpath("app").rglob("*.py"), *ROOT.joinpath("connectors").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        if re.search(r"os\.environ(\.get|\[)|os\.getenv", text) and path.name != "settings.py":
            # setdefault of library switches (offline model loading) is allowed
            reads = [
                line
                for line in text.splitlines()
                if re.search(r"os\.environ(\.get|\[)|os\.getenv", line)
            ]
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
