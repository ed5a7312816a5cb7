"""Every setting is documented in the README, and the README's two commands are the ones CI
and the Makefile actually run."""

from __future__ import annotations

import re
from pathlib import Path

from app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


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
