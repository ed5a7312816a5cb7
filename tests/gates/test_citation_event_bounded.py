"""What the citation gate names of a malformed citation, in its answer and in the gates
chain, is bounded and inert (app/ecli.py ``named``): control and invisible characters of an
answer's text are written as escapes, and a stretch longer than MAX_SHOWN is cut with a
mark. Stored verbatim, "ECLI:NL:HR:2019:12" + ESC "[2J" put a terminal's clear-screen into
the chain, and a 5,000-digit ordinal was cut to 100 characters with no sign of the cut."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from app.ecli import CUT_MARK, MAX_SHOWN
from app.types import CONTROL
from tests.conftest import DbHandle, Tokens
from tests.fakes.rechtspraak import FakeRechtspraak
from tests.gates.conftest import GateClient
from tests.gates.test_citations import GENEROUS, gate_events
from tests.helpers import ok


def _check(client: TestClient, auth: Tokens, text: str) -> list[str]:
    answer = ok(
        client.post("/v1/gates/citations", json={"text": text}, headers=auth("alice@firm.nl"))
    )
    assert answer["ok"] is False
    return [c["ecli"] for c in answer["citations"] if c["reason"].endswith("as written")]


def test_a_malformed_citation_is_stored_escaped_and_cut_with_a_mark(
    rechtspraak: FakeRechtspraak, gate_client: GateClient, auth: Tokens, db: DbHandle
) -> None:
    client = gate_client(rechtspraak_url=rechtspraak.url, citation_timeout_s=GENEROUS)
    draft = "Zie ECLI:NL:HR:2019:1 en 12\x1b[2J en ECLI:NL:HR:2020:1 en 12\u202e79."
    escaped = _check(client, auth, draft)
    assert escaped == ["ECLI:NL:HR:2019:12\\x1b[2J", "ECLI:NL:HR:2020:12\\u202e79"]
    long = _check(client, auth, "Zie ecli:nl:hr:2019:" + "9" * 5000 + ".")
    assert long == ["ecli:nl:hr:2019:" + "9" * (MAX_SHOWN - 17) + CUT_MARK]
    events = gate_events(db)
    assert [e["request"]["malformed"] for e in events] == [escaped, long]
    for event in events:
        stored = json.dumps(event, default=str, ensure_ascii=False)
        named = [c["ecli"] for c in event["outcome"]["citations"]]
        assert all(len(n) <= MAX_SHOWN for n in named), named
        assert not CONTROL.search(json.loads(stored)["request"]["malformed"][0])
        assert "\u202e" not in stored
