"""Test inputs that live outside the repository: ../shared/corpus and Debian's Chromium.

CI has them (`.ci/run` runs with CI=true and installs Chromium), so there their absence is
a failure, never a skip; only on a developer's machine without them do the tests skip.
"""

from __future__ import annotations

import os

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require(present: bool, what: str) -> None:
    """Fail in CI, skip elsewhere, when ``what`` is missing."""
    if present:
        return
    if in_ci():
        pytest.fail(f"{what} is missing, and CI (CI=true) must have it", pytrace=False)
    pytest.skip(f"{what} is not present on this machine (CI fails here)")
