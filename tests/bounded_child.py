"""Run a snippet in a child interpreter under a generous wall-clock limit.

For tests of worst-case cost: an input is chosen so that the quadratic version needs hours
and the linear one a moment; the limit only turns a hang into a failure, so a busy machine
never fails the linear code and the quadratic code never passes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT_S = 120


def run_bounded(code: str, what: str, limit_s: int = LIMIT_S) -> str:
    """The child's stdout; fails the test when it exits non-zero or runs past the limit."""
    try:
        done = subprocess.run(  # noqa: S603 - our own interpreter and snippet
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=limit_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{what} did not finish within {limit_s} s") from None
    assert done.returncode == 0, f"{what} failed:\n{done.stderr}"
    return done.stdout
