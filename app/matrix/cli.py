"""``ewall ids``: ids of the matrix stored decomposed before the upgrade that reads them in NFC
(app/matrix/rekey.py).

    ewall ids check        report them; exit 0 when there are none, 1 when any remain
    ewall ids normalize    re-key each to its NFC form, in one transaction; collisions
                           (two stored ids that are one in NFC) are reported and left as
                           stored; exit 0 when none remain, 1 when collisions remain

Both print a JSON report on stdout and a line of summary on stderr.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from typing import Any

from app.db.engine import begin_snapshot
from app.db.runtime import open_database
from app.matrix.rekey import check, normalize
from app.settings import Settings

EXIT_OK, EXIT_REMAIN = 0, 1


def register(subparsers: Any) -> None:
    ids = subparsers.add_parser(
        "ids",
        help="ids of people, clients and matters stored decomposed (jose + U+0301) before "
        "ids were read in NFC: check | normalize",
        description="Ids stored before ewall read them in Unicode NFC (\"jose\" + U+0301 "
        "for \"josé\") cannot be named by the API any more: a wall naming such a matter is "
        "refused and a PUT makes a second, NFC matter. `check` lists them; `normalize` "
        "re-keys them.",
    ).add_subparsers(dest="ids_command", required=True)
    text = (
        "list every person, client and matter id stored in another form than NFC, "
        "where (table.column) and in how many rows, and the collisions among them; writes "
        "nothing; exit 0 when there are none, 1 when any remain"
    )
    p = ids.add_parser("check", help=text, description=text)
    p.set_defaults(handler=cmd_ids_check)
    text = (
        "re-key every such id to its NFC form in every table that stores it, in one "
        "transaction with one policy version bump and one policy event (audit rows are "
        "never rewritten); two stored ids that are one in NFC (a collision) are reported "
        "and left as stored, for the firm to resolve: nothing is merged or deleted on a "
        "guess; exit 0 when none remain, 1 when collisions remain"
    )
    p = ids.add_parser("normalize", help=text, description=text)
    p.set_defaults(handler=cmd_ids_normalize)


def _print(report: dict[str, Any]) -> None:
    print(json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False))


def _summary(report: Any) -> str:
    collisions = len(report.collisions)
    parts = [f"{len(report.found)} stored id(s) not in NFC"]
    if report.rekeyed:
        parts.append(f"{len(report.rekeyed)} re-keyed (policy version {report.policy_version})")
    if collisions:
        parts.append(
            f"{collisions} collision(s) left as stored: each NFC id is stored in two "
            "spellings; decide which is the person, client or matter, move or remove the "
            "other by hand, then run `ewall ids normalize` again"
        )
    return "ewall ids: " + "; ".join(parts)


def cmd_ids_check(args: argparse.Namespace, settings: Settings) -> int:
    with open_database(settings) as database, database.engine.connect() as conn:
        begin_snapshot(conn)  # one committed state
        report = check(conn)
        conn.rollback()
    _print(report.as_dict())
    print(_summary(report), file=sys.stderr)
    return EXIT_REMAIN if report.found else EXIT_OK


def cmd_ids_normalize(args: argparse.Namespace, settings: Settings) -> int:
    with open_database(settings) as database, database.transaction() as conn:
        report = normalize(conn, actor=f"cli:{getpass.getuser()}")
    _print(report.as_dict())
    print(_summary(report), file=sys.stderr)
    return EXIT_REMAIN if report.remaining else EXIT_OK
