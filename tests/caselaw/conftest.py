"""The case-law tests read the real Rechtspraak records under ../shared/corpus."""

from __future__ import annotations

import pytest

from tests.fakes.rechtspraak import rechtspraak_dir
from tests.shared_data import require


@pytest.fixture
def shared_corpus() -> None:
    """Fails in CI and skips on a developer machine when the corpus is missing."""
    require(
        (rechtspraak_dir() / "manifest.tsv").exists(), "../shared/corpus (Rechtspraak manifest)"
    )
