"""``ewall audit export --since/--until`` reads a bound finer than a microsecond as the API
reads it: rounded up, not cut (app/types.py ``rounded_up_to_microseconds``). Read by
``datetime.fromisoformat``, which cuts, --until …00.123456001Z left out a retrieval made at
…00.123456 that ``GET /v1/audit/export`` with the same until streams."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from app.audit.chain import append_retrieval
from app.cli import main
from tests.conftest import DbHandle
from tests.foundation.test_cli_errors import env  # noqa: F401 (fixture)
from tests.helpers import audit_entry

AT = datetime(2026, 3, 1, 9, 0, 0, 123456, tzinfo=UTC)
JUST_AFTER = "2026-03-01T09:00:00.123456001Z"  # 1 ns after AT
JUST_BEFORE = "2026-03-01T10:00:00,123455999+01:00"  # 1 ns before AT (a comma, as ISO 8601)
LATER = "2026-03-01T09:00:01Z"


@pytest.mark.usefixtures("env")
def test_the_cli_export_rounds_its_bounds_up_as_the_api_does(
    db: DbHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    with db.database.transaction() as conn:
        append_retrieval(conn, audit_entry(at=AT), [])

    def exported(*bounds: str) -> int:
        capsys.readouterr()
        assert main(["audit", "export", *bounds]) == 0
        return len([json.loads(line) for line in capsys.readouterr().out.splitlines()])

    assert exported("--until", JUST_AFTER) == 1  # made before that instant
    assert exported("--since", JUST_AFTER, "--until", LATER) == 0  # made before it
    assert exported("--since", JUST_BEFORE, "--until", LATER) == 1
    assert exported("--until", JUST_BEFORE) == 0
    # no next microsecond: the last instant a datetime holds (everything before it)
    assert exported("--until", "9999-12-31T23:59:59.9999999+00:00") == 1
    with pytest.raises(SystemExit) as refused:  # past year 9999 in UTC: a usage error, no 500
        main(["audit", "export", "--until", "9999-12-31T23:59:59.9999999-01:00"])
    assert refused.value.code == 2
