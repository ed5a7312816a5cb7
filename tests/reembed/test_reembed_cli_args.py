"""``ewall reembed run`` refuses, with exit status 2 and one line, the numbers it cannot use,
before it loads a model or touches the database (attack round of 2026-12-08, fourth): a
pause of ``inf`` or ``1e300`` failed with a traceback after the first committed batch
(``time.sleep`` overflows), ``nan`` was taken as no pause, and a lock timeout past
PostgreSQL's largest (2147483647 ms) was refused by the database mid-run."""

from __future__ import annotations

import pytest

from app.cli import main
from app.settings import BUNDLED_MODEL
from tests.conftest import DbHandle
from tests.foundation import test_cli_errors as _cli_errors

# the CLI's settings from the environment, as the other command-line tests set them
env = _cli_errors.env


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--pause-s", "inf"),
        ("--pause-s", "1e300"),
        ("--pause-s", "nan"),
        ("--lock-timeout-ms", "2147483648"),
        ("--batch-size", "100001"),
    ],
)
def test_numbers_it_cannot_use_are_status_2(
    env: DbHandle, capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    assert main(["reembed", "run", BUNDLED_MODEL, option, value]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and option in err, err
